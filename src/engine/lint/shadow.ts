/**
 * Rules that can never match because an earlier rule of the same chain takes every packet they would:
 * the earlier rule has a subset of the later rule's criteria (see criteria.ts), decides the same way for
 * the same packet every time (no random, rate or `recent` match), and ends the chain for the packets it
 * takes (ACCEPT, DROP, RETURN, a goto, REJECT, DNAT, …). A rule in between that changes the packet or its
 * connection (MARK, CONNMARK, CT, a jump into another chain) ends the argument for earlier rules that read
 * such state, since a packet may reach the later rule changed.
 */
import type { Chain, Rule, Table } from '../model.ts';
import { classifyTarget } from './effects.ts';
import { type RuleCriteria, ruleCriteria } from './criteria.ts';
import { targetNameOf } from '../iptables/rule-node.ts';

export interface Shadowing {
  /** The rule that never matches. */
  readonly rule: Rule;
  /** The earlier rule that takes all of its packets. */
  readonly by: Rule;
}

interface Shadower {
  readonly rule: Rule;
  readonly atoms: readonly string[];
}

/** Beyond this many atoms, subsets are not enumerated; earlier rules are compared one by one. */
const MAX_ENUMERATED_ATOMS = 10;
/** At most this many earlier rules are compared one by one with a rule of many atoms. */
const MAX_LINEAR = 256;

function isSubset(small: readonly string[], big: readonly string[]): boolean {
  let j = 0;
  for (const a of small) {
    while (j < big.length && big[j]! < a) j++;
    if (j >= big.length || big[j] !== a) return false;
    j++;
  }
  return true;
}

function findShadower(atoms: readonly string[], maps: readonly Map<string, Shadower>[]): Shadower | null {
  let best: Shadower | null = null;
  const consider = (s: Shadower | undefined) => {
    if (s && (!best || s.rule.index < best.rule.index)) best = s;
  };
  if (atoms.length <= MAX_ENUMERATED_ATOMS) {
    const n = atoms.length;
    for (let mask = 0; mask < 1 << n; mask++) {
      const parts: string[] = [];
      for (let k = 0; k < n; k++) if (mask & (1 << k)) parts.push(atoms[k]!);
      const key = parts.join('\n');
      for (const m of maps) consider(m.get(key));
    }
    return best;
  }
  for (const m of maps) {
    let seen = 0;
    for (const s of m.values()) {
      if (++seen > MAX_LINEAR) break;
      if (isSubset(s.atoms, atoms)) consider(s);
    }
  }
  return best;
}

export function shadowedRules(table: Table, chain: Chain): Shadowing[] {
  const found: Shadowing[] = [];
  const rules = chain.rules;
  if (rules.length < 2) return found;
  // Earlier terminating rules by their atoms: `fixed` ones read only what no target changes.
  const fixed = new Map<string, Shadower>();
  const stateful = new Map<string, Shadower>();
  for (let r = 0; r < rules.length; r++) {
    const rule = rules[r]!;
    const target = targetNameOf(rule);
    const effect = classifyTarget(table, target);
    const hasShadowers = fixed.size > 0 || stateful.size > 0;
    // The last rule cannot shadow anything; without earlier candidates it cannot be shadowed either.
    if (!hasShadowers && (effect !== 'terminates' || r === rules.length - 1)) continue;
    const criteria: RuleCriteria = ruleCriteria(rule);
    if (hasShadowers) {
      const by = findShadower(criteria.atoms, [fixed, stateful]);
      if (by) {
        found.push({ rule, by: by.rule });
        continue;
      }
    }
    if (effect === 'mutates') stateful.clear();
    // A rule whose answer can change for the same packet (random, rate, recent, unmodelled) shadows nothing.
    if (effect !== 'terminates' || criteria.nature === 'varying') continue;
    const key = criteria.atoms.join('\n');
    const into = criteria.nature === 'fixed' ? fixed : stateful;
    if (!into.has(key)) into.set(key, { rule, atoms: criteria.atoms });
  }
  return found;
}
