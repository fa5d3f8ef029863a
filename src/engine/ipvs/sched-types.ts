/**
 * What a scheduler evaluation is asked and answers. An answer is a set of *worlds*: when the outcome depends
 * on state that files cannot show (the order of the kernel's real-server list), each world states its
 * condition and the trace turns the conditions into stated assumptions; inside a world, the picks carry
 * exact probabilities that add up to 1.
 */
import type { Addr } from '../net/addr.ts';
import type { Rational } from '../rational.ts';
import type { IpvsRealServer, IpvsService, RealServerOrder } from './types.ts';

export interface ScheduleClient {
  readonly src: Addr;
  readonly sport: number | null;
  readonly dst: Addr;
  readonly dport: number | null;
}

export interface ScheduleRequest {
  readonly service: IpvsService;
  readonly client: ScheduleClient;
  readonly order: RealServerOrder;
  /**
   * lblc / lblcr keep a cache from destination address to real server; `empty` assumes this is the first
   * connection to the address since the entry expired, so the scheduler picks afresh. Default `unknown`.
   */
  readonly localityCache?: 'empty' | 'unknown';
}

export interface SchedulePick {
  /** null: the scheduler finds no destination; IPVS answers ICMP port unreachable (`ip_vs_leave`). */
  readonly server: IpvsRealServer | null;
  readonly probability: Rational;
  readonly why: string;
}

export interface ScheduleWorld {
  /** null when the world holds whatever the unknown state is. */
  readonly condition: string | null;
  readonly picks: readonly SchedulePick[];
}

export type ScheduleResult =
  | {
      readonly kind: 'decided';
      readonly scheduler: string;
      /** How the scheduler decides, with the kernel source it follows. */
      readonly summary: string;
      readonly worlds: readonly ScheduleWorld[];
      /** Assumptions every world rests on (connection counts, rotation position), stated. */
      readonly assumptions: readonly string[];
    }
  | { readonly kind: 'unknown'; readonly scheduler: string; readonly reason: string };

/** A scheduler whose choice is fixed once the real-server list order and the counters are known. */
export interface OrderedPicker {
  /** The chosen real server (index into `servers`), or null, with the reason. */
  pick(servers: readonly IpvsRealServer[], req: ScheduleRequest): { index: number | null; why: string };
  readonly summary: string;
  /** How a world's condition reads when the list order is unknown. */
  readonly tie: 'first-of-ties' | 'hash';
}

export function rsName(rs: IpvsRealServer): string {
  return rs.addr.includes(':') ? `[${rs.addr}]:${rs.port}` : `${rs.addr}:${rs.port}`;
}

/** The overhead lc/wlc compare: `activeconns * 256 + inactconns` (include/net/ip_vs.h `ip_vs_dest_conn_overhead`). */
export function connOverhead(rs: IpvsRealServer): number {
  return (rs.activeConns ?? 0) * 256 + (rs.inactiveConns ?? 0);
}
