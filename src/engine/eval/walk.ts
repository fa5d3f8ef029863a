/**
 * Walking one table's base chain for one hook, as `ipt_do_table` does: rules in order, jumps push a return
 * point, gotos do not, RETURN or the end of a user chain pops, and an empty stack falls to the built-in
 * chain's policy. A `-m statistic` match forks the path with the kernel's exact probability; a match the
 * evaluator cannot decide forks it into "assumed to match" and "assumed not to match".
 *
 * Every walk is bounded (budget.ts): each frame remembers the jump/goto edges that led to it, so a path that
 * enters a chain already on its way in has found a cycle of the chain graph — the loop the kernel's loader
 * refuses (`mark_source_chains`, ELOOP) — and ends there, naming the rules of the cycle, whatever path
 * (gotos, random branches) led to it. Forked paths wait in a queue, most probable first; a waiting path that
 * reaches the same rule as a running one with the same state, up to mark bits no rule reads, is merged
 * into it (probabilities add), so n random branches that set unread marks stay n paths, not 2^n.
 */
import type { HookName } from '../hooks.ts';
import type { Chain, Rule, Table } from '../model.ts';
import { add, complement, format as formatRational, isZero, mul, toNumber, type Rational } from '../rational.ts';
import { type LiveMarks, type TraceLimits, addRemainder } from './budget.ts';
import type { TraceEnv } from './env.ts';
import { headerMiss, testMatch, whyMatch } from './match-rule.ts';
import { chainIndex, explainedUntil, skippedMiss } from './chain-index.ts';
import { SkipRun } from './miss-log.ts';
import { formatAddr } from '../net/addr.ts';
import { type Path, forkPath } from './path.ts';
import { sameState } from './same-state.ts';
import { type Frame, type Item, type Via, Queue, cloneStack, newFrame, nextRule, samePoint } from './walk-stack.ts';
import { type NftBranch, execNft } from './nft-exec.ts';
import type { TraceAssumption, TraceEvent, TraceStep } from './trace-types.ts';

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
  /** Keep each path's events (false: only count them, path.ts `EventCount`). */
  readonly events: boolean;
  /** The trace's budgets, shared by every walk of the trace (budget.ts). */
  readonly limits: TraceLimits;
  /** Mark bits some rule reads (computed on first need). */
  readonly live: () => LiveMarks;
  /**
   * The steps recorded so far in this trace, by rule: a rule that does the same thing on the same hook for
   * several paths (the POSTROUTING rules every outcome of a Service crosses) records one shared step, so
   * the CLI's JSON writes it once (steps are read-only values, shared by forked paths already).
   */
  readonly steps?: Map<Rule, TraceStep>;
}

/** Why-not entries kept per path; beyond, a note says the list was cut (memory stays bounded). */
export const MAX_MISSES_PER_PATH = 100_000;
/** Steps and events kept per path; a path that long (a runaway traversal) keeps its first ones. */
export const MAX_RECORDED = 200_000;

function event(path: Path, e: TraceEvent): void {
  if (path.events.length < MAX_RECORDED) path.events.push(e);
  else if (path.events.length === MAX_RECORDED) {
    path.events.push({ kind: 'note', text: `the record of this path was cut after ${MAX_RECORDED} events` });
    path.notes.push(`the record of this path (its steps and events) was cut after ${MAX_RECORDED} entries`);
  }
}

function step(hook: HookName, rule: Rule, verdict: string): TraceStep {
  return { hook, table: rule.table, chain: rule.chain, rule: rule.index, line: rule.line + 1, verdict };
}

function ruleName(rule: Rule): string {
  return `${rule.table} ${rule.chain} rule ${rule.index} (line ${rule.line + 1})`;
}

type Flow = 'next' | 'stop';

class TableWalk {
  readonly results: TableResult[] = [];
  private readonly queue = new Queue();
  /** Waiting items by the chain and position they will resume at, for merging. */
  private waiting: Map<Chain, Map<number, Set<Item>>> | null = null;
  private waitingCount = 0;
  private seq = 0;

