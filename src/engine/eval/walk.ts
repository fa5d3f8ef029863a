/**
 * Walking one table's base chain for one hook, as `ipt_do_table` does: rules in order, jumps push a return
 * point, gotos do not, RETURN or the end of a user chain pops, and an empty stack falls to the built-in
 * chain's policy. A `-m statistic` match forks the path with the kernel's exact probability; a match the
 * evaluator cannot decide forks it into "assumed to match" and "assumed not to match".
 */
import type { Chain, HookName, Rule, Table } from '../model.ts';
import { complement, format as formatRational, isZero, mul } from '../rational.ts';
import { candidates, chainIndex, packetKey } from './chain-index.ts';
import type { EvalEnv } from './env.ts';
import { headerMiss, testMatch, whyMatch } from './match-rule.ts';
import { type Path, forkPath } from './path.ts';
import type { TraceStep } from './trace-types.ts';

export type TableVerdict =
  | { readonly kind: 'accept' }
  | { readonly kind: 'drop'; readonly reason: string }
  | { readonly kind: 'reject'; readonly with: string }
  | { readonly kind: 'unknown'; readonly reason: string };

export interface TableResult {
  readonly path: Path;
  readonly verdict: TableVerdict;
}

export interface WalkOptions {
  /** Record every evaluated rule that did not match, with its first failed criterion (plain walk). */
  readonly explain: boolean;
  /** Rule evaluations allowed on one path before it is cut (protects against goto loops). */
  readonly budget: number;
}

interface Frame {
  readonly chain: Chain;
  /** Next rule position (0-based) in the chain, or in `cand` when indexed. */
  pos: number;
  cand: number[] | null;
  key: string | number | null;
}

interface Item {
  path: Path;
  stack: Frame[];
}

function newFrame(chain: Chain, path: Path, opts: WalkOptions): Frame {
  if (!opts.explain) {
    const index = chainIndex(chain);
    if (index) {
      const key = packetKey(index, path.pkt);
      return { chain, pos: 0, cand: candidates(index, key), key };
    }
  }
  return { chain, pos: 0, cand: null, key: null };
}

function cloneStack(stack: Frame[]): Frame[] {
  return stack.map((f) => ({ ...f }));
}

/** The next rule of the frame and advances it; null at the end of the chain. */
function nextRule(f: Frame, path: Path, opts: WalkOptions): Rule | null {
  if (f.cand) {
    // The packet's key can change only through a target that ends the table, but stay safe: re-key if so.
    const index = chainIndex(f.chain)!;
    const key = packetKey(index, path.pkt);
    if (key !== f.key) {
      const last = f.pos > 0 ? f.cand[f.pos - 1]! : -1;
      f.cand = candidates(index, key);
      f.key = key;
      f.pos = f.cand.findIndex((i) => i > last);
      if (f.pos < 0) f.pos = f.cand.length;
    }
    if (f.pos >= f.cand.length) return null;
    return f.chain.rules[f.cand[f.pos++]!]!;
  }
  void opts;
  if (f.pos >= f.chain.rules.length) return null;
  return f.chain.rules[f.pos++]!;
}

function step(hook: HookName, rule: Rule, verdict: string): TraceStep {
  return { hook, table: rule.table, chain: rule.chain, rule: rule.index, line: rule.line + 1, verdict };
}

