/**
 * `ip daddr . meta l4proto . th dport`: nft loads each part into consecutive registers and looks the
 * whole key up at once (src/evaluate.c `expr_evaluate_concat`). The key is absent or unknown when a part is;
 * random parts multiply out into every combination.
 */
import { mul } from '../../rational.ts';
import type { ExprOut, LExpr } from '../../nft-program/program.ts';
import type { Scalar } from '../../nft-program/types.ts';

export function concatExpr(parts: readonly LExpr[]): LExpr {
  return {
    types: parts.flatMap(p => p.types),
    text: parts.map(p => p.text).join(' . '),
    // Each part keeps its own facts; a part without them is open for the diff.
    facts: parts.flatMap(p => p.facts ?? p.types.map(() => ({ kind: 'open', why: `${p.text} has no facts` }) as const)),
    eval(pkt, env): ExprOut {
      let acc: { p: ReturnType<typeof mul> | null; v: Scalar[]; label: string }[] = [{ p: null, v: [], label: '' }];
      let random = false;
      let unknown: { reason: string } | null = null;
      const partial: (Scalar | null)[] = [];
      for (const part of parts) {
        const o = part.eval(pkt, env);
        if (o.kind === 'absent') return o;
        if (o.kind === 'unknown') {
          unknown ??= o;
          partial.push(...part.types.map(() => null));
          continue;
        }
        if (o.kind === 'value') partial.push(...o.v);
        else partial.push(...part.types.map(() => null));
        if (o.kind === 'value') {
          for (const a of acc) a.v.push(...o.v);
          continue;
        }
        random = true;
        const next: typeof acc = [];
        for (const a of acc)
          for (const c of o.options)
            next.push({
              p: a.p ? mul(a.p, c.p) : c.p,
              v: [...a.v, ...c.v],
              label: a.label ? `${a.label}, ${c.label}` : c.label,
            });
        acc = next;
      }
      if (unknown) return { kind: 'unknown', reason: unknown.reason, partial };
      if (!random) return { kind: 'value', v: acc[0]!.v };
      return { kind: 'choice', options: acc.map(a => ({ p: a.p!, v: a.v, label: a.label })) };
    },
  };
}