  constructor(
    private readonly table: Table,
    private readonly base: Chain,
    private readonly hook: HookName,
    private readonly env: TraceEnv,
    private readonly opts: WalkOptions,
  ) {}

  private get limits(): TraceLimits {
    return this.opts.limits;
  }

  enqueue(path: Path, stack: Frame[]): void {
    const it: Item = { path, stack, seq: this.seq++, weight: toNumber(path.prob), dead: false };
    this.queue.push(it);
    this.peersOf(stack, true)!.add(it);
    this.waitingCount++;
  }

  private peersOf(stack: Frame[], create: boolean): Set<Item> | undefined {
    const top = stack[stack.length - 1]!;
    // Made on the first fork: most walks (a hook's chains for one path) never fork.
    if (!this.waiting) {
      if (!create) return undefined;
      this.waiting = new Map();
    }
    let byPos = this.waiting.get(top.chain);
    if (!byPos) {
      if (!create) return undefined;
      this.waiting.set(top.chain, (byPos = new Map()));
    }
    let set = byPos.get(top.pos);
    if (!set && create) byPos.set(top.pos, (set = new Set()));
    return set;
  }

  private unwait(item: Item): void {
    if (this.peersOf(item.stack, false)?.delete(item)) this.waitingCount--;
  }

  run(start: Path): TableResult[] {
    // The first item runs at once: it would be the only one queued and waiting, popped straight away.
    const stack = [newFrame(this.base, start, this.opts.explain, { chain: this.base, rule: null, parent: null })];
    let item: Item | undefined = { path: start, stack, seq: this.seq++, weight: 0, dead: false };
    for (; item; item = this.queue.pop()) {
      if (item.dead) continue;
      this.unwait(item);
      if (this.limits.exhausted && this.limits.steps >= this.limits.maxSteps) {
        addRemainder(this.limits, item.path.prob, item.path.count, item.path.assumptions);
        continue;
      }
      this.runItem(item);
    }
    return this.results;
  }

  /** Merges waiting items at the running item's point and state into it. */
  private absorb(item: Item): void {
    const peers = this.peersOf(item.stack, false);
    if (!peers || peers.size === 0) return;
    for (const other of peers) {
      if (other.dead || !samePoint(item.stack, other.stack) || !sameState(item.path, other.path, this.opts.live))
        continue;
      const p = item.path;
      const q = other.path;
      p.prob = add(p.prob, q.prob);
      p.count += q.count;
      p.variesNf = (p.variesNf | q.variesNf | (p.pkt.mark ^ q.pkt.mark)) >>> 0;
      p.variesCt = (p.variesCt | q.variesCt | (p.pkt.ct.mark ^ q.pkt.ct.mark)) >>> 0;
      for (const n of q.notes) if (!p.notes.includes(n)) p.notes.push(n);
      other.dead = true;
      peers.delete(other);
      this.waitingCount--;
      this.limits.paths--;
    }
  }

  private runItem(item: Item): void {
    const { path } = item;
    for (;;) {
      const frame = item.stack[item.stack.length - 1];
      if (!frame) {
        this.policy(path);
        return;
      }
      if (this.waitingCount) this.absorb(item);
      const from = frame.next;
      const rule = nextRule(frame, path);
      // With why-not, the rules the chain's index skipped are explained first, in chain order.
      if (frame.cand && this.opts.explain) {
        const to = rule ? frame.next - 1 : frame.chain.rules.length;
        if (to > from && this.skipped(path, frame.chain, from, to) === 'stop') return;
      }
      if (!rule) {
        this.leave(item, true);
        continue;
      }
      path.work++;
      if (this.overBudget(path, rule)) return;
      if (rule.nft) {
        if (this.nft(item, frame, rule) === 'stop') return;
        continue;
      }
      if (!this.matches(item, rule)) continue;
      if (this.target(item, frame, rule) === 'stop') return;
    }
  }

