/**
 * `KEY map @m` / `KEY map { k : v, … }` as a value (`dnat to ip daddr map { … }`, `meta mark set … map …`):
 * net/netfilter/nft_lookup.c with NFTA_LOOKUP_DREG. No element for the key ends the rule (NFT_BREAK).
 */
import type { NftMapLookup } from '../ast.ts';
import type { ExprOut, LExpr, LowerCtx, NftNamedSet, SetElem } from '../../nft-program/program.ts';
import { lookupElems, lowerElements } from '../sets.ts';
import type { DataType, Scalar } from '../../nft-program/types.ts';

export function mapSource(
  e: NftMapLookup['data'],
  key: LExpr,
  data: readonly DataType[] | 'verdict',
  ctx: LowerCtx,
): { elems: SetElem[]; text: string; key: string; types: readonly DataType[] | 'verdict' } | null {
  if (e.kind === 'setref') {
    const s: NftNamedSet | undefined = ctx.lookupSet(e.name);
    if (!s) {
      ctx.report('unknown-set', `map @${e.name} is not defined in this table`, e.range);
      return null;
    }
    return { elems: s.elems, text: `@${e.name}`, key: `@${e.name}`, types: s.dataTypes ?? data };
  }
  if (e.kind === 'set') {
    const elems = lowerElements(e.items, key.types, data, ctx);
    return { elems, text: '{ … }', key: `{ ${elems.map(elemText).join(', ')} }`, types: data };
  }
  ctx.report('bad-value', 'expected @name or { key : value, … } after map/vmap', e.range);
  return null;
}

/** An element with its data, as nft lists it (`10.0.0.1 . tcp . 80 : goto svc`): a map's identity. */
export function elemText(e: SetElem): string {
  const d = e.data;
  if (d === undefined) return e.text;
  if (Array.isArray(d)) return `${e.text} : ${d.map(String).join(' . ')}`;
  const v = d as { kind: string; chain?: string };
  return `${e.text} : ${v.kind}${v.chain !== undefined ? ` ${v.chain}` : ''}`;
}

function pick(elems: readonly SetElem[], v: readonly Scalar[]): readonly Scalar[] | null {
  const hit = lookupElems(elems, v);
  return hit && Array.isArray(hit.data) ? (hit.data as readonly Scalar[]) : null;
}

/** `data` are the value types the consumer expects (e.g. ipv4_addr . inet_service for `dnat to … map`). */
export function lowerMapLookup(e: NftMapLookup, key: LExpr, data: readonly DataType[], ctx: LowerCtx): LExpr | null {
  const src = mapSource(e.data, key, data, ctx);
  if (!src) return null;
  const types = src.types === 'verdict' ? data : src.types;
  const text = `${key.text} map ${src.text}`;
  return {
    types,
    text,
    key: `${key.key ?? key.text} map ${src.key}`,
    facts: types.map(() => ({ kind: 'open', why: `${text} is a looked-up value` }) as const),
    lookup: { key, elems: src.elems, negated: false, data: true },
    eval(pkt, env): ExprOut {
      const k = key.eval(pkt, env);
      if (k.kind === 'absent' || k.kind === 'unknown') return k;
      if (k.kind === 'value') {
        const d = pick(src.elems, k.v);
        return d
          ? { kind: 'value', v: d }
          : { kind: 'absent', why: `${text}: no element for ${k.v.map(String).join(' . ')}` };
      }
      // A random key (numgen): each choice maps on; choices without an element end the rule.
      const options = k.options.flatMap(c => {
        const d = pick(src.elems, c.v);
        return d ? [{ p: c.p, v: d, label: c.label }] : [];
      });
      return { kind: 'choice', options };
    },
  };
}
