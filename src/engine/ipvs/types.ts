/**
 * The IPVS virtual-server table as `ipvsadm` shows it: virtual services (protocol, address, port, scheduler,
 * flags, persistence) and their real servers (address, port, forwarding method, weight, connection counts).
 * One model for the three ways a table reaches packetlens: synthesized from manifests (kube-proxy's IPVS
 * mode), parsed from `ipvsadm -Sn`, parsed from `ipvsadm -Ln`.
 */
import type { Range } from '../diagnostics.ts';

export type IpvsProtocol = 'TCP' | 'UDP' | 'SCTP';

/** `IP_VS_CONN_F_FWD_MASK` methods, named as `ipvsadm -L` prints them (ipvsadm.c `fwd_name`). */
export type IpvsForward = 'Masq' | 'Local' | 'Tunnel' | 'Route';

export interface IpvsRealServer {
  readonly addr: string;
  readonly port: number;
  readonly forward: IpvsForward;
  readonly weight: number;
  /** ActiveConn / InActConn from an `ipvsadm -Ln` listing; null when unknown (synthesized, `-Sn`). */
  readonly activeConns: number | null;
  readonly inactiveConns: number | null;
  readonly range: Range | null;
}

export interface IpvsService {
  readonly protocol: IpvsProtocol;
  readonly addr: string;
  readonly port: number;
  /** Firewall-mark services (`-f`) have a mark instead of an address; kube-proxy never creates them. */
  readonly fwmark: number | null;
  readonly scheduler: string;
  /** Scheduler flags as ipvsadm names them: `sh-fallback`, `sh-port`, `mh-fallback`, `mh-port`, `flag-1`… */
  readonly schedFlags: readonly string[];
  /** `persistent N` / `-p N`: the persistence timeout in seconds, null when not persistent. */
  readonly persistent: number | null;
  readonly realServers: readonly IpvsRealServer[];
  readonly range: Range | null;
}

/**
 * Whether the real servers of each service are listed in the kernel's own list order (the order that
 * decides ties for lc/wlc and the bucket layout of sh/dh/mh). `ipvsadm -L` and `-S` sort real servers by
 * address unless given `--nosort` (ipvsadm.c `print_service_entry`), and kube-proxy adds them in Go map
 * order while the kernel puts each new one first (`__ip_vs_update_dest`: `list_add_rcu` at the head), so
 * the order is usually unknown.
 */
export type RealServerOrder = 'kernel' | 'unknown';

export interface IpvsTable {
  readonly services: readonly IpvsService[];
  readonly order: RealServerOrder;
}

/** `TCP 10.96.0.10:80`, as ipvsadm names a service (IPv6 addresses in brackets). */
export function serviceKey(s: { protocol: IpvsProtocol; addr: string; port: number; fwmark?: number | null }): string {
  if (s.fwmark) return `FWM ${s.fwmark}`;
  return `${s.protocol} ${hostPort(s.addr, s.port)}`;
}

export function hostPort(addr: string, port: number): string {
  return addr.includes(':') ? `[${addr}]:${port}` : `${addr}:${port}`;
}
