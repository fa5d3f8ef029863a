/**
 * Exact probabilities. Branch points in netfilter are `-m statistic` rules whose kernel probability is a
 * dyadic rational (k / 2^31, see matches/statistic.ts) or 1/every for nth mode, so every outcome probability
 * is an exact rational and outcome sums can be checked to be exactly 1.
 */
export interface Rational {
  readonly num: bigint;
  readonly den: bigint;
}

export const ONE: Rational = { num: 1n, den: 1n };
export const ZERO: Rational = { num: 0n, den: 1n };

function gcd(a: bigint, b: bigint): bigint {
  let x = a < 0n ? -a : a;
  let y = b < 0n ? -b : b;
  // A power-of-two side (every statistic probability is k / 2^31, so nearly every denominator here is
  // dyadic): the gcd is the other side's lowest set bit, capped by it — no Euclid on 300-bit numbers.
  if (y > 0n && (y & (y - 1n)) === 0n) {
    if (x === 0n) return y;
    const low = x & -x;
    return low < y ? low : y;
  }
  while (y !== 0n) {
    const r = x % y;
    x = y;
    y = r;
  }
  return x;
}

export function rational(num: bigint, den: bigint): Rational {
  if (den === 0n) throw new RangeError('zero denominator');
  const g = gcd(num, den) || 1n;
  const sign = den < 0n ? -1n : 1n;
  return { num: (sign * num) / g, den: (sign * den) / g };
}

export function mul(a: Rational, b: Rational): Rational {
  if (a.den === 1n && a.num === 1n) return b;
  if (b.den === 1n && b.num === 1n) return a;
  return rational(a.num * b.num, a.den * b.den);
}

export function add(a: Rational, b: Rational): Rational {
  return rational(a.num * b.den + b.num * a.den, a.den * b.den);
}

export function complement(a: Rational): Rational {
  return rational(a.den - a.num, a.den);
}

export function isZero(a: Rational): boolean {
  return a.num === 0n;
}

export function equals(a: Rational, b: Rational): boolean {
  return a.num === b.num && a.den === b.den;
}

/** For a denominator 2^k past 2^64: k - 64 (a few distinct values recur: products of 2^31). */
const shifts = new Map<bigint, bigint>();
function dyadicShift(d: bigint): bigint {
  let s = shifts.get(d);
  if (s === undefined) {
    s = BigInt(d.toString(2).length - 65);
    if (shifts.size > 1000) shifts.clear();
    shifts.set(d, s);
  }
  return s;
}

export function toNumber(a: Rational): number {
  // A dyadic denominator up to 2^64: Number(num) rounds num's mantissa exactly as Number(num << (64 - k))
  // would, and dividing by a power of two is exact, so this equals the fixed-point form below, bit for bit.
  const d = a.den;
  if ((d & (d - 1n)) === 0n && a.num >= 0n) {
    if (d <= 18446744073709551616n) return Number(a.num) / Number(d);
    // Past 2^64 the division below is a right shift (both floor a non-negative quotient).
    return Number(a.num >> dyadicShift(d)) / 2 ** 64;
  }
  // Fixed-point division keeps full double precision even when the denominator is a product of many
  // 2^31 terms, far beyond what Number(den) can hold.
  const scaled = (a.num << 64n) / a.den;
  return Number(scaled) / 2 ** 64;
}

export function format(a: Rational): string {
  return a.den === 1n ? a.num.toString() : `${a.num}/${a.den}`;
}
