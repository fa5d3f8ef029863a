/**
 * The nftables AST (ast.ts, from any of the three front ends) to the model the evaluator walks: tables of
 * any name and family, base chains with their hook, priority, type and policy, regular chains, and rules
 * whose statements are lowered once into programs (nft-program/program.ts). Named sets and maps are lowered first so
 * rules can look them up. Lowering never throws; what it cannot read becomes a diagnostic and an unknown.
 */
import type { Diagnostic, Range } from '../diagnostics.ts';
import type { BaseChainInfo, Chain, HookName, Rule, Ruleset, Table } from '../model.ts';
import type { NftChain, NftRuleset, NftSet, NftTable } from './ast.ts';
import { lowerExpr } from './expr/index.ts';
import type { LowerCtx, NftNamedSet } from '../nft-program/program.ts';
import { lowerElements } from './sets.ts';
import { lowerRuleProgram } from './stmt/index.ts';
import { LazyNftRule } from './lazy-rule.ts';
import { ruleSetUpdates } from './rule-source.ts';
import { type DataType, TYPES_BY_NAME } from '../nft-program/types.ts';

const HOOKS: Record<string, HookName> = {
  prerouting: 'PREROUTING',
  input: 'INPUT',
  forward: 'FORWARD',
  output: 'OUTPUT',
  postrouting: 'POSTROUTING',
};

/** Elements lowered per set at most; beyond, a diagnostic (bounded work on hostile input). */
export const MAX_SET_ELEMENTS = 2_000_000;

function typesOf(
  parts: readonly string[] | undefined,
  typeofExprs: readonly import('./ast.ts').NftExpr[] | undefined,
  ctx: LowerCtx,
  range: Range,
): DataType[] | null {
  if (parts && parts.length) {
    const out: DataType[] = [];
    for (const p of parts) {
      const t = TYPES_BY_NAME[p];
      if (!t) {
        ctx.report(
          'not-modelled',
          `set type ${p} is not modelled: lookups in this set are undecided`,
          range,
          'warning',
        );
        return null;
      }
      out.push(t);
    }
    return out;
  }
  if (typeofExprs && typeofExprs.length) return typeofExprs.flatMap(e => [...lowerExpr(e, ctx).types]);
  return null;
}

function lowerSet(s: NftSet, ctx: LowerCtx, updated: Set<string>): NftNamedSet {
  const keyTypes = typesOf(s.type, s.typeofKey, ctx, s.range) ?? [];
  const isVmap = s.map?.length === 1 && s.map[0] === 'verdict';
  const dataTypes = s.map ? (isVmap ? 'verdict' : typesOf(s.map, s.typeofData, ctx, s.range)) : null;
  if (s.elements.length > MAX_SET_ELEMENTS)
    ctx.report(
      'bad-value',
      `set ${s.name} has ${s.elements.length} elements; only the first ${MAX_SET_ELEMENTS} are read`,
      s.range,
      'warning',
    );
  const elems = keyTypes.length
    ? lowerElements(s.elements, keyTypes, s.map ? dataTypes : null, ctx, MAX_SET_ELEMENTS)
    : [];
  return { name: s.name, keyTypes, dataTypes, dynamic: s.flags.includes('dynamic') || updated.has(s.name), elems };
}

function baseInfo(c: NftChain): BaseChainInfo | undefined {
  const b = c.base;
  if (!b) return undefined;
  const inetFamily = c.family === 'ip' || c.family === 'ip6' || c.family === 'inet';
  const hook = inetFamily ? (HOOKS[b.hook] ?? b.hook) : b.hook;
  return {
    hook,
    priority: b.priority.value,
    type: b.type,
    family: c.family,
    ...(b.devices?.length ? { device: b.devices.join(',') } : {}),
  };
}

function lowerTable(
  t: NftTable,
  lineAt: (line: number) => string,
  diagnostics: Diagnostic[],
  lazy: boolean,
): { table: Table; rules: number } {
  const sets = new Map<string, NftNamedSet>();
  const ctx: LowerCtx = {
    family: t.family,
    table: t.name,
    lookupSet: name => sets.get(name),
    report: (code, message, range, severity = 'error') => diagnostics.push({ code, severity, message, range }),
  };
  // Lazily lowered rules report their diagnostics the first time only (lazy-rule.ts).
  const lazyCtx = { reporting: ctx, silent: { ...ctx, report: () => {} } };
  const updated = new Set<string>();
  for (const c of t.chains) for (const r of c.rules) for (const s of ruleSetUpdates(r)) updated.add(s);
  for (const s of t.sets) sets.set(s.name, lowerSet(s, ctx, updated));
  const chains = new Map<string, Chain>();
  let count = 0;
  for (const c of t.chains) {
    const base = baseInfo(c);
    const rules: Rule[] = c.rules.map((r, i) => {
      if (lazy) return new LazyNftRule(i + 1, t.name, c.name, r, lazyCtx, lineAt);
      return {
        index: i + 1,
        table: t.name,
        chain: c.name,
        line: r.range.start.line,
        range: r.range,
        raw: lineAt(r.range.start.line),
        counters: null,
        specStart: 0,
        ip: {},
        matches: [],
        target: null,
        comment: r.comment ?? null,
        nft: lowerRuleProgram(r, ctx),
      };
    });
    count += rules.length;
    chains.set(c.name, {
      name: c.name,
      table: t.name,
      builtin: base !== undefined,
      ...(base ? { base } : {}),
      policy: base ? (c.base?.policy === 'drop' ? 'DROP' : 'ACCEPT') : null,
      counters: null,
      line: c.range.start.line,
      range: c.range,
      rules,
    });
  }
  if (t.family === 'arp' || t.family === 'bridge' || t.family === 'netdev') {
    diagnostics.push({
      code: 'not-modelled',
      severity: 'info',
      message: `table ${t.family} ${t.name} is read but not evaluated: traces follow the ip, ip6 and inet families`,
      range: t.range,
    });
  }
  return {
    table: {
      name: t.name,
      kind: 'filter',
      family: t.family,
      nft: true,
      sets,
      line: t.range.start.line,
      range: t.range,
      chains,
    },
    rules: count,
  };
}

/** The number of lines `text.split('\n')` gives, without making them. */
function lineCount(text: string): number {
  let n = 1;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/**
 * The model of an nftables ruleset. `text` is the source (for rule lines); diagnostics are appended to
 * `diagnostics`. With `lazy`, each rule's statements are lowered when a trace first reaches the rule.
 */
export function lowerNftRuleset(
  ast: NftRuleset,
  text: string,
  file: string,
  diagnostics: Diagnostic[],
  lazy = false,
): Ruleset {
  // The text's lines, split only when a rule keeps no way to its line itself (rule-source.ts): 1.3M line
  // strings of a 101 MB script would be held while it is lowered.
  let lines: string[] | null = null;
  const lineAt = (line: number): string => (lines ??= text.split('\n'))[line] ?? '';
  const tables = new Map<string, Table>();
  let ruleCount = 0;
  for (const t of ast.tables) {
    const { table, rules } = lowerTable(t, lineAt, diagnostics, lazy);
    tables.set(`${t.family} ${t.name}`, table);
    ruleCount += rules;
  }
  const first = ast.tables.find(t => t.family === 'ip' || t.family === 'ip6');
  return {
    family: first?.family === 'ip6' ? 6 : 4,
    file,
    format: 'nft',
    tables,
    diagnostics,
    ruleCount,
    lineCount: lines ? (lines as string[]).length : lineCount(text),
  };
}
