/**
 * IP protocol numbers and names as iptables and /etc/protocols spell them (IANA "Protocol Numbers"), and
 * which protocols carry ports. Below the parsers and the evaluator: both read them, neither owns them.
 */
export const PROTO = { icmp: 1, tcp: 6, udp: 17, ipv6icmp: 58, sctp: 132, all: 0 } as const;

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

// A Map, not an object: looking a word up in an object made each `-p tcp` of a 320k-rule dump a string-table
// lookup, and `-p constructor` found Object.prototype's.
const PROTO_NUMBERS = new Map<string, number>(
  Object.entries({
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
  }),
);

/** Protocol by name (as /etc/protocols and iptables accept) or number; null when unknown. */
export function protoNumber(text: string): number | null {
  const lower = text.toLowerCase();
  const byName = PROTO_NUMBERS.get(lower);
  if (byName !== undefined) return byName;
  if (/^\d{1,3}$/.test(text) && Number(text) <= 255) return Number(text);
  return null;
}

export function hasPorts(proto: number): boolean {
  return proto === 6 || proto === 17 || proto === 132 || proto === 33 || proto === 136;
}
