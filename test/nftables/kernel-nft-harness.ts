/**
 * The nftables kernel fixtures (test/fixtures/kernel-nft/<name>, made by scripts/kernel-nft-oracle.py with
 * ../shared/oracle/nforacle.py --nft): the ruleset in its three input forms, the probes, and what the kernel
 * did with each (verdict, destination, seen source, the rules nftrace reported). This module turns the
 * oracle's topology into the engine's node model and outcomes into comparable strings.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { NodeConfig, PacketInput, TraceOutcome } from '../../src/engine/api.ts';
import { FIXTURES } from '../helpers/fixtures.ts';

export interface NftProbe {
  name: string;
  proto: string;
  src: string;
  sport?: number;
  dst: string;
  dport?: number;
  from: 'ext' | 'pod' | 'local';
  icmp_type?: number;
  live_sets?: string[];
}

export interface NftHit {
  family: string;
  table: string;
  chain: string;
  rule: number;
  line: number | null;
  verdict: string;
}

export interface NftOracleResult {
  probe: NftProbe;
  verdict: 'delivered' | 'local' | 'forwarded' | 'rejected' | 'dropped';
  delivered_to: string | null;
  src_seen: string | null;
  send_error: string | null;
  note: string | null;
  probe_rule_hits: NftHit[];
}

export interface NftOracleRun {
  source: string;
  kernel: string;
  options: {
    node_ip: string;
    node_ip6?: string;
    random_probes?: string[];
    local_ips?: string[];
    uplink_ips?: string[];
  };
  pods: Record<string, string>;
  results: NftOracleResult[];
}

export const FORMS = ['ruleset.nft', 'ruleset.txt', 'ruleset-a.txt', 'ruleset.json'] as const;

export interface NftFixture {
  readonly name: string;
  readonly dir: string;
  readonly probes: NftProbe[];
  readonly run: NftOracleRun;
  readonly forms: Record<(typeof FORMS)[number], string>;
}

export function nftFixtures(): NftFixture[] {
  const root = join(FIXTURES, 'kernel-nft');
  if (!existsSync(root)) return [];
  return readdirSync(root)
    .filter(d => existsSync(join(root, d, 'oracle.json')))
    .sort()
    .map(name => {
      const dir = join(root, name);
      const forms = Object.fromEntries(FORMS.map(f => [f, readFileSync(join(dir, f), 'utf8')])) as NftFixture['forms'];
      const probes = readFileSync(join(dir, 'probes.jsonl'), 'utf8')
        .split('\n')
        .filter(l => l.trim())
        .map(l => JSON.parse(l) as NftProbe);
      return {
        name,
        dir,
        probes,
        forms,
        run: JSON.parse(readFileSync(join(dir, 'oracle.json'), 'utf8')) as NftOracleRun,
      };
    });
}

/** The oracle's topology (its README, "Topology"): node on eth0, one routed veth per pod. */
export function nftNodeFor(run: NftOracleRun): NodeConfig {
  const addrs = [
    run.options.node_ip,
    ...(run.options.uplink_ips ?? []),
    ...(run.options.node_ip6 ? [run.options.node_ip6] : []),
  ];
  return {
    uplink: 'eth0',
    addresses: addrs,
    interfaces: [
      { name: 'eth0', addresses: addrs.map(a => `${a}/${a.includes(':') ? 128 : 32}`) },
      { name: 'lo', addresses: (run.options.local_ips ?? []).map(ip => `${ip}/${ip.includes(':') ? 128 : 32}`) },
      ...Object.values(run.pods).map(veth => ({ name: veth, addresses: [] })),
    ],
    routes: Object.entries(run.pods).map(([ip, veth]) => ({
      dst: `${ip}/${ip.includes(':') ? 128 : 32}`,
      iface: veth,
    })),
  };
}

export function nftPacketFor(run: NftOracleRun, p: NftProbe): PacketInput {
  const from = p.from === 'local' ? 'local' : 'outside';
  const inIface = p.from === 'pod' ? run.pods[p.src] : 'eth0';
  const protocol = p.proto === 'icmpv6' ? 'ipv6-icmp' : p.proto;
  return {
    protocol,
    src: p.src,
    ...(p.sport !== undefined && (p.proto === 'tcp' || p.proto === 'udp' || p.proto === 'sctp')
      ? { sport: p.sport }
      : {}),
    dst: p.dst,
    ...(p.dport !== undefined ? { dport: p.dport } : {}),
    from,
    ...(from === 'outside' && inIface ? { in: inIface } : {}),
    ...(p.icmp_type !== undefined ? { icmpType: p.icmp_type } : {}),
    ...(from === 'local' ? { uid: 0, gid: 0 } : {}),
  };
}

function hitText(
  h: { family?: string; table: string; chain: string; rule: number; line?: number | null; verdict: string },
  withLine: boolean,
): string {
  return `${h.family ?? '?'} ${h.table} ${h.chain} #${h.rule}${withLine ? ` line ${h.line ?? '?'}` : ''} ${h.verdict}`;
}

/** The kernel's result as one comparable line. */
export function kernelOutcome(r: NftOracleResult, withLine: boolean): string {
  const local = r.probe.from === 'local';
  const disp = r.verdict === 'delivered' || r.verdict === 'forwarded' ? (local ? 'out' : 'forwarded') : r.verdict;
  const dst = r.verdict === 'delivered' ? (r.delivered_to ?? '') : '';
  const src = r.verdict === 'delivered' || r.verdict === 'forwarded' ? (r.src_seen ?? '') : '';
  return `${disp} dst=${dst} src=${src} | ${r.probe_rule_hits.map(h => hitText(h, withLine)).join(' | ')}`;
}

/** The engine's outcome as the same kind of line. */
export function engineOutcome(o: TraceOutcome, r: NftOracleResult, withLine: boolean): string {
  const disp =
    o.disposition === 'output' || (o.disposition === 'forwarded' && r.probe.from === 'local') ? 'out' : o.disposition;
  const delivered = r.verdict === 'delivered';
  const v6 = o.packet.family === 6;
  const dst = delivered
    ? o.packet.dport !== null && r.delivered_to?.match(/:\d+$/)
      ? v6
        ? `[${o.packet.dst}]:${o.packet.dport}`
        : `${o.packet.dst}:${o.packet.dport}`
      : o.packet.dst
    : '';
  const src = disp === 'forwarded' || disp === 'out' ? o.packet.src : '';
  return `${disp} dst=${dst} src=${src} | ${o.steps.map(s => hitText({ ...s, family: s.family ?? '?' }, withLine)).join(' | ')}`;
}
