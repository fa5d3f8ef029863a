/**
 * What a comparison keeps while it explores, and how much (issue 12: memory under 1 GB for any input up to
 * 100 MB, in the CLI and in the editor's worker, where `process.memoryUsage` does not exist: the engine
 * also runs in a browser, so the budgets count what is kept instead of asking the runtime).
 *
 * A change in a rule every Service's packets cross (kube-proxy's KUBE-MARK-MASQ) changes thousands of
 * classes whose fates repeat: the 17 classes of one Service share their fates (ten endpoints, each with an
 * exact probability of up to a hundred digits) and their responsible rules. Before, each class kept its
 * own copies and every post-processing pass re-serialised them as keys: 17,000 changes held 0.3 GB and the
 * CLI peaked at 1.6 GB. Now equal values are kept once (`share`) and keys name them by number (`id`).
 */
import type { ClassChange } from './types.ts';

/** Changed classes a report keeps at most, weighed by their fates and rules (`weightOf`), by default. */
export const DEFAULT_MAX_RETAINED = 500_000;
/**
 * Rules the proof looks at (refine.ts `checkClass`, one per rule it evaluates per class and side) before a
 * comparison stops, by default. Classes each bounded, their work is not: a changed chain of 79,000 rules
 * (every Service of two manifest sets changed) has each class look at most of it, 10,000 classes took 160 s.
 */
export const DEFAULT_MAX_WORK = 20_000_000;
/** Packet classes a comparison traces at most, by default. */
export const DEFAULT_MAX_CLASSES = 10_000;

/**
 * A change's share of the report: one for the class, one per fate on either side and per responsible rule.
 * Shared values are counted in full for every change that names them: the budget bounds what the report
 * costs once printed (`--json` writes each change's fates out), not only what it holds in memory.
 */
export function weightOf(c: Pick<ClassChange, 'old' | 'new' | 'oldRules' | 'newRules'>): number {
  return 1 + c.old.length + c.new.length + c.oldRules.length + c.newRules.length;
}

/** Equal plain values kept once, each with a number that stands for its content in keys. */
export class Shared {
  private readonly byText = new Map<string, { value: unknown; id: number }>();
  private readonly ids = new Map<unknown, number>();

  /** The kept value equal to `value` (the first one seen), so that equal fates and rule lists are one object. */
  share<T extends object>(value: T): T {
    const known = this.ids.get(value);
    if (known !== undefined) return value;
    const text = JSON.stringify(value);
    const hit = this.byText.get(text);
    if (hit) return hit.value as T;
    const id = this.byText.size;
    this.byText.set(text, { value, id });
    this.ids.set(value, id);
    return value;
  }

  /** The number of a value `share` returned: equal numbers, equal content. */
  id(value: object): number {
    const known = this.ids.get(value);
    if (known !== undefined) return known;
    return this.ids.get(this.share(value))!;
  }
}

/** A key for a change's content (group, aspects, fates, responsible rules) from shared values' numbers. */
export function sharedChangeKey(shared: Shared, c: ClassChange): string {
  const g = c.group;
  const group = g.kind === 'service' ? `s ${g.name}` : `c ${g.table} ${g.chain}`;
  return [
    group,
    c.aspects.join(','),
    shared.id(c.old),
    shared.id(c.new),
    shared.id(c.oldRules),
    shared.id(c.newRules),
  ].join('|');
}