  /** Counts one rule evaluation; past the step budget the path ends here as unknown (true). */
  private overBudget(path: Path, rule: Rule): boolean {
    const L = this.limits;
    if (++L.steps <= L.maxSteps) return false;
    L.exhausted ??= `the trace's budget of ${L.maxSteps} rule evaluations ran out`;
    this.results.push({
      path,
      verdict: {
        kind: 'unknown',
        reason: `stopped after ${L.maxSteps} rule evaluations, at ${ruleName(rule)}: the trace's step budget ran out (a ruleset whose paths multiply, e.g. chains jumped to many times over; the rest of this path is not traced)`,
      },
    });
    return true;
  }

  /**
   * Rules `from`…`to - 1` of an indexed chain, which cannot match the packet (another destination): each is
   * one rule evaluation and one miss, with the words the plain walk gives (chain-index.ts `skippedMiss`).
   * None can fork the path: `ip_packet_match`'s address checks fail before any match module runs.
   */
  private skipped(path: Path, chain: Chain, from: number, to: number): Flow {
    const index = chainIndex(chain)!;
    const dst = formatAddr(path.pkt.dst);
    const L = this.limits;
    const n = to - from;
    if (L.steps + n <= L.maxSteps && path.misses.length + n <= MAX_MISSES_PER_PATH) {
      // Neither budget runs out in this run (thousands of rules in KUBE-SERVICES): count it at once, and
      L.steps += n;
      path.work += n;
      // record each miss as `miss` would (same fields, same order); a stretch explained by the index alone is
      // one run (miss-log.ts), its entries made only if the full list is read.
      const hook = this.hook;
      const table = this.table.name;
      const { misses, pkt } = path;
      let i = from;
      while (i < to) {
        const j = explainedUntil(index, i, to);
        if (j > i) {
          misses.pushRun(new SkipRun(hook, table, chain, index, i, j, dst));
          i = j;
          continue;
        }
        const rule = chain.rules[i]!;
        const reason = headerMiss(rule, pkt, true) ?? '';
        misses.push({ hook, table, chain: rule.chain, rule: rule.index, line: rule.line + 1, reason });
        i++;
      }
      return 'next';
    }
    for (let i = from; i < to; i++) {
      const rule = chain.rules[i]!;
      path.work++;
      if (this.overBudget(path, rule)) return 'stop';
      this.miss(path, rule, skippedMiss(index, i, dst) ?? headerMiss(rule, path.pkt, true) ?? '');
    }
    return 'next';
  }

  private miss(path: Path, rule: Rule, reason: string): void {
    if (path.misses.length < MAX_MISSES_PER_PATH) {
      path.misses.push({
        hook: this.hook,
        table: this.table.name,
        chain: rule.chain,
        rule: rule.index,
        line: rule.line + 1,
        reason,
      });
    } else if (path.misses.length === MAX_MISSES_PER_PATH) {
      path.notes.push(`the list of rules that did not match was cut at ${MAX_MISSES_PER_PATH} entries`);
      path.misses.push({
        hook: this.hook,
        table: this.table.name,
        chain: rule.chain,
        rule: rule.index,
        line: rule.line + 1,
        reason: '… (list cut here)',
      });
    }
  }

  /**
   * Whether a fork may be followed. Beyond the path or memory budget it is not: its probability goes to
   * the remainder ("not enumerated") with the assumptions it was conditional on.
   */
  private mayFork(path: Path, prob: Rational, assumptions: readonly TraceAssumption[]): boolean {
    const L = this.limits;
    const size = path.steps.length + path.misses.length + path.events.length;
    if (L.paths >= L.maxPaths) L.exhausted ??= `more than ${L.maxPaths} paths: the budget of paths followed per trace`;
    else if (L.records + size > L.maxRecords)
      L.exhausted ??= `the trace's memory budget (${L.maxRecords} recorded steps, events and misses)`;
    else {
      L.paths++;
      L.records += size;
      return true;
    }
    addRemainder(L, prob, path.count, assumptions);
    return false;
  }

