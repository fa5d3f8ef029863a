/**
 * What a rule's target means for the rules after it in the same chain, as far as the linter needs to know.
 * A target *terminates* the chain for the packets it takes when the kernel returns a verdict instead of
 * XT_CONTINUE (ip_tables.c `ipt_do_table`): the standard verdicts, RETURN and gotos, and the extensions whose
 * module says so (`lintEffect` in src/engine/targets/). A jump to a declared chain, and an extension the engine
 * does not model, may change anything.
 */
import type { Table } from '../model.ts';
import { STANDARD_TARGETS, TARGETS } from '../targets/registry.ts';
import type { TargetName } from './refs.ts';

export type TargetEffectClass = 'terminates' | 'passive' | 'mutates' | 'none';

/** How a rule's target affects the rest of its chain, for the packets the rule takes. */
export function classifyTarget(table: Table, t: TargetName | null): TargetEffectClass {
  if (!t) return 'none';
  if (t.kind === 'goto') return 'terminates';
  if (STANDARD_TARGETS.has(t.name)) return 'terminates';
  // A declared chain wins over an extension of the same name, as in iptables: a jump may change anything.
  if (table.chains.has(t.name)) return 'mutates';
  return TARGETS.get(t.name)?.lintEffect ?? 'mutates';
}
