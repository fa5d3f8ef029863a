/**
 * The linter for nftables rulesets, beside the iptables one (lint.ts): it reads the nftables AST the model
 * was lowered from (ast.ts), because the lowered rules are programs whose jumps and set lookups are no
 * longer visible as data. Findings:
 * - `unused-chain`: a regular chain no rule and no verdict-map element names (its rules never run);
 * - `unreachable-chain`: a regular chain that is named, but only from chains no base chain reaches;
 * - `jump-loop`: jumps and gotos (rules, anonymous and named verdict maps) that lead back to a chain on the
 *   way. Reachable from a base chain, the kernel refuses the ruleset: nft 1.0.6 on Linux answered
 *   "Could not process rule: Too many links" (ELOOP) for `chain in { type filter hook input priority 0;
 *   jump a }` with a → b → a, and loaded the same loop when no base chain jumps into it (checked in a
 *   private netns with `unshare -rn nft -f`, 2026-11-25). The first is an error, the second a warning.
 * - `unused-set`: a named set or map no rule, map or other set refers to as `@name`;
 * - `shadowed-rule`: a rule an earlier rule of the same chain takes every packet from (literal case: the
 *   earlier rule has only deterministic match statements, each of which the later rule repeats, and ends
 *   with a verdict that leaves the chain; no rule in between changes the packet or jumps).
 * Pure and bounded (iterative walks; at most MAX_SHADOW_PAIRS rule comparisons).
 */
import { type Diagnostic, clipWords } from '../diagnostics.ts';
import type { Range } from '../diagnostics.ts';
import type { NftChain, NftExpr, NftRule, NftRuleset, NftStmt, NftTable } from '../nftables/ast.ts';

export interface NftLintDiagnostic extends Diagnostic {
  readonly code: 'unused-chain' | 'unreachable-chain' | 'jump-loop' | 'unused-set' | 'shadowed-rule';
  /** `family name` of the table. */
  readonly table: string;
  /** The chain or set the finding is about. */
  readonly name: string;
  /** For `shadowed-rule`: the 0-based line of the earlier rule that takes the packets. */
  readonly relatedLine: number | null;
  readonly relatedMessage: string | null;
}

const MAX_SHADOW_PAIRS = 2_000_000;

interface Edge {
  readonly to: string;
  readonly range: Range;
}

/** Chain targets and set names an expression or statement names. */
class Refs {
  readonly sets = new Set<string>();
  constructor(private readonly t: NftTable) {}

  /** The chains a statement can jump or go to (named verdict maps: their elements). */
  edges(s: NftStmt, out: Edge[]): void {
    if (s.kind === 'verdict' && (s.verdict === 'jump' || s.verdict === 'goto') && s.target !== undefined)
      out.push({ to: s.target, range: s.range });
    if (s.kind === 'vmap') this.verdicts(s.data, out);
    this.exprSets(s);
  }

  private verdicts(e: NftExpr, out: Edge[]): void {
    if (e.kind === 'setref') {
      const m = this.t.sets.find(x => x.name === e.name);
      for (const el of m?.elements ?? []) this.verdicts(el, out);
    } else if (e.kind === 'set') for (const i of e.items) this.verdicts(i, out);
    else if (e.kind === 'mapping') this.verdicts(e.data, out);
    else if (e.kind === 'elem') this.verdicts(e.value, out);
    else if (e.kind === 'verdict' && (e.verdict === 'jump' || e.verdict === 'goto') && e.target !== undefined)
      out.push({ to: e.target, range: e.range });
  }

  /** Every `@name` under a statement (a bounded walk over its operands). */
  exprSets(node: unknown): void {
    const stack: unknown[] = [node];
    let steps = 0;
    while (stack.length && steps++ < 100_000) {
      const n = stack.pop();
      if (typeof n !== 'object' || n === null) continue;
      if (Array.isArray(n)) {
        stack.push(...(n as unknown[]));
        continue;
      }
      const o = n as { kind?: unknown; name?: unknown; set?: unknown };
      if (o.kind === 'setref' && typeof o.name === 'string') this.sets.add(o.name);
      if (o.kind === 'setop' && typeof o.set === 'string') this.sets.add(o.set);
      for (const [k, v] of Object.entries(n)) if (k !== 'range' && typeof v === 'object') stack.push(v);
    }
  }
}