  /** The rule's criteria; forks the path at random and undecidable matches. False when it does not match. */
  private matches(item: Item, rule: Rule): boolean {
    const { path } = item;
    const { table, opts, env } = this;
    const miss = headerMiss(rule, path.pkt, opts.explain);
    if (miss !== null) {
      if (opts.explain) this.miss(path, rule, miss);
      return false;
    }
    // Module matches, in the order written.
    for (let k = 0; k < rule.matches.length; k++) {
      const r = testMatch(rule, k, path.pkt, env);
      if (r === true) continue;
      if (r === false) {
        if (opts.explain) this.miss(path, rule, whyMatch(rule, k, path.pkt, env));
        return false;
      }
      if (r.kind === 'assume') {
        path.notes.push(`${table.name} ${rule.chain} rule ${rule.index} (line ${rule.line + 1}): ${r.note}`);
        if (r.value) continue;
        if (opts.explain) this.miss(path, rule, r.note);
        return false;
      }
      const where = { table: table.name, chain: rule.chain, rule: rule.index, line: rule.line + 1 };
      if (r.kind === 'branch') {
        // Fork: the other path continues with the next rule, weighted by 1 - p.
        const q = complement(r.p);
        const qProb = mul(path.prob, q);
        if (!isZero(q) && this.mayFork(path, qProb, path.assumptions)) {
          const other = forkPath(path);
          other.prob = qProb;
          other.events.push({ kind: 'branch', ...where, taken: false, probability: formatRational(q), label: r.label });
          if (opts.explain) this.miss(other, rule, `${r.label}: not chosen`);
          this.enqueue(other, cloneStack(item.stack));
        }
        path.prob = mul(path.prob, r.p);
        path.events.push({ kind: 'branch', ...where, taken: true, probability: formatRational(r.p), label: r.label });
        continue;
      }
      // Unknown: fork into "does not match" (the other path) and "matches" (this one).
      const no: TraceAssumption = { ...where, reason: r.reason, assumed: 'does not match' };
      if (this.mayFork(path, path.prob, [...path.assumptions, no])) {
        const other = forkPath(path);
        other.assumptions.push(no);
        other.events.push({ kind: 'assume', assumption: no });
        if (opts.explain) this.miss(other, rule, `unknown, assumed not to match: ${r.reason}`);
        this.enqueue(other, cloneStack(item.stack));
      }
      const yes: TraceAssumption = { ...where, reason: r.reason, assumed: 'matches' };
      path.assumptions.push(yes);
      path.events.push({ kind: 'assume', assumption: yes });
    }
    return true;
  }

  private record(path: Path, rule: Rule, verdict: string, action?: string): void {
    const s: TraceStep = this.table.nft
      ? { ...step(this.hook, rule, verdict), family: this.table.family ?? 'ip', ...(action ? { action } : {}) }
      : this.shared(rule, verdict);
    if (path.steps.length < MAX_RECORDED) path.steps.push(s);
    event(path, { kind: 'rule', step: s });
  }

  /** The step of an iptables rule: the one this trace recorded for the rule before when it says the same. */
  private shared(rule: Rule, verdict: string): TraceStep {
    const cache = this.opts.steps;
    const seen = cache?.get(rule);
    if (seen && seen.hook === this.hook && seen.verdict === verdict) return seen;
    const s = step(this.hook, rule, verdict);
    cache?.set(rule, s);
    return s;
  }

  /**
   * Leaves the current chain: RETURN (explicit) or its end (implicit, recorded only when a caller remains:
   * the end of the base chain is its policy, recorded by `policy`).
   */
  private leave(item: Item, implicit: boolean): void {
    const top = item.stack.pop()!;
    if (!implicit || item.stack.length)
      event(item.path, { kind: 'return', table: this.table.name, chain: top.chain.name, implicit });
  }

  private end(path: Path, verdict: TableVerdict): Flow {
    this.results.push({ path, verdict });
    return 'stop';
  }

