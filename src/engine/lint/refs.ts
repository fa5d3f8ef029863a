/**
 * The chain graph as written: which rule jumps (`-j`) or goes (`-g`) to which chain, read from the target
 * names the parser recorded, so that neither the editor nor the linter has to compile a 300k-rule dump's
 * rules to know who references whom.
 */
import { type TargetRef, targetNameOf } from '../iptables/rule-node.ts';
import type { Rule, Table } from '../model.ts';
import { STANDARD_TARGETS } from '../targets/registry.ts';

/** A rule's `-j NAME` / `-g NAME` as written: `start` is at the option, `end` after the name. */
export type TargetName = TargetRef;

/** One rule that jumps or goes to a chain; `nameStart`/`nameEnd` delimit the chain name on the line. */
export interface ChainReference {
  readonly rule: Rule;
  readonly kind: 'jump' | 'goto';
  readonly line: number;
  readonly nameStart: number;
  readonly nameEnd: number;
}

/**
 * Every reference to a chain of this table, by chain name, in file order of the referencing chains. Names
 * that are standard verdicts are left out; names of undeclared chains are kept (the parser reports them).
 */
export function chainReferences(table: Table): Map<string, ChainReference[]> {
  const refs = new Map<string, ChainReference[]>();
  for (const chain of table.chains.values()) {
    for (const rule of chain.rules) {
      const t = targetNameOf(rule);
      if (!t || (t.kind === 'jump' && STANDARD_TARGETS.has(t.name))) continue;
      if (t.kind === 'jump' && !table.chains.has(t.name) && isExtensionName(t.name)) continue;
      let list = refs.get(t.name);
      if (!list) refs.set(t.name, (list = []));
      list.push({ rule, kind: t.kind, line: rule.line, nameStart: t.end - t.name.length, nameEnd: t.end });
    }
  }
  return refs;
}

/** Target extensions are written in capitals without dashes (DNAT, MASQUERADE, NFQUEUE); chains rarely are. */
function isExtensionName(name: string): boolean {
  return /^[A-Z0-9_]+$/.test(name);
}
