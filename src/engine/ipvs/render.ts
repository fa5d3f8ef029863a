/**
 * The virtual-server table as ipvsadm prints it (ipvsadm.c `list_all` / `print_service_entry`):
 *  - `ipvsadm -Ln`: the banner, the two title lines, `%-4s %s` protocol and address with the scheduler,
 *    ` (flags)`, ` persistent N`, and real servers as `  -> %-28s %-7s %-6d %-10u %-10u`;
 *  - `ipvsadm -Sn`: `-A -t ADDR:PORT -s SCHED [-p N] [-b FLAGS]` and `-a -t … -r ADDR:PORT -m -w W`.
 * Services and real servers are sorted as libipvs `ipvs_cmp_services` / `ipvs_cmp_dests` do when ipvsadm
 * runs without `--nosort` (including their `int` subtraction of unsigned addresses).
 */
import { parseAddr } from '../net/addr.ts';
import { type IpvsRealServer, type IpvsService, type IpvsTable, hostPort } from './types.ts';

/** `IP Virtual Server version 1.2.1 (size=4096)`: IP_VS_VERSION_CODE and the default connection table size (CONFIG_IP_VS_TAB_BITS 12). */
export const IPVS_BANNER = 'IP Virtual Server version 1.2.1 (size=4096)';

const PROTO_NUMBER = { TCP: 6, UDP: 17, SCTP: 132 } as const;
const FWD_SWITCH = { Masq: '-m', Route: '-g', Local: '-g', Tunnel: '-i' } as const;
const SERVICE_OPTION = { TCP: '-t', UDP: '-u', SCTP: '--sctp-service' } as const;

/** The address as the u32 words libipvs compares (`ntohl` of each 32-bit word). */
function words32(addr: string): number[] {
  const a = parseAddr(addr);
  if (!a) return [0];
  if (a.v === 4) return [a.n >>> 0];
  return [3n, 2n, 1n, 0n].map(i => Number((a.n >> (32n * i)) & 0xffffffffn));
}

/** `r = ntohl(a) - ntohl(b)` taken as a C `int`. */
function addrCmp(a: string, b: string): number {
  const x = words32(a);
  const y = words32(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const r = (x[i]! - y[i]!) | 0;
    if (r !== 0) return r;
  }
  return 0;
}

function family(addr: string): number {
  return addr.includes(':') ? 10 : 2;
}

export function compareServices(a: IpvsService, b: IpvsService): number {
  return (
    (a.fwmark ?? 0) - (b.fwmark ?? 0) ||
    family(a.addr) - family(b.addr) ||
    PROTO_NUMBER[a.protocol] - PROTO_NUMBER[b.protocol] ||
    addrCmp(a.addr, b.addr) ||
    a.port - b.port
  );
}

export function compareRealServers(a: IpvsRealServer, b: IpvsRealServer): number {
  return addrCmp(a.addr, b.addr) || a.port - b.port;
}

function sortedServices(table: IpvsTable): IpvsService[] {
  return [...table.services].sort(compareServices);
}

function sortedDests(s: IpvsService): IpvsRealServer[] {
  return [...s.realServers].sort(compareRealServers);
}

function flagsText(s: IpvsService): string {
  return s.schedFlags.length ? s.schedFlags.join(',') : '';
}

export function renderIpvsadmList(table: IpvsTable): string {
  const out = [
    IPVS_BANNER,
    'Prot LocalAddress:Port Scheduler Flags',
    '  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn',
  ];
  for (const s of sortedServices(table)) {
    const name = s.fwmark ? `FWM  ${s.fwmark}` : `${s.protocol.padEnd(4)} ${hostPort(s.addr, s.port)}`.slice(0, 33);
    let line = `${name} ${s.scheduler}`;
    if (flagsText(s)) line += ` (${flagsText(s)})`;
    if (s.persistent !== null) line += ` persistent ${s.persistent}`;
    out.push(line);
    for (const d of sortedDests(s)) {
      const dname = hostPort(d.addr, d.port).slice(0, d.addr.includes(':') ? undefined : 28);
      out.push(
        `  -> ${dname.padEnd(28)} ${d.forward.padEnd(7)} ${String(d.weight).padEnd(6)} ${String(d.activeConns ?? 0).padEnd(10)} ${String(d.inactiveConns ?? 0).padEnd(10)}`,
      );
    }
  }
  return out.join('\n') + '\n';
}

export function renderIpvsadmRules(table: IpvsTable): string {
  const out: string[] = [];
  for (const s of sortedServices(table)) {
    const svc = s.fwmark ? `-f ${s.fwmark}` : `${SERVICE_OPTION[s.protocol]} ${hostPort(s.addr, s.port)}`;
    let line = `-A ${svc} -s ${s.scheduler}`;
    if (s.persistent !== null) line += ` -p ${s.persistent}`;
    if (flagsText(s)) line += ` -b ${flagsText(s)}`;
    out.push(line);
    for (const d of sortedDests(s))
      out.push(`-a ${svc} -r ${hostPort(d.addr, d.port)} ${FWD_SWITCH[d.forward]} -w ${d.weight}`);
  }
  return out.join('\n') + (out.length ? '\n' : '');
}