  /** The matched rule's target: how the walk goes on. */
  private target(item: Item, frame: Frame, rule: Rule): Flow {
    const { path } = item;
    const table = this.table;
    const t = rule.target;
    if (!t) {
      this.record(path, rule, 'no target (counted)');
      return 'next';
    }
    if (t.kind === 'verdict') {
      this.record(path, rule, t.verdict);
      if (t.verdict === 'ACCEPT') return this.end(path, { kind: 'accept' });
      if (t.verdict === 'DROP')
        return this.end(path, { kind: 'drop', reason: `DROP in ${table.name} ${rule.chain} rule ${rule.index}` });
      if (t.verdict === 'QUEUE')
        return this.end(path, { kind: 'unknown', reason: 'QUEUE: a userspace program decides' });
      // RETURN: pop to the caller; from the bottom frame, the base chain's policy.
      this.leave(item, false);
      return 'next';
    }
    if (t.kind === 'unknown') {
      this.record(path, rule, `${t.name} (not modelled)`);
      return this.end(path, { kind: 'unknown', reason: `target ${t.name} is not modelled` });
    }
    if (t.kind !== 'target') return this.enter(item, frame, rule, t.kind, t.chain);
    const res = t.module.apply(t.spec, path.pkt, this.env);
    this.record(path, rule, res.text);
    if (res.note)
      path.notes.push(`${table.name} ${rule.chain} rule ${rule.index} (line ${rule.line + 1}): ${res.note}`);
    if (t.module.name === 'MASQUERADE') path.masquerade = res.effect.kind === 'accept';
    const e = res.effect;
    if (e.kind === 'continue') return 'next';
    if (e.kind === 'accept') return this.end(path, { kind: 'accept' });
    if (e.kind === 'drop') return this.end(path, { kind: 'drop', reason: res.text });
    if (e.kind === 'reject') return this.end(path, { kind: 'reject', with: e.with });
    if (e.kind === 'queue') return this.end(path, { kind: 'unknown', reason: 'queued to userspace' });
    return this.end(path, { kind: 'unknown', reason: e.reason });
  }

  /**
   * An nftables rule: its statements run in nft-exec.ts, which forks the path at numgen branches and
   * undecidable matches; forked outcomes are applied to a copy of the stack and wait in the queue.
   */
  private nft(item: Item, frame: Frame, rule: Rule): Flow {
    const outs = execNft(rule.nft!, item.path, this.env, rule);
    for (const o of outs) {
      if (o.path === item.path || !this.mayFork(item.path, o.path.prob, o.path.assumptions)) continue;
      const stack = cloneStack(item.stack);
      const fork: Item = { path: o.path, stack, seq: -1, weight: 0, dead: false };
      if (this.nftOutcome(fork, stack[stack.length - 1]!, rule, o) === 'stop') continue;
      if (fork.stack.length) this.enqueue(o.path, fork.stack);
      else this.policy(o.path);
    }
    const own = outs.find(o => o.path === item.path);
    return own ? this.nftOutcome(item, frame, rule, own) : 'stop';
  }

  /** The end of the base chain: its policy. */
  private policy(path: Path): void {
    const policy = this.base.policy ?? 'ACCEPT';
    path.events.push({
      kind: 'policy',
      hook: this.hook,
      table: this.table.name,
      chain: this.base.name,
      verdict: policy,
      line: this.base.line + 1,
    });
    this.results.push({
      path,
      verdict:
        policy === 'DROP'
          ? { kind: 'drop', reason: `policy DROP of ${this.table.name} ${this.base.name}` }
          : { kind: 'accept' },
    });
  }

