/**
 * `meta KEY` and its short forms (`iifname`, `oifname`, `mark`, `l4proto`…): net/netfilter/nft_meta.c
 * `nft_meta_get_eval`. A missing device reads as the empty name / index 0, not as a failed rule
 * (`nft_meta_store_ifname`).
 */
import type { NftMeta } from '../ast.ts';
import type { EvalEnv } from '../../matches/env.ts';
import type { PacketState } from '../../net/packet.ts';
import type { ExprOut, FieldFact, LExpr, LowerCtx } from '../../nft-program/program.ts';
import {
  type DataType,
  ETHERTYPE,
  GID,
  IFNAME,
  INTEGER,
  MARK,
  NFPROTO,
  PKTTYPE,
  PROTO,
  UID,
} from '../../nft-program/types.ts';

const v = (x: bigint | number): ExprOut => ({ kind: 'value', v: [BigInt(x)] });

function pkttype(pkt: PacketState, env: EvalEnv): ExprOut {
  const t = env.node.addrType(pkt.dst);
  return v(t === 'MULTICAST' ? 2 : t === 'BROADCAST' ? 1 : 0);
}

const KEYS: Record<string, { type: DataType; read: (pkt: PacketState, env: EvalEnv) => ExprOut }> = {
  iifname: { type: IFNAME, read: p => ({ kind: 'value', v: [p.inIface ?? ''] }) },
  oifname: { type: IFNAME, read: p => ({ kind: 'value', v: [p.outIface ?? ''] }) },
  // The kernel compares interface indexes, resolved from the names when the ruleset was loaded.
  iif: { type: IFNAME, read: p => ({ kind: 'value', v: [p.inIface ?? ''] }) },
  oif: { type: IFNAME, read: p => ({ kind: 'value', v: [p.outIface ?? ''] }) },
  l4proto: { type: PROTO, read: p => v(p.proto) },
  nfproto: { type: NFPROTO, read: p => v(p.family === 4 ? 2 : 10) },
  protocol: { type: ETHERTYPE, read: p => v(p.family === 4 ? 0x0800 : 0x86dd) },
  mark: { type: MARK, read: p => v(p.mark >>> 0) },
  pkttype: { type: PKTTYPE, read: pkttype },
  skuid: {
    type: UID,
    read: p => (p.uid === null ? { kind: 'absent', why: 'the packet has no local socket' } : v(p.uid)),
  },
  skgid: {
    type: GID,
    read: p => (p.gid === null ? { kind: 'absent', why: 'the packet has no local socket' } : v(p.gid)),
  },
  length: {
    type: INTEGER,
    read: p => (p.length === null ? { kind: 'unknown', reason: 'the packet length was not given' } : v(p.length)),
  },
  nftrace: { type: INTEGER, read: () => v(0) },
};

/**
 * The diff's facts (nft-program/program.ts `FieldFact`). The family, the packet type (cut by destination at multicast
 * and broadcast) and nftrace are the same for every packet of a class; sockets and lengths are not fields.
 */
const FACTS: Record<string, FieldFact> = {
  iifname: { kind: 'iface', dir: 'in' },
  iif: { kind: 'iface', dir: 'in' },
  oifname: { kind: 'iface', dir: 'out' },
  oif: { kind: 'iface', dir: 'out' },
  l4proto: { kind: 'proto' },
  nfproto: { kind: 'uniform' },
  protocol: { kind: 'uniform' },
  mark: { kind: 'mark', mask: 0xffffffffn },
  pkttype: { kind: 'uniform' },
  nftrace: { kind: 'uniform' },
};

/** The names nft accepts for meta keys, including the short forms it prints. */
export function metaKey(key: string): string {
  return key === 'nfproto' || key === 'l4proto' ? key : key.replace(/^meta /, '');
}

export function lowerMeta(e: NftMeta, ctx: LowerCtx): LExpr | null {
  const k = KEYS[metaKey(e.key)];
  if (!k) {
    ctx.report(
      'not-modelled',
      `meta ${e.key} is not modelled: rules reading it are undecided in traces`,
      e.range,
      'warning',
    );
    return null;
  }
  const key = metaKey(e.key);
  return {
    types: [k.type],
    text: `meta ${e.key}`,
    eval: (pkt, env) => k.read(pkt, env),
    facts: [FACTS[key] ?? { kind: 'open', why: `meta ${key} is not a field packet classes are cut on` }],
  };
}
