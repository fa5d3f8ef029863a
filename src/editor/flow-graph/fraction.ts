/**
 * Probabilities as a reader takes them in at a glance: a short fraction near the exact one (`≈ 1/3` for
 * kube-proxy's 715827883/2^31), found by continued fractions; the exact fraction stays for the hover.
 */
import { type Rational, ZERO, add, rational, toNumber } from '../../engine/api.ts';

/** `715827883/2147483648` (or `1`, `0`) back into a fraction; null when the text is not one. */
export function parseExact(text: string): Rational | null {
  const m = /^(\d+)(?:\/(\d+))?$/.exec(text.trim());
  if (!m) return null;
  const den = BigInt(m[2] ?? '1');
  return den === 0n ? null : rational(BigInt(m[1]!), den);
}

export function sumExact(list: readonly Rational[]): Rational {
  return list.reduce(add, ZERO);
}

/** Largest denominator of a fraction shown as `1/n`-like text. */
const MAX_DEN = 64n;
/** How close (relative) a short fraction must be to stand for the exact one. */
const CLOSE = 1e-4;

/**
 * `1/2` when the fraction is that short already; `≈ 1/3` when a fraction with a denominator of at most 64 is
 * within 0.01 % of it; '' otherwise (the percentage then says it).
 */
export function approxFraction(r: Rational): string {
  if (r.den <= MAX_DEN) return r.den === 1n ? String(r.num) : `${r.num}/${r.den}`;
  const x = toNumber(r);
  // Continued-fraction convergents h/k of x, the best short approximations.
  let [h0, h1, k0, k1] = [0n, 1n, 1n, 0n];
  let num = r.num;
  let den = r.den;
  let best = '';
  for (let i = 0; i < 64 && den !== 0n; i++) {
    const a = num / den;
    [num, den] = [den, num - a * den];
    [h0, h1] = [h1, a * h1 + h0];
    [k0, k1] = [k1, a * k1 + k0];
    if (k1 > MAX_DEN) break;
    const v = Number(h1) / Number(k1);
    if (x !== 0 && Math.abs(v - x) / x <= CLOSE) {
      best = `≈ ${h1}/${k1}`;
      break;
    }
  }
  return best;
}
