/**
 * The packet as the evaluator sees it at one point of its path. It is a plain mutable record that is copied
 * at every branch point (statistic, unknown), so each path owns its own state.
 */
import type { Addr, Family } from '../net/addr.ts';

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

export const PROTO = { icmp: 1, tcp: 6, udp: 17, ipv6icmp: 58, sctp: 132, all: 0 } as const;

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

export function protoName(n: number): string {
  return PROTO_NAMES[n] ?? String(n);
}

const PROTO_NAMES: Record<number, string> = {
  0: 'all',
  1: 'icmp',
  2: 'igmp',
  4: 'ipip',
  6: 'tcp',
  17: 'udp',
  33: 'dccp',
  41: 'ipv6',
  47: 'gre',
  50: 'esp',
  51: 'ah',
  58: 'ipv6-icmp',
  89: 'ospf',
  112: 'vrrp',
  132: 'sctp',
  136: 'udplite',
};

const PROTO_NUMBERS: Record<string, number> = {
  all: 0,
  icmp: 1,
  igmp: 2,
  ipip: 4,
  ipencap: 4,
  tcp: 6,
  udp: 17,
  dccp: 33,
  ipv6: 41,
  gre: 47,
  esp: 50,
  ah: 51,
  icmpv6: 58,
  'ipv6-icmp': 58,
  icmp6: 58,
  ospf: 89,
  vrrp: 112,
  sctp: 132,
  udplite: 136,
  mh: 135,
  'ipv6-mh': 135,
};

/** Protocol by name (as /etc/protocols and iptables accept) or number; null when unknown. */
export function protoNumber(text: string): number | null {
  const lower = text.toLowerCase();
  const byName = PROTO_NUMBERS[lower];
  if (byName !== undefined) return byName;
  if (/^\d{1,3}$/.test(text) && Number(text) <= 255) return Number(text);
  return null;
}

export function hasPorts(proto: number): boolean {
  return proto === 6 || proto === 17 || proto === 132 || proto === 33 || proto === 136;
}
