/**
 * Which chains differ in behaviour-relevant text. Two rules are the same when their words are the same
 * once packet/byte counters (`[p:b]`, `-c p b`) and comments (`-m comment --comment …`) are removed:
 * neither changes what a rule matches or does (`xt_comment.c` always matches). Everything else, including
 * option order, counts: a chain that differs only cosmetically is traced rather than trusted, and its
 * classes then simply compare equal.
 */
import type { Chain, Rule, Ruleset } from '../model.ts';
import { ruleKey, sameWords } from '../iptables/rule-text.ts';
import type { ChainChange } from './types.ts';

/** The rule's words without counters and comments (the front end's `ruleKey`). */
export function normalizedRule(rule: Rule): string {
  return ruleKey(rule);
}

export function chainKey(table: string, chain: string): string {
  return `${table} ${chain}`;
}

function sameRules(a: readonly Rule[], b: readonly Rule[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    // The common case, an untouched rule, costs one string comparison.
    if (sameWords(x, y)) continue;
    if (normalizedRule(x) !== normalizedRule(y)) return false;
  }
  return true;
}

function multisetDelta(a: readonly Rule[], b: readonly Rule[]): { added: number; removed: number } {
  const counts = new Map<string, number>();
  for (const r of a) counts.set(normalizedRule(r), (counts.get(normalizedRule(r)) ?? 0) + 1);
  let added = 0;
  for (const r of b) {
    const k = normalizedRule(r);
    const n = counts.get(k) ?? 0;
    if (n > 0) counts.set(k, n - 1);
    else added++;
  }
  let removed = 0;
  for (const n of counts.values()) removed += n;
  return { added, removed };
}

function compareChain(table: string, a: Chain | undefined, b: Chain | undefined): ChainChange | null {
  const base = { table, chain: (a ?? b)!.name, oldLine: a ? a.line + 1 : null, newLine: b ? b.line + 1 : null };
  if (!a) return { ...base, change: 'added', added: b!.rules.length, removed: 0 };
  if (!b) return { ...base, change: 'removed', added: 0, removed: a.rules.length };
  const policyDiffers = a.builtin && (a.policy ?? 'ACCEPT') !== (b.policy ?? 'ACCEPT');
  if (sameRules(a.rules, b.rules)) return policyDiffers ? { ...base, change: 'policy', added: 0, removed: 0 } : null;
  const delta = multisetDelta(a.rules, b.rules);
  const change =
    delta.added === 0 && delta.removed === 0 && !policyDiffers ? 'reordered' : policyDiffers ? 'policy' : 'rules';
  return { ...base, change, ...delta };
}

/** Every chain whose normalized rules or policy differ, or that exists on one side only, in table order. */
export function changedChains(oldRs: Ruleset, newRs: Ruleset): ChainChange[] {
  const out: ChainChange[] = [];
  const tables = [...new Set([...oldRs.tables.keys(), ...newRs.tables.keys()])];
  for (const t of tables) {
    const a = oldRs.tables.get(t);
    const b = newRs.tables.get(t);
    const names = [...new Set([...(a?.chains.keys() ?? []), ...(b?.chains.keys() ?? [])])];
    for (const name of names) {
      const c = compareChain(t, a?.chains.get(name), b?.chains.get(name));
      if (c) out.push(c);
    }
  }
  return out;
}

/** The normalized rule texts of a chain, for "is this rule also on the other side". */
export function ruleTextSet(chain: Chain | undefined): Set<string> {
  return new Set((chain?.rules ?? []).map(normalizedRule));
}
