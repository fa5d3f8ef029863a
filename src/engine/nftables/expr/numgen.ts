/**
 * `numgen random mod N [offset K]` and `numgen inc mod N [offset K]`: net/netfilter/nft_numgen.c.
 * `random` is `reciprocal_scale(get_random_u32(), N) + K`: value K+i for i < N with probability
 * |{r : floor(r·N / 2^32) = i}| / 2^32 — exactly 1/N when N divides 2^32, and the exact count otherwise.
 * `inc` is a shared counter (`atomic_inc_return`) whose position no ruleset shows: each value is one of N
 * outcomes, 1/N of the connections over a full cycle, and the trace says so.
 */
import type { NftNumgen } from '../ast.ts';
import { type Rational, rational } from '../../rational.ts';
import type { ExprOut, LExpr, LowerCtx } from '../../nft-program/program.ts';
import { INTEGER } from '../../nft-program/types.ts';

const TWO32 = 1n << 32n;

/** How many 32-bit r give floor(r·n / 2^32) = i: ceil(2^32·(i+1)/n) − ceil(2^32·i/n). */
function share(i: bigint, n: bigint): bigint {
  const ceil = (a: bigint) => (a + n - 1n) / n;
  return ceil(TWO32 * (i + 1n)) - ceil(TWO32 * i);
}

export const MAX_NUMGEN_BRANCHES = 4096;

/**
 * The exact share of each value of `numgen MODE mod n`: value `offset + i` has `shares[i]` (the editor's
 * hovers show them; the evaluator forks with the same weights). Null when n is outside 1…MAX_NUMGEN_BRANCHES.
 */
export function numgenShares(mode: 'random' | 'inc', n: number): Rational[] | null {
  if (!Number.isInteger(n) || n < 1 || n > MAX_NUMGEN_BRANCHES) return null;
  const N = BigInt(n);
  return Array.from({ length: n }, (_, i) =>
    mode === 'random' ? rational(share(BigInt(i), N), TWO32) : rational(1n, N),
  );
}

export function lowerNumgen(e: NftNumgen, ctx: LowerCtx): LExpr | null {
  const n = e.mod;
  const text = `numgen ${e.mode} mod ${n}${e.offset ? ` offset ${e.offset}` : ''}`;
  if (!Number.isInteger(n) || n < 1 || n > MAX_NUMGEN_BRANCHES) {
    ctx.report('not-modelled', `${text}: only 1 to ${MAX_NUMGEN_BRANCHES} branches are followed`, e.range, 'warning');
    return null;
  }
  // The same numgen (kube-proxy writes one per Service) shares one branch list.
  const key = `${e.mode}/${n}/${e.offset}`;
  const cached = shared.get(key);
  if (cached) return cached;
  const N = BigInt(n);
  const options = Array.from({ length: n }, (_, i) => {
    const p = e.mode === 'random' ? rational(share(BigInt(i), N), TWO32) : rational(1n, N);
    const val = BigInt(e.offset + i);
    const label =
      e.mode === 'random'
        ? `${text} = ${val}`
        : `${text} = ${val} (a shared counter: each value takes 1/${n} of the connections over a cycle)`;
    return { p, v: [val] as const, label };
  });
  const out: ExprOut = { kind: 'choice', options };
  // Every packet draws from the same exact distribution: a class need not be cut on it (the trace forks).
  const expr: LExpr = { types: [INTEGER], text, eval: () => out, facts: [{ kind: 'uniform' }] };
  if (shared.size >= 256) shared.clear(); // bounded: kube-proxy needs a handful (one per endpoint count)
  shared.set(key, expr);
  return expr;
}

const shared = new Map<string, LExpr>();
