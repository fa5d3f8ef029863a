/**
 * Which chains differ in behaviour-relevant text. Two rules are the same when their words are the same
 * once packet/byte counters (`[p:b]`, `-c p b`) and comments (`-m comment --comment …`) are removed:
 * neither changes what a rule matches or does (`xt_comment.c` always matches). Everything else, including
 * option order, counts: a chain that differs only cosmetically is traced rather than trusted, and its
 * classes then simply compare equal.
 */
import type { Chain, Rule, Ruleset, Table } from '../model.ts';
import type { NftNamedSet } from '../nft-program/program.ts';
import { elemText } from '../nftables/expr/map.ts';
import { ruleKey, ruleWords, sameWords } from '../iptables/rule-text.ts';
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
  // Rules written alike are alike: only the rest are normalized (a reordered 10k-rule chain stays cheap).
  const pending = new Map<string, number>();
  for (const r of a) pending.set(ruleWords(r), (pending.get(ruleWords(r)) ?? 0) + 1);
  const restB: Rule[] = [];
  for (const r of b) {
    const n = pending.get(ruleWords(r)) ?? 0;
    if (n > 0) pending.set(ruleWords(r), n - 1);
    else restB.push(r);
  }
  const restA: Rule[] = [];
  for (const r of a) {
    const n = pending.get(ruleWords(r)) ?? 0;
    if (n > 0) {
      pending.set(ruleWords(r), n - 1);
      restA.push(r);
    }
  }
  return normalizedDelta(restA, restB);
}

function normalizedDelta(a: readonly Rule[], b: readonly Rule[]): { added: number; removed: number } {
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

/**
 * A table by the name rules and trace steps use: iptables' tables are keyed by it; nftables' by `family
 * name`, so the first nft table of that name answers (two families' tables of one name are rare; where
 * both exist, callers that must see every one use `tablesNamed`).
 */
export function tableByName(rs: Ruleset, name: string): Table | undefined {
  return rs.tables.get(name) ?? tablesNamed(rs, name)[0];
}

export function tablesNamed(rs: Ruleset, name: string): Table[] {
  const direct = rs.tables.get(name);
  if (direct) return [direct];
  return [...rs.tables.values()].filter(t => t.nft && t.name === name);
}

/** A named set's content as nft lists it (types, dynamic, elements with their data, in order). */
function setSignature(s: NftNamedSet): string {
  const data =
    s.dataTypes === null ? '' : s.dataTypes === 'verdict' ? 'verdict' : s.dataTypes.map(t => t.name).join('.');
  return [s.keyTypes.map(t => t.name).join('.'), data, s.dynamic, ...s.elems.map(elemText)].join('\n');
}

/** The named sets and maps of an nft table whose contents differ from the other side's (or exist on one side). */
function changedSets(a: Table | undefined, b: Table | undefined): Set<string> {
  const out = new Set<string>();
  const names = new Set([...(a?.sets?.keys() ?? []), ...(b?.sets?.keys() ?? [])]);
  for (const n of names) {
    const x = a?.sets?.get(n);
    const y = b?.sets?.get(n);
    if (!x || !y || setSignature(x) !== setSignature(y)) out.add(n);
  }
  return out;
}

/** The changed sets a chain's rules look up (`@name`), on either side. */
function setsUsed(sets: ReadonlySet<string>, ...chains: (Chain | undefined)[]): string[] {
  if (!sets.size) return [];
  const used = new Set<string>();
  for (const c of chains)
    for (const r of c?.rules ?? []) {
      const key = ruleKey(r);
      for (const n of sets) if (mentionsSet(key, n)) used.add(n);
    }
  return [...used];
}

/** Whether a rule's text looks up the named set `@name` (not a longer name that starts with it). */
export function mentionsSet(ruleText: string, name: string): boolean {
  const at = `@${name}`;
  for (let i = ruleText.indexOf(at); i >= 0; i = ruleText.indexOf(at, i + 1)) {
    const next = ruleText[i + at.length];
    if (next === undefined || !/[\w./-]/.test(next)) return true;
  }
  return false;
}

/** nftables: whether a base chain's registration (hook, priority, type) differs. */
function baseDiffers(a: Chain, b: Chain): boolean {
  const x = a.base;
  const y = b.base;
  if (!x || !y) return !!x !== !!y;
  return x.hook !== y.hook || x.priority !== y.priority || x.type !== y.type || x.device !== y.device;
}

/** Every chain whose normalized rules or policy differ, or that exists on one side only, in table order. */
export function changedChains(oldRs: Ruleset, newRs: Ruleset): ChainChange[] {
  const out: ChainChange[] = [];
  const tables = [...new Set([...oldRs.tables.keys(), ...newRs.tables.keys()])];
  for (const t of tables) {
    const a = oldRs.tables.get(t);
    const b = newRs.tables.get(t);
    const nft = (a ?? b)!.nft === true;
    // nftables rules name their table without the family (as trace steps do); the report says the family.
    const name = nft ? (a ?? b)!.name : t;
    const extra = nft ? { family: (a ?? b)!.family ?? 'ip' } : {};
    const sets = nft ? changedSets(a, b) : new Set<string>();
    const names = [...new Set([...(a?.chains.keys() ?? []), ...(b?.chains.keys() ?? [])])];
    for (const chainName of names) {
      const x = a?.chains.get(chainName);
      const y = b?.chains.get(chainName);
      const c = compareChain(name, x, y);
      const used = setsUsed(sets, x, y);
      const base = nft && x && y && baseDiffers(x, y);
      if (c) out.push({ ...c, ...extra, ...(used.length ? { sets: used } : {}) });
      else if (base) out.push({ ...compareBase(name, x, y), ...extra, ...(used.length ? { sets: used } : {}) });
      else if (used.length) out.push({ ...compareBase(name, x!, y!), change: 'set', ...extra, sets: used });
    }
  }
  return out;
}

function compareBase(table: string, a: Chain, b: Chain): ChainChange {
  return { table, chain: a.name, change: 'hook', oldLine: a.line + 1, newLine: b.line + 1, added: 0, removed: 0 };
}

/** The normalized rule texts of a chain, for "is this rule also on the other side". */
export function ruleTextSet(chain: Chain | undefined): Set<string> {
  return new Set((chain?.rules ?? []).map(normalizedRule));
}

/** The rules of a chain that the other side's chain lacks (compared as normalized text). */
export function differingRules(
  oldRs: Ruleset,
  newRs: Ruleset,
  table: string,
  chain: string,
): { side: 0 | 1; rule: Rule }[] {
  const out: { side: 0 | 1; rule: Rule }[] = [];
  const sides = [oldRs, newRs] as const;
  sides.forEach((rs, side) => {
    const other = ruleTextSet(tableByName(sides[1 - side]!, table)?.chains.get(chain));
    for (const r of tableByName(rs, table)?.chains.get(chain)?.rules ?? [])
      if (!other.has(normalizedRule(r))) out.push({ side: side as 0 | 1, rule: r });
  });
  return out;
}
