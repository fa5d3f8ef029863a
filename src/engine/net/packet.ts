/**
 * The packet as the evaluator sees it at one point of its path. It is a plain mutable record that is copied
 * at every branch point (statistic, unknown), so each path owns its own state.
 */
import type { Addr, Family } from './addr.ts';

export type CtState = 'NEW' | 'ESTABLISHED' | 'RELATED' | 'INVALID' | 'UNTRACKED';

/** Conntrack's view: the original tuple and the NAT bindings made for this connection so far. */
export interface ConntrackState {
  state: CtState;
  readonly origSrc: Addr;
  readonly origDst: Addr;
  readonly origSport: number | null;
  readonly origDport: number | null;
  /** Reply-direction source after DNAT (the new destination), null while no DNAT is bound. */
  dnat: { addr: Addr; port: number | null } | null;
  snat: { addr: Addr; port: number | null } | null;
  /** `--ctstatus` flags we model: SEEN_REPLY, ASSURED, CONFIRMED, EXPECTED. */
  status: Set<string>;
  mark: number;
  /**
   * The conntrack helper of the connection's master (`-m helper`, xt_helper.c): a name for an expected
   * connection (FTP data: `ftp`), '' when there is none (no master, or a master without a helper), null
   * when nobody said (RELATED and ESTABLISHED packets whose packet did not state it).
   */
  masterHelper: string | null;
  /** Set once a nat table has bound the destination / source manip for the connection. */
  dstManipDone: boolean;
  srcManipDone: boolean;
}

export interface PacketState {
  readonly family: Family;
  proto: number;
  src: Addr;
  dst: Addr;
  sport: number | null;
  dport: number | null;
  /** TCP flag bits as in the header: FIN 1, SYN 2, RST 4, PSH 8, ACK 16, URG 32, ECE 64, CWR 128. */
  tcpFlags: number | null;
  icmpType: number | null;
  icmpCode: number | null;
  /** Total length of the IP packet; null when the caller did not say (length matches are then unknown). */
  length: number | null;
  ttl: number | null;
  fragment: boolean;
  inIface: string | null;
  outIface: string | null;
  /** Bridge ports when the packet crossed a bridge with br_netfilter; null when it was not bridged. */
  physIn: string | null;
  physOut: string | null;
  mark: number;
  ct: ConntrackState;
  uid: number | null;
  gid: number | null;
  /** SCTP chunk type of the first chunk (1 = INIT for a new association). */
  sctpChunk: number | null;
  /**
   * Set when a hook interceptor rewrote the packet and sent it out again (IPVS: `skb->ipvs_property`);
   * interceptors do not take such a packet a second time (intercept.ts).
   */
  sentBy?: string;
}

export function clonePacket(p: PacketState): PacketState {
  return { ...p, ct: { ...p.ct, status: new Set(p.ct.status) } };
}
