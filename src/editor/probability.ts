/**
 * Exact branch probabilities of `-m statistic` rules, as the engine computes them: iptables stores
 * round(p·2^31) and the kernel takes the branch with probability stored/2^31 (`kernelProbability`); nth
 * mode takes one packet in `every`. Shares of consecutive random rules compose as exact products.
 */
import {
  type Rational,
  type Rule,
  complement,
  formatPercent,
  formatRational,
  kernelProbability,
  rational,
  toNumber,
} from '../engine/api.ts';

export interface RandomBranch {
  readonly mode: 'random' | 'nth';
  /** The value as written (`0.50000000000`, `3`). */
  readonly text: string;
  readonly negated: boolean;
  /** The kernel's probability of taking the rule, given every other criterion holds. */
  readonly p: Rational;
}

/** The rule's `-m statistic` branch, read from its words; null when it has none or it is malformed. */
export function ruleRandomBranch(rule: Rule): RandomBranch | null {
  const spec = rule.raw.slice(rule.specStart);
  if (!/(^|\s)(-m|--match)\s+statistic(\s|$)/.test(spec)) return null;
  const every = /(!\s+)?--every\s+(\d+)/.exec(spec);
  if (/--mode\s+nth/.test(spec) || (every && !/--probability/.test(spec))) {
    const n = every ? Number(every[2]) : 0;
    if (!every || n < 1) return null;
    const p = rational(1n, BigInt(n));
    return { mode: 'nth', text: every[2]!, negated: every[1] !== undefined, p: every[1] ? complement(p) : p };
  }
  const prob = /(!\s+)?--probability\s+(\S+)/.exec(spec);
  if (!prob) return null;
  const value = Number(prob[2]);
  if (!Number.isFinite(value) || value < 0 || value > 1) return null;
  const { exact } = kernelProbability(value);
  return { mode: 'random', text: prob[2]!, negated: prob[1] !== undefined, p: prob[1] ? complement(exact) : exact };
}

/** Percentages as every view shows them (the engine's `formatPercent`: `50%`, `33.33%`, `0.000047%`). */
export const percent = formatPercent;

export function percentOf(r: Rational): string {
  return percent(toNumber(r));
}

/** `1/2` for a reduced fraction, with the kernel's 2^31 denominators written as such. */
export function exactText(r: Rational): string {
  if (r.den === 0x80000000n) return `${r.num}/2^31`;
  return formatRational(r);
}