  /** One outcome of an nftables rule: the step (verdict as `nft monitor trace` prints it) and its effect. */
  private nftOutcome(item: Item, frame: Frame, rule: Rule, o: NftBranch): Flow {
    const { path } = item;
    if (o.miss !== null) {
      if (this.opts.explain) this.miss(path, rule, o.miss);
      return 'next';
    }
    const v = o.verdict;
    const action = [...o.did, ...(v?.kind === 'reject' ? [`reject with ${v.with ?? ''}`] : [])].join('; ');
    if (v && (v.kind === 'jump' || v.kind === 'goto')) {
      if (action) path.notes.push(`${ruleName(rule)}: ${action}`);
      return this.enter(item, frame, rule, v.kind, v.chain ?? '');
    }
    // reject is a drop to the kernel's trace; nat statements end the chain with accept.
    this.record(path, rule, !v ? 'continue' : v.kind === 'reject' ? 'drop' : v.kind, action);
    if (!v || v.kind === 'continue') return 'next';
    if (v.kind === 'return') {
      this.leave(item, false);
      return 'next';
    }
    if (v.kind === 'accept') return this.end(path, { kind: 'accept' });
    if (v.kind === 'drop')
      return this.end(path, {
        kind: 'drop',
        reason: v.reason ?? `drop in ${this.table.family ?? 'ip'} ${this.table.name} ${rule.chain} rule ${rule.index}`,
      });
    if (v.kind === 'reject') return this.end(path, { kind: 'reject', with: v.with ?? 'icmp port-unreachable' });
    return this.end(path, { kind: 'unknown', reason: v.reason ?? v.kind });
  }

  /** A jump or goto: enters the chain, unless that closes a cycle of the chain graph. */
  private enter(item: Item, frame: Frame, rule: Rule, kind: 'jump' | 'goto', name: string): Flow {
    const { path } = item;
    const table = this.table;
    const target = table.chains.get(name);
    if (!target)
      return this.end(path, {
        kind: 'unknown',
        reason: `${kind} to undeclared chain ${name}: iptables-restore refuses the file ("Couldn't load target \`${name}'")`,
      });
    this.record(path, rule, `${kind} ${name}`);
    let seen: Via | null = frame.via;
    while (seen && seen.chain !== target) seen = seen.parent;
    if (seen) {
      const loop = loopOf(frame.via, seen, rule);
      path.loop = loop.map(r => ({
        hook: this.hook,
        table: r.table,
        chain: r.chain,
        rule: r.index,
        line: r.line + 1,
        verdict:
          r.target && (r.target.kind === 'jump' || r.target.kind === 'goto')
            ? `${r.target.kind} ${r.target.chain}`
            : '',
      }));
      const cycle = [target.name, ...loop.map(r => (r.target as { chain: string }).chain)].join(' → ');
      const via = loop
        .map(
          r =>
            `${r.chain} rule ${r.index} (line ${r.line + 1}) ${(r.target as { kind: string }).kind === 'goto' ? 'goes to' : 'jumps to'} ${(r.target as { chain: string }).chain}`,
        )
        .join(', ');
      return this.end(path, {
        kind: 'unknown',
        reason: `jump loop ${cycle} in table ${table.name}: ${via}. The kernel refuses to load a table with a loop (ELOOP), so no packet takes this path; the trace stops here`,
      });
    }
    event(path, { kind: 'chain', hook: this.hook, table: table.name, chain: target.name, line: target.line + 1 });
    if (kind === 'goto') item.stack.pop();
    item.stack.push(newFrame(target, path, this.opts.explain, { chain: target, rule, parent: frame.via }));
    return 'next';
  }
}

/** The rules of the cycle, in order: from the one that left `seen`'s chain to `closing`. */
function loopOf(via: Via, seen: Via, closing: Rule): Rule[] {
  const rules: Rule[] = [closing];
  for (let v: Via | null = via; v && v !== seen; v = v.parent) if (v.rule) rules.push(v.rule);
  return rules.reverse();
}

export function walkTable(
  table: Table,
  base: Chain,
  hook: HookName,
  start: Path,
  env: TraceEnv,
  opts: WalkOptions,
): TableResult[] {
  env.hook = hook;
  env.table = table.name;
  const L = opts.limits;
  if (L.steps >= L.maxSteps) {
    // The step budget is spent: the path is kept as probability not enumerated.
    addRemainder(L, start.prob, start.count, start.assumptions);
    return [];
  }
  start.events.push({ kind: 'chain', hook, table: table.name, chain: base.name, line: base.line + 1 });
  return new TableWalk(table, base, hook, env, opts).run(start);
}
