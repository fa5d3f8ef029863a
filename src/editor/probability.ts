/**
 * Exact branch probabilities of `-m statistic` rules, as the engine computes them: iptables stores
 * round(p·2^31) and the kernel takes the branch with probability stored/2^31 (`kernelProbability`); nth
 * mode takes one packet in `every`. Shares of consecutive random rules compose as exact products.
 */
import {
  type Rational,
  type Rule,
  formatPercent,
  formatRational,
  statisticBranch,
  type StatisticBranch,
  toNumber,
} from '../engine/api.ts';

/** A rule's random branch: the statistic module's compiled spec (matches/statistic.ts owns reading it). */
export type RandomBranch = StatisticBranch;

/** The rule's `-m statistic` branch; null when it has none or it is malformed. */
export function ruleRandomBranch(rule: Rule): RandomBranch | null {
  return statisticBranch(rule.matches);
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
