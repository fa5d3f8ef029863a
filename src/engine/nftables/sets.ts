/**
 * Set and map contents and lookups (net/netfilter/nft_lookup.c over the set backends nft_set_hash.c,
 * nft_set_rbtree.c and nft_set_pipapo.c): an element matches when every concatenated part lies in the
 * element's interval for that part. Exact keys are indexed, so a 100k-element verdict map costs one lookup.
 * Literals are read by the type of the key they are compared with, as nft does (src/evaluate.c).
 */
import type { NftExpr } from './ast.ts';
import type { LowerCtx, NftNamedSet, SetElem, Verdict } from '../nft-program/program.ts';
import { type DataType, type Scalar, prefixInterval } from '../nft-program/types.ts';

export type Interval = readonly [Scalar, Scalar];

function inInterval(iv: Interval, v: Scalar): boolean {
  if (typeof v === 'string' || typeof iv[0] === 'string') {
    if (typeof v !== 'string' || typeof iv[0] !== 'string' || typeof iv[1] !== 'string') return false;
    return v >= iv[0] && v <= iv[1];
  }
  return v >= iv[0] && v <= (iv[1] as bigint);
}

export function elemMatches(key: readonly Interval[], v: readonly Scalar[]): boolean {
  if (key.length !== v.length) return false;
  for (let i = 0; i < key.length; i++) if (!inInterval(key[i]!, v[i]!)) return false;
  return true;
}

function exactKey(key: readonly Interval[]): string | null {
  let s = '';
  for (const [lo, hi] of key) {
    if (lo !== hi) return null;
    s += `${typeof lo}:${String(lo)}|`;
  }
  return s;
}

function valueKey(v: readonly Scalar[]): string {
  let s = '';
  for (const x of v) s += `${typeof x}:${String(x)}|`;
  return s;
}

interface SetIndex {
  readonly exact: Map<string, SetElem>;
  readonly rest: SetElem[];
  readonly size: number;
}

const indexes = new WeakMap<readonly SetElem[], SetIndex>();

function indexOf(elems: readonly SetElem[]): SetIndex {
  let ix = indexes.get(elems);
  if (ix && ix.size === elems.length) return ix;
  const exact = new Map<string, SetElem>();
  const rest: SetElem[] = [];
  for (const e of elems) {
    const k = exactKey(e.key);
    if (k === null) rest.push(e);
    else if (!exact.has(k)) exact.set(k, e);
  }
  ix = { exact, rest, size: elems.length };
  indexes.set(elems, ix);
  return ix;
}

/** The first element containing `v`, or null. */
export function lookupElems(elems: readonly SetElem[], v: readonly Scalar[]): SetElem | null {
  const ix = indexOf(elems);
  const hit = ix.exact.get(valueKey(v));
  if (hit) return hit;
  for (const e of ix.rest) if (elemMatches(e.key, v)) return e;
  return null;
}

/** Whether some element could contain a key whose null parts are unknown (a linear scan: rare inputs only). */
export function couldMatch(elems: readonly SetElem[], partial: readonly (Scalar | null)[]): boolean {
  return elems.some(
    e => e.key.length === partial.length && e.key.every((iv, i) => partial[i] === null || inInterval(iv, partial[i]!)),
  );
}

export function lookupSet(set: NftNamedSet, v: readonly Scalar[]): SetElem | null {
  return lookupElems(set.elems, v);
}

/** An interface name pattern: `eth*` covers every name starting with `eth`. */
function ifaceInterval(s: string): Interval {
  return s.endsWith('*') ? [s.slice(0, -1), `${s.slice(0, -1)}\uffff`] : [s, s];
}

