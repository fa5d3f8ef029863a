/**
 * `KEY vmap @m` / `KEY vmap { k : verdict, … }`: net/netfilter/nft_lookup.c with a verdict map — the
 * element's verdict becomes the rule's; no element for the key ends the rule (NFT_BREAK) and the chain goes
 * on. With a random key (`numgen random mod N vmap { 0 : goto a, 1 : goto b }`, kube-proxy's endpoint
 * choice) every element is a branch with its exact probability.
 */
import type { NftVmap } from '../ast.ts';
import { add, complement, isZero, ZERO } from '../../rational.ts';
import { lowerExpr } from '../expr/index.ts';
import { mapSource } from '../expr/map.ts';
import type { Alt, LowerCtx, Op, Verdict } from '../../nft-program/program.ts';
import { couldMatch, lookupElems } from '../sets.ts';
import { verdictText } from './verdict.ts';

export function lowerVmap(s: NftVmap, ctx: LowerCtx): Op {
  const key = lowerExpr(s.key, ctx);
  const src = mapSource(s.data, key, 'verdict', ctx);
  const text = `${key.text} vmap ${src?.text ?? '?'}`;
  const verdictOf = (v: readonly (bigint | string)[]): Verdict | null => {
    const hit = src ? lookupElems(src.elems, v) : null;
    return hit && hit.data && !Array.isArray(hit.data) ? (hit.data as Verdict) : null;
  };
  const show = (v: readonly (bigint | string)[]) => v.map((x, i) => key.types[i]?.format(x) ?? String(x)).join(' . ');
  return {
    text,
    ...(src ? { key: `${key.key ?? key.text} vmap ${src.key}` } : {}),
    isMatch: false,
    // For the diff: which element the key finds decides the verdict, so every element counts.
    ...(src ? { diff: { tests: [{ key, elems: src.elems, negated: false, data: true }] } } : {}),
    run(pkt, env): Alt[] {
      if (!src) return [{ verdict: { kind: 'unknown', reason: `${text}: the map could not be read` } }];
      const k = key.eval(pkt, env);
      if (k.kind === 'absent') return [{ miss: `${text}: ${k.why}` }];
      if (k.kind === 'unknown') {
        // Unknown parts cannot make a key match when no element agrees with the known ones.
        if (k.partial && !couldMatch(src.elems, k.partial))
          return [
            {
              miss: `${text}: no element for ${k.partial.map((x, i) => (x === null ? '?' : (key.types[i]?.format(x) ?? String(x)))).join(' . ')}`,
            },
          ];
        return [{ verdict: { kind: 'unknown', reason: `${text}: ${k.reason}` } }];
      }
      if (k.kind === 'value') {
        const v = verdictOf(k.v);
        return v ? [{ verdict: v }] : [{ miss: `${text}: no element for ${show(k.v)}` }];
      }
      const alts: Alt[] = [];
      let total = ZERO;
      for (const c of k.options) {
        const v = verdictOf(c.v);
        if (!v) continue;
        total = add(total, c.p);
        alts.push({ p: c.p, label: `${c.label} → ${verdictText(v)}`, verdict: v });
      }
      const rest = complement(total);
      if (!isZero(rest))
        alts.push({
          p: rest,
          label: `${key.text}: a value with no element`,
          miss: `${text}: no element for the value drawn`,
        });
      return alts;
    },
  };
}