export function walkTable(table: Table, base: Chain, hook: HookName, start: Path, env: EvalEnv, opts: WalkOptions): TableResult[] {
  const results: TableResult[] = [];
  env.hook = hook;
  env.table = table.name;
  start.events.push({ kind: 'chain', hook, table: table.name, chain: base.name, line: base.line + 1 });
  const work: Item[] = [{ path: start, stack: [newFrame(base, start, opts)]}];

  while (work.length) {
    const item = work.pop()!;
    const { path } = item;
    for (;;) {
      const frame = item.stack[item.stack.length - 1];
        if (!frame) {
          const policy = base.policy ?? 'ACCEPT';
          path.events.push({ kind: 'policy', hook, table: table.name, chain: base.name, verdict: policy, line: base.line + 1 });
          results.push({ path, verdict: policy === 'DROP' ? { kind: 'drop', reason: `policy DROP of ${table.name} ${base.name}` } : { kind: 'accept' } });
          break;
        }
        const next = nextRule(frame, path, opts);
        if (!next) {
          item.stack.pop();
          if (item.stack.length) path.events.push({ kind: 'return', table: table.name, chain: frame.chain.name, implicit: true });
          continue;
        }
        const rule = next;
        if (++path.work > opts.budget) {
          results.push({ path, verdict: { kind: 'unknown', reason: `stopped after ${opts.budget} rule evaluations in ${table.name} ${frame.chain.name} (a goto loop? the kernel refuses rulesets with loops)` } });
          break;
        }
        const miss = headerMiss(rule, path.pkt, opts.explain);
        if (miss !== null) {
          if (opts.explain) path.misses.push({ hook, table: table.name, chain: rule.chain, rule: rule.index, line: rule.line + 1, reason: miss });
          continue;
        }
      // Module matches, in the order written.
      let matched = true;
      for (let k = 0; k < rule.matches.length; k++) {
        const r = testMatch(rule, k, path.pkt, env);
        if (r === true) continue;
        if (r === false) {
          if (opts.explain) path.misses.push({ hook, table: table.name, chain: rule.chain, rule: rule.index, line: rule.line + 1, reason: whyMatch(rule, k, path.pkt, env) });
          matched = false;
          break;
        }
        if (r.kind === 'assume') {
          path.notes.push(`${table.name} ${rule.chain} rule ${rule.index} (line ${rule.line + 1}): ${r.note}`);
          if (r.value) continue;
          if (opts.explain) path.misses.push({ hook, table: table.name, chain: rule.chain, rule: rule.index, line: rule.line + 1, reason: r.note });
          matched = false;
          break;
        }
        if (r.kind === 'branch') {
          // Fork: the other path continues with the next rule, weighted by 1 - p.
          const q = complement(r.p);
          if (!isZero(q)) {
            const other = forkPath(path);
            other.prob = mul(other.prob, q);
            other.events.push({ kind: 'branch', table: table.name, chain: rule.chain, rule: rule.index, line: rule.line + 1, taken: false, probability: formatRational(q), label: r.label });
            if (opts.explain) other.misses.push({ hook, table: table.name, chain: rule.chain, rule: rule.index, line: rule.line + 1, reason: `${r.label}: not chosen` });
            work.push({ path: other, stack: cloneStack(item.stack)});
          }
          path.prob = mul(path.prob, r.p);
          path.events.push({ kind: 'branch', table: table.name, chain: rule.chain, rule: rule.index, line: rule.line + 1, taken: true, probability: formatRational(r.p), label: r.label });
          continue;
        }
        // Unknown: fork into "does not match" (the other path) and "matches" (this one).
        const base = { table: table.name, chain: rule.chain, rule: rule.index, line: rule.line + 1, reason: r.reason };
        const other = forkPath(path);
        const no = { ...base, assumed: 'does not match' as const };
        other.assumptions.push(no);
        other.events.push({ kind: 'assume', assumption: no });
        if (opts.explain) other.misses.push({ hook, table: table.name, chain: rule.chain, rule: rule.index, line: rule.line + 1, reason: `unknown, assumed not to match: ${r.reason}` });
        work.push({ path: other, stack: cloneStack(item.stack)});
        const yes = { ...base, assumed: 'matches' as const };
        path.assumptions.push(yes);
        path.events.push({ kind: 'assume', assumption: yes });
      }
      if (!matched) continue;
      // The rule matched: its target.
      const t = rule.target;
      if (!t) {
        const s = step(hook, rule, 'no target (counted)');
        path.steps.push(s);
        path.events.push({ kind: 'rule', step: s });
        continue;
      }
      if (t.kind === 'verdict') {
        const s = step(hook, rule, t.verdict);
        path.steps.push(s);
        path.events.push({ kind: 'rule', step: s });
        if (t.verdict === 'ACCEPT') {
          results.push({ path, verdict: { kind: 'accept' } });
          break;
        }
        if (t.verdict === 'DROP') {
          results.push({ path, verdict: { kind: 'drop', reason: `DROP in ${table.name} ${rule.chain} rule ${rule.index}` } });
          break;
        }
        if (t.verdict === 'QUEUE') {
          results.push({ path, verdict: { kind: 'unknown', reason: 'QUEUE: a userspace program decides' } });
          break;
        }
        // RETURN: pop to the caller; from the bottom frame, the base chain's policy.
        const top = item.stack.pop()!;
        path.events.push({ kind: 'return', table: table.name, chain: top.chain.name, implicit: false });
        continue;
      }
      if (t.kind === 'jump' || t.kind === 'goto') {
        const target = table.chains.get(t.chain);
        if (!target) {
          results.push({ path, verdict: { kind: 'unknown', reason: `${t.kind} to undeclared chain ${t.chain}` } });
          break;
        }
        if (item.stack.some((f) => f.chain === target)) {
          const cycle = [...item.stack.map((f) => f.chain.name), target.name].join(' → ');
          const s = step(hook, rule, `${t.kind} ${t.chain}`);
          path.steps.push(s);
          path.events.push({ kind: 'rule', step: s });
          results.push({ path, verdict: { kind: 'unknown', reason: `jump loop ${cycle}: the kernel refuses to load such a table` } });
          break;
        }
        const s = step(hook, rule, `${t.kind} ${t.chain}`);
        path.steps.push(s);
        path.events.push({ kind: 'rule', step: s });
        path.events.push({ kind: 'chain', hook, table: table.name, chain: target.name, line: target.line + 1 });
        if (t.kind === 'goto') item.stack.pop();
        item.stack.push(newFrame(target, path, opts));
        continue;
      }
      if (t.kind === 'unknown') {
        const s = step(hook, rule, `${t.name} (not modelled)`);
        path.steps.push(s);
        path.events.push({ kind: 'rule', step: s });
        results.push({ path, verdict: { kind: 'unknown', reason: `target ${t.name} is not modelled` } });
        break;
      }
      if (t.kind !== 'target') break;
      const res = t.module.apply(t.spec, path.pkt, env);
      const s = step(hook, rule, res.text);
      path.steps.push(s);
      path.events.push({ kind: 'rule', step: s });
      if (res.note) path.notes.push(`${table.name} ${rule.chain} rule ${rule.index} (line ${rule.line + 1}): ${res.note}`);
      if (t.module.name === 'MASQUERADE') path.masquerade = res.effect.kind === 'accept';
      const e = res.effect;
      if (e.kind === 'continue') continue;
      if (e.kind === 'accept') results.push({ path, verdict: { kind: 'accept' } });
      else if (e.kind === 'drop') results.push({ path, verdict: { kind: 'drop', reason: res.text } });
      else if (e.kind === 'reject') results.push({ path, verdict: { kind: 'reject', with: e.with } });
      else if (e.kind === 'queue') results.push({ path, verdict: { kind: 'unknown', reason: 'queued to userspace' } });
      else results.push({ path, verdict: { kind: 'unknown', reason: e.reason } });
      break;
    }
  }
  return results;
}