/** One literal part (value, prefix or range) as an interval of its type, or null with a diagnostic. */
export function literalInterval(e: NftExpr, t: DataType, ctx: LowerCtx): Interval | null {
  if (e.kind === 'elem') return literalInterval(e.value, t, ctx);
  if (e.kind === 'value') {
    const v = t.parse(e.value);
    if (v === null) {
      ctx.report('bad-value', `'${String(e.value)}' is not a valid ${t.name}`, e.range);
      return null;
    }
    return typeof v === 'string' ? ifaceInterval(v) : [v, v];
  }
  if (e.kind === 'prefix') {
    const base = e.addr.kind === 'value' ? t.parse(e.addr.value) : null;
    const iv = base === null ? null : prefixInterval(t, base, e.len);
    if (!iv) ctx.report('bad-value', `not a ${t.name} prefix`, e.range);
    return iv;
  }
  if (e.kind === 'range') {
    const lo = literalInterval(e.low, t, ctx);
    const hi = literalInterval(e.high, t, ctx);
    return lo && hi ? [lo[0], hi[1]] : null;
  }
  ctx.report('bad-value', `expected a ${t.name} value here`, e.range);
  return null;
}

/** A key (possibly concatenated) as intervals, one per type. */
export function literalKey(e: NftExpr, types: readonly DataType[], ctx: LowerCtx): Interval[] | null {
  const inner = e.kind === 'elem' ? e.value : e;
  const parts = inner.kind === 'concat' ? inner.items : [inner];
  if (parts.length !== types.length) {
    ctx.report(
      'bad-value',
      `expected ${types.length} concatenated value${types.length === 1 ? '' : 's'} (${types.map(t => t.name).join(' . ')}), found ${parts.length}`,
      e.range,
    );
    return null;
  }
  const out: Interval[] = [];
  for (let i = 0; i < parts.length; i++) {
    const iv = literalInterval(parts[i]!, types[i]!, ctx);
    if (!iv) return null;
    out.push(iv);
  }
  return out;
}

export function formatKey(key: readonly Interval[], types: readonly DataType[]): string {
  return key
    .map(([lo, hi], i) => {
      const t = types[i]!;
      if (lo === hi) return t.format(lo);
      if (typeof lo === 'string') return t.format(`${lo}*`);
      return `${t.format(lo)}-${t.format(hi)}`;
    })
    .join(' . ');
}

/** Set or map elements (anonymous `{…}` or a named set's list): keys, and data for maps. */
export function lowerElements(
  items: readonly NftExpr[],
  keyTypes: readonly DataType[],
  data: readonly DataType[] | 'verdict' | null,
  ctx: LowerCtx,
  limit = 5_000_000,
): SetElem[] {
  const out: SetElem[] = [];
  for (const item of items) {
    if (out.length >= limit) break;
    let keyExpr: NftExpr = item;
    let dataExpr: NftExpr | null = null;
    if (item.kind === 'mapping') {
      keyExpr = item.key;
      dataExpr = item.data;
    } else if (item.kind === 'elem' && item.value.kind === 'mapping') {
      keyExpr = item.value.key;
      dataExpr = item.value.data;
    }
    if (keyExpr.kind === 'set') {
      // A nested anonymous set inside an element list is flattened (nft does the same).
      out.push(...lowerElements(keyExpr.items, keyTypes, data, ctx, limit - out.length));
      continue;
    }
    const key = literalKey(keyExpr, keyTypes, ctx);
    if (!key) continue;
    let d: SetElem['data'];
    if (data !== null) {
      if (!dataExpr) {
        ctx.report('bad-value', 'a map element needs `key : value`', item.range);
        continue;
      }
      if (data === 'verdict') {
        if (dataExpr.kind !== 'verdict') {
          ctx.report(
            'bad-value',
            'a verdict map element maps to a verdict (accept, drop, jump CHAIN, goto CHAIN…)',
            dataExpr.range,
          );
          continue;
        }
        d = { kind: dataExpr.verdict, ...(dataExpr.target !== undefined ? { chain: dataExpr.target } : {}) } as Verdict;
      } else {
        const dk = literalKey(dataExpr, data, ctx);
        if (!dk) continue;
        d = dk.map(iv => iv[0]);
      }
    }
    out.push({ key, ...(d !== undefined ? { data: d } : {}), text: formatKey(key, keyTypes) });
  }
  return out;
}
