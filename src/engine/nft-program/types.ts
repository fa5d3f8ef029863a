/**
 * nftables data types (src/datatype.c, src/ct.c, src/meta.c, src/proto.c in the nftables repository): how a
 * literal the user wrote (`10.0.0.0`, `tcp`, `established`, `"eth0"`, `echo-request`) becomes the value the
 * kernel compares in its registers, and back for the trace. Values are bigints (registers) except interface
 * names, which nft compares as strings (a trailing `*` is a prefix wildcard).
 */
import { icmpTypeByName } from '../matches/icmp.ts';
import { parseAddr, formatIPv4, formatIPv6 } from '../net/addr.ts';
import { protoName, protoNumber } from '../net/proto.ts';

export type Scalar = bigint | string;

export interface DataType {
  readonly name: string;
  /** Bit width of the register value (0 for strings). */
  readonly bits: number;
  /** A bitmask type: a list on the right means "any of these bits" (nft(8) RELATIONAL EXPRESSIONS). */
  readonly bitmask?: boolean;
  /** A literal of this type, or null when it is not one. */
  parse(v: string | number | boolean): Scalar | null;
  format(v: Scalar): string;
}

function int(v: string | number | boolean): bigint | null {
  if (typeof v === 'boolean') return v ? 1n : 0n;
  if (typeof v === 'number') return Number.isInteger(v) && v >= 0 ? BigInt(v) : null;
  const s = v.trim();
  if (/^0x[0-9a-f]+$/i.test(s) || /^\d+$/.test(s)) return BigInt(s);
  return null;
}

function symbolic(name: string, bits: number, table: Record<string, number>, bitmask = false): DataType {
  const rev = new Map(Object.entries(table).map(([k, n]) => [BigInt(n), k]));
  return {
    name,
    bits,
    bitmask,
    parse: v =>
      typeof v === 'string' && table[v.toLowerCase()] !== undefined ? BigInt(table[v.toLowerCase()]!) : int(v),
    format(v) {
      if (typeof v === 'string') return v;
      if (rev.has(v)) return rev.get(v)!;
      if (!bitmask) return String(v);
      const names = [...rev.entries()].filter(([b]) => b !== 0n && (v & b) === b).map(([, n]) => n);
      return names.length ? names.join(',') : `0x${v.toString(16)}`;
    },
  };
}

function integer(name: string, bits: number, hex = false): DataType {
  return {
    name,
    bits,
    parse: int,
    format: v => (typeof v === 'string' ? v : hex ? `0x${v.toString(16).padStart(8, '0')}` : String(v)),
  };
}

export const IPV4: DataType = {
  name: 'ipv4_addr',
  bits: 32,
  parse(v) {
    if (typeof v !== 'string') return null;
    const a = parseAddr(v);
    return a && a.v === 4 ? BigInt(a.n) : null;
  },
  format: v => (typeof v === 'string' ? v : formatIPv4(Number(v))),
};

export const IPV6: DataType = {
  name: 'ipv6_addr',
  bits: 128,
  parse(v) {
    if (typeof v !== 'string') return null;
    const a = parseAddr(v.replace(/^\[|\]$/g, ''));
    return a && a.v === 6 ? a.n : null;
  },
  format: v => (typeof v === 'string' ? v : formatIPv6(v)),
};

/** /etc/services names nft accepts in rulesets it prints (a few; numbers always work). */
const SERVICES: Record<string, number> = {
  ssh: 22,
  http: 80,
  https: 443,
  domain: 53,
  smtp: 25,
  ftp: 21,
  telnet: 23,
  ntp: 123,
  bootps: 67,
  bootpc: 68,
  'http-alt': 8080,
  imap: 143,
  imaps: 993,
  pop3: 110,
  pop3s: 995,
  submission: 587,
  ldap: 389,
  snmp: 161,
  'domain-s': 853,
  mysql: 3306,
  postgresql: 5432,
  dhcpv6_client: 546,
  'dhcpv6-client': 546,
  'dhcpv6-server': 547,
  mdns: 5353,
  microsoft_ds: 445,
  'microsoft-ds': 445,
  rsync: 873,
};

export const SERVICE: DataType = {
  name: 'inet_service',
  bits: 16,
  parse: v => (typeof v === 'string' && SERVICES[v] !== undefined ? BigInt(SERVICES[v]!) : int(v)),
  format: v => String(v),
};

export const PROTO: DataType = {
  name: 'inet_proto',
  bits: 8,
  parse(v) {
    if (typeof v === 'number') return int(v);
    if (typeof v !== 'string') return null;
    const n = protoNumber(v);
    return n === null ? null : BigInt(n);
  },
  format: v => (typeof v === 'string' ? v : protoName(Number(v))),
};

export const IFNAME: DataType = {
  name: 'ifname',
  bits: 0,
  parse: v => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : null),
  format: v => `"${String(v)}"`,
};

export const MARK = integer('mark', 32, true);
export const INTEGER = integer('integer', 64);
export const UID = symbolic('uid', 32, { root: 0 });
export const GID = symbolic('gid', 32, { root: 0 });

