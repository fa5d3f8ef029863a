/**
 * `ct state`, `ct status`, `ct mark`, `ct direction`, `ct original daddr`, `ct original proto-dst`…:
 * net/netfilter/nft_ct.c `nft_ct_get_eval`. An untracked packet has only `ct state untracked`; every other
 * key makes the rule not match (NFT_BREAK when there is no conntrack entry).
 */
import type { NftCt } from '../ast.ts';
import { packetStates } from '../../matches/conntrack.ts';
import type { PacketState } from '../../net/packet.ts';
import type { ExprOut, FieldFact, LExpr, LowerCtx } from '../../nft-program/program.ts';
import {
  CT_DIR,
  CT_STATE,
  CT_STATUS,
  type DataType,
  IPV4,
  IPV6,
  MARK,
  PROTO,
  SERVICE,
} from '../../nft-program/types.ts';

const v = (x: bigint | number): ExprOut => ({ kind: 'value', v: [BigInt(x)] });

const STATE_BITS: Record<string, number> = { INVALID: 1, ESTABLISHED: 2, RELATED: 4, NEW: 8, UNTRACKED: 64 };

function status(pkt: PacketState): number {
  let s = 0;
  const st = pkt.ct.status;
  if (st.has('EXPECTED')) s |= 1;
  if (st.has('SEEN_REPLY')) s |= 2;
  if (st.has('ASSURED')) s |= 4;
  if (st.has('CONFIRMED')) s |= 8;
  const virt = packetStates(pkt);
  if (virt.has('SNAT')) s |= 16;
  if (virt.has('DNAT')) s |= 32;
  return s;
}

function tracked(read: (p: PacketState) => ExprOut): (p: PacketState) => ExprOut {
  return p =>
    p.ct.state === 'UNTRACKED' || p.ct.state === 'INVALID'
      ? { kind: 'absent', why: `the packet has no conntrack entry (${p.ct.state})` }
      : read(p);
}

function addrOf(a: PacketState['src']): ExprOut {
  return v(a.v === 4 ? BigInt(a.n) : a.n);
}

function tuple(key: string, dir: 'original' | 'reply'): ((p: PacketState) => ExprOut) | null {
  // The reply tuple of a connection whose NAT is bound: source = the DNAT destination, destination = the SNAT source.
  const reply = dir === 'reply';
  switch (key) {
    case 'saddr':
    case 'ip saddr':
    case 'ip6 saddr':
      return p => addrOf(reply ? (p.ct.dnat?.addr ?? p.ct.origDst) : p.ct.origSrc);
    case 'daddr':
    case 'ip daddr':
    case 'ip6 daddr':
      return p => addrOf(reply ? (p.ct.snat?.addr ?? p.ct.origSrc) : p.ct.origDst);
    case 'proto-src':
      return p => {
        const x = reply ? (p.ct.dnat?.port ?? p.ct.origDport) : p.ct.origSport;
        return x === null ? { kind: 'absent', why: 'the protocol has no ports' } : v(x);
      };
    case 'proto-dst':
      return p => {
        const x = reply ? (p.ct.snat?.port ?? p.ct.origSport) : p.ct.origDport;
        return x === null ? { kind: 'absent', why: 'the protocol has no ports' } : v(x);
      };
    default:
      return null;
  }
}

export function lowerCt(e: NftCt, ctx: LowerCtx): LExpr | null {
  const text = `ct ${e.dir ? `${e.dir} ` : ''}${e.family ? `${e.family} ` : ''}${e.key}`;
  let type: DataType | null = null;
  let read: ((p: PacketState) => ExprOut) | null = null;
  switch (e.key) {
    case 'state':
      type = CT_STATE;
      read = p => v(STATE_BITS[p.ct.state] ?? 0);
      break;
    case 'status':
      type = CT_STATUS;
      read = tracked(p => v(status(p)));
      break;
    case 'mark':
      type = MARK;
      read = tracked(p => v(p.ct.mark >>> 0));
      break;
    case 'direction':
      // The evaluator follows a connection's original direction (the packet the caller describes).
      type = CT_DIR;
      read = tracked(() => v(0));
      break;
    case 'protocol':
    case 'l3proto':
      type = e.key === 'protocol' ? PROTO : null;
      read = e.key === 'protocol' ? tracked(p => v(p.proto)) : null;
      break;
    default: {
      const t = tuple(e.key, e.dir ?? 'original');
      if (t) {
        type = e.key.includes('proto-')
          ? SERVICE
          : (e.family ?? (e.key.startsWith('ip6') ? 'ip6' : e.key.startsWith('ip') ? 'ip' : ctx.family)) === 'ip6'
            ? IPV6
            : IPV4;
        read = tracked(t);
      }
    }
  }
  if (!type || !read) {
    ctx.report('not-modelled', `${text} is not modelled: rules reading it are undecided in traces`, e.range, 'warning');
    return null;
  }
  const r = read;
  return { types: [type], text, eval: pkt => r(pkt), facts: [ctFact(e, ctx.family)] };
}

/**
 * The diff's fact (nft-program/program.ts `FieldFact`). A class is one conntrack state; status, mark and direction are
 * what the class's path made them, alike for all its packets; the original tuple is the untranslated
 * packet's own fields. The reply tuple names NAT results: not cut on.
 */
function ctFact(e: NftCt, table: LowerCtx['family']): FieldFact {
  if (e.key === 'state') return { kind: 'ctstate' };
  if (e.key === 'status' || e.key === 'mark' || e.key === 'direction') return { kind: 'uniform' };
  if (e.key === 'protocol') return { kind: 'proto' };
  if ((e.dir ?? 'original') !== 'original') return { kind: 'open', why: `ct ${e.dir} ${e.key} is not cut on` };
  const key = e.key.replace(/^ip6? /, '');
  if (key === 'saddr' || key === 'daddr') {
    const fam =
      e.family ??
      (e.key.startsWith('ip6')
        ? 'ip6'
        : e.key.startsWith('ip')
          ? 'ip'
          : table === 'ip' || table === 'ip6'
            ? table
            : null);
    if (fam === null) return { kind: 'open', why: `ct original ${e.key} without a family` };
    return { kind: 'addr', field: key === 'saddr' ? 'src' : 'dst', family: fam === 'ip6' ? 6 : 4, original: true };
  }
  if (key === 'proto-src' || key === 'proto-dst')
    return { kind: 'port', field: key === 'proto-src' ? 'sport' : 'dport', protos: null, original: true };
  return { kind: 'open', why: `ct ${e.key} is not cut on` };
}
