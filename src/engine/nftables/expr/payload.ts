/**
 * Header fields: `ip saddr`, `ip6 daddr`, `tcp dport`, `th dport`, `icmp type`… (net/netfilter/nft_payload.c
 * loads the bytes; nft adds the implicit dependency — `meta nfproto ipv4`, `meta l4proto tcp` — that makes
 * the rule not match a packet without that header, src/payload.c `payload_gen_dependency`).
 */
import type { NftPayload } from '../ast.ts';
import type { PacketState } from '../../net/packet.ts';
import type { ExprOut, FieldFact, LExpr, LowerCtx } from '../../nft-program/program.ts';
import {
  type DataType,
  ICMP_CODE,
  ICMP_TYPE,
  ICMPV6_TYPE,
  INTEGER,
  IPV4,
  IPV6,
  PROTO,
  SERVICE,
  TCP_FLAGS,
} from '../../nft-program/types.ts';

type Read = (pkt: PacketState) => ExprOut;

const v = (x: bigint | number): ExprOut => ({ kind: 'value', v: [BigInt(x)] });

function needFamily(f: 4 | 6, read: (pkt: PacketState) => ExprOut): Read {
  return pkt => (pkt.family === f ? read(pkt) : { kind: 'absent', why: `not an IPv${f} packet` });
}

function needProto(protos: readonly number[], name: string, read: (pkt: PacketState) => ExprOut): Read {
  return pkt => (protos.includes(pkt.proto) ? read(pkt) : { kind: 'absent', why: `not a ${name} packet` });
}

function addr(which: 'src' | 'dst'): (pkt: PacketState) => ExprOut {
  return pkt => {
    const a = pkt[which];
    return v(a.v === 4 ? BigInt(a.n) : a.n);
  };
}

function port(which: 'sport' | 'dport', name: string): (pkt: PacketState) => ExprOut {
  return pkt => {
    const p = pkt[which];
    return p === null ? { kind: 'unknown', reason: `the packet's ${name} ${which} is not known` } : v(p);
  };
}

function known(x: number | null, what: string): ExprOut {
  return x === null ? { kind: 'unknown', reason: `the packet's ${what} was not given` } : v(x);
}

const PORT_PROTOS = [6, 17, 132, 33, 136];
const L4: Record<string, { protos: number[]; label: string }> = {
  tcp: { protos: [6], label: 'TCP' },
  udp: { protos: [17], label: 'UDP' },
  udplite: { protos: [136], label: 'UDP-Lite' },
  sctp: { protos: [132], label: 'SCTP' },
  dccp: { protos: [33], label: 'DCCP' },
};

function field(protocol: string, name: string): { type: DataType; read: Read } | null {
  if (protocol === 'ip') {
    if (name === 'saddr' || name === 'daddr')
      return { type: IPV4, read: needFamily(4, addr(name === 'saddr' ? 'src' : 'dst')) };
    if (name === 'protocol') return { type: PROTO, read: needFamily(4, p => v(p.proto)) };
    if (name === 'ttl') return { type: INTEGER, read: needFamily(4, p => known(p.ttl, 'TTL')) };
    if (name === 'length') return { type: INTEGER, read: needFamily(4, p => known(p.length, 'length')) };
    return null;
  }
  if (protocol === 'ip6') {
    if (name === 'saddr' || name === 'daddr')
      return { type: IPV6, read: needFamily(6, addr(name === 'saddr' ? 'src' : 'dst')) };
    if (name === 'nexthdr') return { type: PROTO, read: needFamily(6, p => v(p.proto)) };
    if (name === 'hoplimit') return { type: INTEGER, read: needFamily(6, p => known(p.ttl, 'hop limit')) };
    return null;
  }
  const l4 = L4[protocol];
  if (l4) {
    if (name === 'sport' || name === 'dport')
      return { type: SERVICE, read: needProto(l4.protos, l4.label, port(name, protocol)) };
    if (protocol === 'tcp' && name === 'flags')
      return { type: TCP_FLAGS, read: needProto([6], 'TCP', p => known(p.tcpFlags, 'TCP flags')) };
    return null;
  }
  if (protocol === 'th' && (name === 'sport' || name === 'dport')) {
    // `th` reads the first four bytes of the transport header whatever the protocol: ports for TCP, UDP,
    // SCTP, DCCP, UDP-Lite; for other protocols those bytes are something else, which we do not model.
    return {
      type: SERVICE,
      read: p =>
        PORT_PROTOS.includes(p.proto)
          ? port(name, 'transport')(p)
          : { kind: 'unknown', reason: `th ${name} of a protocol without ports reads other header bytes` },
    };
  }
  if (protocol === 'icmp' || protocol === 'icmpv6') {
    const six = protocol === 'icmpv6';
    const proto = six ? 58 : 1;
    if (name === 'type')
      return {
        type: six ? ICMPV6_TYPE : ICMP_TYPE,
        read: needProto([proto], protocol, p => known(p.icmpType, 'ICMP type')),
      };
    if (name === 'code')
      return { type: ICMP_CODE, read: needProto([proto], protocol, p => known(p.icmpCode, 'ICMP code')) };
    return null;
  }
  return null;
}

/** The diff's fact for a header field (nft-program/program.ts `FieldFact`): which box field it reads. */
function fact(protocol: string, name: string): FieldFact {
  if ((protocol === 'ip' || protocol === 'ip6') && (name === 'saddr' || name === 'daddr'))
    return { kind: 'addr', field: name === 'saddr' ? 'src' : 'dst', family: protocol === 'ip' ? 4 : 6 };
  if ((protocol === 'ip' && name === 'protocol') || (protocol === 'ip6' && name === 'nexthdr'))
    return { kind: 'proto' };
  if (name === 'sport' || name === 'dport')
    return { kind: 'port', field: name, protos: protocol === 'th' ? null : (L4[protocol]?.protos ?? null) };
  if ((protocol === 'icmp' || protocol === 'icmpv6') && name === 'type')
    return { kind: 'icmp', proto: protocol === 'icmp' ? 1 : 58 };
  return { kind: 'open', why: `${protocol} ${name} is not a field packet classes are cut on` };
}

export function lowerPayload(e: NftPayload, ctx: LowerCtx): LExpr | null {
  const f = field(e.protocol, e.field);
  if (!f) {
    ctx.report(
      'not-modelled',
      `${e.protocol} ${e.field} is not modelled: rules reading it are undecided in traces`,
      e.range,
      'warning',
    );
    return null;
  }
  // In an ip or ip6 table the family is implied; ip fields in an ip6 table never match.
  return {
    types: [f.type],
    text: `${e.protocol} ${e.field}`,
    eval: pkt => f.read(pkt),
    facts: [fact(e.protocol, e.field)],
  };
}