export function lintNft(rs: NftRuleset): NftLintDiagnostic[] {
  const out: NftLintDiagnostic[] = [];
  for (const t of rs.tables) lintTable(t, out);
  return out.sort(
    (a, b) => a.range.start.line - b.range.start.line || a.range.start.character - b.range.start.character,
  );
}

function lintTable(t: NftTable, out: NftLintDiagnostic[]): void {
  const key = `${t.family} ${t.name}`;
  const refs = new Refs(t);
  const edges = new Map<string, Edge[]>();
  const named = new Set<string>();
  // Each rule's statements are read once, for its jumps and for the shadowing check: a large script's rules
  // read them again from the text on each access (nftables/rule-source.ts). The shadowing findings keep
  // their place in the list, after the others.
  const shadows: NftLintDiagnostic[] = [];
  let budget = MAX_SHADOW_PAIRS;
  for (const c of t.chains) {
    const list: Edge[] = [];
    const stmts = c.rules.map(r => r.stmts);
    for (const ss of stmts) for (const s of ss) refs.edges(s, list);
    edges.set(c.name, list);
    for (const e of list) named.add(e.to);
    budget = shadowed(key, c, stmts, shadows, budget);
  }
  // Named maps' elements name chains even when no rule uses the map.
  for (const s of t.sets) {
    refs.exprSets(s.elements);
    const list: Edge[] = [];
    for (const el of s.elements) new Refs(t).edges({ kind: 'vmap', key: el, data: el, range: s.range }, list);
    for (const e of list) named.add(e.to);
  }
  const reachable = reach(t, edges);
  for (const c of t.chains) {
    if (c.base) continue;
    const n = c.rules.length;
    const body = n === 0 ? 'it is empty and unused' : `its ${n} rule${n === 1 ? '' : 's'} never run`;
    if (!named.has(c.name))
      out.push(finding('unused-chain', key, c.name, c.range, `chain ${c.name} is never jumped to: ${body}`));
    else if (!reachable.has(c.name))
      out.push(
        finding(
          'unreachable-chain',
          key,
          c.name,
          c.range,
          `chain ${c.name} is reached only from chains no base chain reaches: ${n === 0 ? 'it is empty' : body}`,
        ),
      );
  }
  loops(t, key, edges, reachable, out);
  for (const s of t.sets)
    if (!refs.sets.has(s.name))
      out.push(
        finding(
          'unused-set',
          key,
          s.name,
          s.range,
          `${s.map ? 'map' : 'set'} ${s.name} is never used: no rule or map refers to @${s.name}`,
        ),
      );
  for (const f of shadows) out.push(f);
}

function finding(
  code: NftLintDiagnostic['code'],
  table: string,
  name: string,
  range: Range,
  message: string,
  severity: Diagnostic['severity'] = 'warning',
): NftLintDiagnostic {
  return { code, severity, message: clipWords(message), range, table, name, relatedLine: null, relatedMessage: null };
}

/** Chains reachable from the table's base chains (iterative). */
function reach(t: NftTable, edges: ReadonlyMap<string, readonly Edge[]>): Set<string> {
  const seen = new Set<string>();
  const todo = t.chains.filter(c => c.base).map(c => c.name);
  while (todo.length) {
    const c = todo.pop()!;
    if (seen.has(c)) continue;
    seen.add(c);
    for (const e of edges.get(c) ?? []) if (!seen.has(e.to)) todo.push(e.to);
  }
  return seen;
}