// include/uapi/linux/netfilter/nf_conntrack_common.h: NF_CT_STATE_BIT(IP_CT_ESTABLISHED) = 1 << 1, …
export const CT_STATE = symbolic(
  'ct_state',
  32,
  { invalid: 1, established: 2, related: 4, new: 8, untracked: 64 },
  true,
);
export const CT_STATUS = symbolic(
  'ct_status',
  32,
  { expected: 1, 'seen-reply': 2, assured: 4, confirmed: 8, snat: 16, dnat: 32, dying: 512 },
  true,
);
export const CT_DIR = symbolic('ct_dir', 8, { original: 0, reply: 1 });
export const NFPROTO = symbolic('nf_proto', 8, { ipv4: 2, ipv6: 10 });
export const ETHERTYPE = symbolic('ether_type', 16, { ip: 0x0800, ip6: 0x86dd, arp: 0x0806, vlan: 0x8100 });
export const PKTTYPE = symbolic('pkt_type', 8, { host: 0, unicast: 0, broadcast: 1, multicast: 2, other: 3 });
export const TCP_FLAGS = symbolic(
  'tcp_flag',
  8,
  { fin: 1, syn: 2, rst: 4, psh: 8, ack: 16, urg: 32, ecn: 64, cwr: 128 },
  true,
);
// include/uapi/linux/rtnetlink.h RTN_*
export const FIB_ADDRTYPE = symbolic('fib_addrtype', 32, {
  unspec: 0,
  unicast: 1,
  local: 2,
  broadcast: 3,
  anycast: 4,
  multicast: 5,
  blackhole: 6,
  unreachable: 7,
  prohibit: 8,
});
export const BOOLEAN = symbolic('boolean', 1, { exists: 1, missing: 0, true: 1, false: 0 });

// nft's own names (src/proto.c icmp_type_tbl, icmp6_type_tbl), which differ from iptables' for ICMPv6 ND.
const NFT_ICMP: Record<string, number> = {
  'echo-reply': 0,
  'destination-unreachable': 3,
  'source-quench': 4,
  redirect: 5,
  'echo-request': 8,
  'router-advertisement': 9,
  'router-solicitation': 10,
  'time-exceeded': 11,
  'parameter-problem': 12,
  'timestamp-request': 13,
  'timestamp-reply': 14,
  'info-request': 15,
  'info-reply': 16,
  'address-mask-request': 17,
  'address-mask-reply': 18,
};
const NFT_ICMPV6: Record<string, number> = {
  'destination-unreachable': 1,
  'packet-too-big': 2,
  'time-exceeded': 3,
  'parameter-problem': 4,
  'echo-request': 128,
  'echo-reply': 129,
  'mld-listener-query': 130,
  'mld-listener-report': 131,
  'mld-listener-done': 132,
  'mld-listener-reduction': 132,
  'nd-router-solicit': 133,
  'nd-router-advert': 134,
  'nd-neighbor-solicit': 135,
  'nd-neighbor-advert': 136,
  'nd-redirect': 137,
  'router-renumbering': 138,
  'ind-neighbor-solicit': 141,
  'ind-neighbor-advert': 142,
  'mld2-listener-report': 143,
};

function icmpType(v6: boolean): DataType {
  return {
    name: v6 ? 'icmpv6_type' : 'icmp_type',
    bits: 8,
    parse(v) {
      if (typeof v !== 'string') return int(v);
      if (/^\d+$/.test(v)) return BigInt(v);
      const own = (v6 ? NFT_ICMPV6 : NFT_ICMP)[v];
      if (own !== undefined) return BigInt(own);
      const c = icmpTypeByName(v, v6);
      return c && c[1] === 0 && c[2] === 255 ? BigInt(c[0]) : null;
    },
    format(v) {
      const names = v6 ? NFT_ICMPV6 : NFT_ICMP;
      return Object.keys(names).find(k => BigInt(names[k]!) === v) ?? String(v);
    },
  };
}
export const ICMP_TYPE = icmpType(false);
export const ICMPV6_TYPE = icmpType(true);
export const ICMP_CODE = symbolic('icmp_code', 8, {
  'net-unreachable': 0,
  'host-unreachable': 1,
  'prot-unreachable': 2,
  'port-unreachable': 3,
  'net-prohibited': 9,
  'host-prohibited': 10,
  'admin-prohibited': 13,
  'frag-needed': 4,
});

/** Types by the names `type …` declarations use (src/datatype.c). */
export const TYPES_BY_NAME: Readonly<Record<string, DataType>> = {
  ipv4_addr: IPV4,
  ipv6_addr: IPV6,
  inet_service: SERVICE,
  inet_proto: PROTO,
  ifname: IFNAME,
  mark: MARK,
  integer: INTEGER,
  ct_state: CT_STATE,
  ct_status: CT_STATUS,
  ct_dir: CT_DIR,
  nf_proto: NFPROTO,
  pkt_type: PKTTYPE,
  tcp_flag: TCP_FLAGS,
  fib_addrtype: FIB_ADDRTYPE,
  icmp_type: ICMP_TYPE,
  icmpv6_type: ICMPV6_TYPE,
  icmp_code: ICMP_CODE,
  uid: UID,
  gid: GID,
  ether_type: ETHERTYPE,
  boolean: BOOLEAN,
  iface_index: IFNAME,
  dscp: integer('dscp', 6),
  ecn: integer('ecn', 2),
};

/** A prefix `addr/len` of a type as the interval of register values it covers. */
export function prefixInterval(t: DataType, base: Scalar, len: number): [Scalar, Scalar] | null {
  if (typeof base === 'string' || t.bits === 0 || len < 0 || len > t.bits) return null;
  const host = (1n << BigInt(t.bits - len)) - 1n;
  return [base & ~host, (base & ~host) | host];
}
