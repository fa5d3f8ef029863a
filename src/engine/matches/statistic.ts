/**
 * `-m statistic` (`xt_statistic.c`, `libxt_statistic.c`). Random mode is a branch point: iptables stores
 * `lround(p * 2^31)` and the kernel matches when `(get_random_u32() & 0x7FFFFFFF) < stored`, so the exact
 * probability is stored / 2^31 (0.33333333349 → 715827883 / 2^31). nth mode matches one packet in `every`;
 * for a single packet with an unknown counter that is probability 1/every.
 */
import { type Rational, complement, rational } from '../rational.ts';
import { type ParsedOption, defineMatch } from './types.ts';
import { NO_FACTS, jointAtom } from './knowledge.ts';

interface StatSpec {
  readonly negated: boolean;
  readonly mode: 'random' | 'nth';
  /** The stored 31-bit value (random) or `every` (nth). */
  readonly stored: number;
  readonly text: string;
  readonly p: Rational;
}

/** The kernel's probability for `--probability text`: lround(p * 2^31) / 2^31. */
export function kernelProbability(p: number): { stored: number; exact: Rational } {
  const stored = Math.round(p * 0x80000000);
  return { stored, exact: rational(BigInt(stored), 0x80000000n) };
}

/**
 * stored / 2^31 as a rational, shared by the rules that store the same value: kube-proxy writes a handful
 * of probabilities on 100k rules, and each is a few bigint operations. Bounded (cleared past 4096).
 */
const storedExact = new Map<number, Rational>();
function storedProbability(stored: number): Rational {
  let exact = storedExact.get(stored);
  if (!exact) {
    if (storedExact.size >= 4096) storedExact.clear();
    exact = rational(BigInt(stored), 0x80000000n);
    storedExact.set(stored, exact);
  }
  return exact;
}

export const statisticMatch = defineMatch<StatSpec>({
  name: 'statistic',
  options: [
    { name: '--mode', args: 1 },
    { name: '--probability', args: 1, negatable: true },
    { name: '--every', args: 1, negatable: true },
    { name: '--packet', args: 1 },
  ],
  compile(opts, ctx) {
    const mode = opts.find(o => o.name === '--mode')?.args[0];
    const prob = opts.find(o => o.name === '--probability');
    const every = opts.find(o => o.name === '--every');
    if (mode === 'nth' || (!mode && every)) {
      const n = Number(every?.args[0]);
      if (!every || !Number.isInteger(n) || n < 1) {
        ctx.report(every ?? null, 'bad-argument', `--mode nth needs --every N with N ≥ 1`);
        return { negated: false, mode: 'nth', stored: 1, text: '1', p: rational(1n, 1n) };
      }
      const p = rational(1n, BigInt(n));
      return { negated: every.negated, mode: 'nth', stored: n, text: String(n), p: every.negated ? complement(p) : p };
    }
    if (mode !== undefined && mode !== 'random')
      ctx.report(
        opts.find(o => o.name === '--mode') ?? null,
        'bad-argument',
        `--mode takes random or nth, not '${mode}'`,
      );
    const text = prob?.args[0] ?? '';
    const value = Number(text);
    if (!prob || text === '' || !Number.isFinite(value) || value < 0 || value > 1) {
      ctx.report(prob ?? null, 'bad-probability', `--probability needs a number from 0 to 1, not '${text}'`);
      return { negated: false, mode: 'random', stored: 0, text, p: rational(0n, 1n) };
    }
    const stored = Math.round(value * 0x80000000);
    const exact = storedProbability(stored);
    return { negated: prob.negated, mode: 'random', stored, text, p: prob.negated ? complement(exact) : exact };
  },
  test(spec) {
    if (spec.p.num === 0n) return false;
    if (spec.p.num === spec.p.den) return true;
    const label =
      spec.mode === 'random'
        ? `${spec.negated ? 'not ' : ''}random ${spec.text} (kernel: ${spec.stored}/2^31)`
        : `${spec.negated ? 'not ' : ''}every ${spec.text}th packet`;
    return { kind: 'branch', p: spec.p, label };
  },
  why: spec => `statistic ${spec.mode} ${spec.text} did not fire`,
  describe: spec =>
    spec.mode === 'random'
      ? `randomly, with probability ${spec.negated ? '1 − ' : ''}${spec.text} (the kernel uses exactly ${spec.stored}/2^31)`
      : `${spec.negated ? 'all but ' : ''}one packet in ${spec.text}`,
  // The evaluator follows both branches with their exact weights: nothing to cut on.
  diffFacts: () => NO_FACTS,
  lintAtoms: jointAtom,
  lintNature: 'varying',
});

/** A rule's random branch as the editor shows it: the compiled `-m statistic` spec, when it is well formed. */
export interface StatisticBranch {
  readonly mode: 'random' | 'nth';
  /** The value as written (`0.50000000000`, `3`). */
  readonly text: string;
  readonly negated: boolean;
  /** The kernel's probability of taking the rule, given every other criterion holds. */
  readonly p: Rational;
}

/**
 * The `-m statistic` branch among a rule's compiled match instances; null when there is none, or when its
 * options were malformed (compile then reported them and fell back to a placeholder spec).
 */
export function statisticBranch(
  matches: readonly {
    readonly module: { readonly name: string };
    readonly spec: unknown;
    readonly options: readonly ParsedOption[];
  }[],
): StatisticBranch | null {
  const inst = matches.find(m => m.module.name === 'statistic');
  if (!inst) return null;
  const spec = inst.spec as StatSpec;
  const written = inst.options.find(o => o.name === (spec.mode === 'nth' ? '--every' : '--probability'));
  const value = Number(written?.args[0]);
  const wellFormed =
    written !== undefined &&
    written.args[0] !== '' &&
    (spec.mode === 'nth' ? Number.isInteger(value) && value >= 1 : Number.isFinite(value) && value >= 0 && value <= 1);
  return wellFormed ? { mode: spec.mode, text: spec.text, negated: spec.negated, p: spec.p } : null;
}