/** Iterative DFS over jump/goto edges; each cycle reported once, at the edge that closes it. */
function loops(
  t: NftTable,
  key: string,
  edges: ReadonlyMap<string, readonly Edge[]>,
  reachable: ReadonlySet<string>,
  out: NftLintDiagnostic[],
): void {
  const state = new Map<string, 1 | 2>();
  for (const start of t.chains) {
    if (state.has(start.name)) continue;
    const stack: { name: string; i: number }[] = [{ name: start.name, i: 0 }];
    state.set(start.name, 1);
    while (stack.length) {
      const top = stack[stack.length - 1]!;
      const list = edges.get(top.name) ?? [];
      if (top.i >= list.length) {
        state.set(top.name, 2);
        stack.pop();
        continue;
      }
      const e = list[top.i++]!;
      const s = state.get(e.to);
      if (s === 1) {
        const from = stack.findIndex(f => f.name === e.to);
        const cycle = [...stack.slice(from).map(f => f.name), e.to].join(' → ');
        const live = reachable.has(e.to);
        out.push(
          finding(
            'jump-loop',
            key,
            e.to,
            e.range,
            live
              ? `jump loop ${cycle}: the kernel refuses this ruleset (nft: "Could not process rule: Too many links")`
              : `jump loop ${cycle}: the kernel loads it only while no base chain leads here (then: "Too many links")`,
            live ? 'error' : 'warning',
          ),
        );
      } else if (s === undefined && edges.has(e.to)) {
        state.set(e.to, 1);
        stack.push({ name: e.to, i: 0 });
      }
    }
  }
}

/** A canonical text of a node without ranges or handles, to compare statements as written. */
function shape(node: unknown): string {
  return JSON.stringify(node, (k, v: unknown) => (k === 'range' || k === 'handle' ? undefined : v));
}

/** Operands whose value differs between two evaluations of the same packet: numgen draws anew each time. */
function deterministic(s: NftStmt): boolean {
  return !shape(s).includes('"kind":"numgen"');
}

/** Statements that neither change the packet nor leave the chain to code that might. */
function inert(s: NftStmt): boolean {
  if (s.kind === 'match' || s.kind === 'counter' || s.kind === 'log' || s.kind === 'limit' || s.kind === 'quota')
    return true;
  if (s.kind === 'verdict') return s.verdict !== 'jump';
  return s.kind === 'reject';
}

/** The rule takes every packet its matches select: only deterministic matches, then a verdict leaving the chain. */
function terminal(stmts: readonly NftStmt[]): NftStmt[] | null {
  const matches: NftStmt[] = [];
  let ends = false;
  for (const s of stmts) {
    if (ends) return null;
    if (s.kind === 'match') {
      if (!deterministic(s)) return null;
      matches.push(s);
    } else if (s.kind === 'counter' || s.kind === 'log') continue;
    else if (s.kind === 'verdict' && s.verdict !== 'jump' && s.verdict !== 'continue') ends = true;
    else if (s.kind === 'reject') ends = true;
    else return null;
  }
  return ends ? matches : null;
}

function shadowed(
  key: string,
  c: NftChain,
  stmts: readonly (readonly NftStmt[])[],
  out: NftLintDiagnostic[],
  budget: number,
): number {
  const takers: { rule: NftRule; index: number; matches: Set<string> }[] = [];
  c.rules.forEach((r, i) => {
    const ss = stmts[i]!;
    const mine = new Set(ss.filter(s => s.kind === 'match').map(shape));
    for (const by of takers) {
      if (--budget <= 0) return;
      let covered = true;
      for (const m of by.matches)
        if (!mine.has(m)) {
          covered = false;
          break;
        }
      if (covered) {
        out.push({
          ...finding(
            'shadowed-rule',
            key,
            c.name,
            r.range,
            `rule ${i + 1} of chain ${c.name} never matches: rule ${by.index} (line ${by.rule.range.start.line + 1}) has the same criteria or fewer and takes every packet first`,
          ),
          relatedLine: by.rule.range.start.line,
          relatedMessage: `rule ${by.index} takes these packets first`,
        });
        return;
      }
    }
    // A rule that changes the packet or jumps away ends what earlier rules can promise about later ones.
    if (!ss.every(inert)) {
      takers.length = 0;
      return;
    }
    const m = terminal(ss);
    if (m) takers.push({ rule: r, index: i + 1, matches: new Set(m.map(shape)) });
  });
  return budget;
}
