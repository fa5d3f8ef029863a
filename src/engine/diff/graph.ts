/**
 * The jump graph of both rulesets (chains keyed `table name`, edges from `-j`/`-g` rules on either side)
 * and the hooks each chain can run in. Edges come from the target names found when the dump was read, so
 * building the graph compiles no rule. One pass over each ruleset indexes the callers of every chain and
 * the rules that rewrite packets; everything else is looked up on demand, because a 320k-rule dump has
 * 110k chains of which a diff usually visits a few dozen.
 */
import { type Chain, type HookName, type Rule, type Ruleset, HOOKS, TABLE_HOOKS } from '../model.ts';
import { IptRule } from '../iptables/rule-node.ts';
import { STANDARD_TARGETS } from '../targets/registry.ts';
import { chainKey } from './normalize.ts';

export interface Edge {
  /** The chain at the other end: the target for `out`, the caller for `in`. */
  readonly to: string;
  readonly rule: Rule;
  /** 0 = old ruleset, 1 = new. */
  readonly side: 0 | 1;
  /** 0-based position of the rule in its chain. */
  readonly pos: number;
}

export interface ChainNode {
  readonly key: string;
  readonly table: string;
  readonly name: string;
  readonly builtin: boolean;
  /** The chain on each side (undefined where it does not exist). */
  readonly sides: readonly [Chain | undefined, Chain | undefined];
}

/** Targets that rewrite packet fields the class analysis follows (relevant.ts). */
export const WRITER_TARGETS = new Set([
  'DNAT',
  'SNAT',
  'MASQUERADE',
  'REDIRECT',
  'NETMAP',
  'MARK',
  'CONNMARK',
  'NOTRACK',
  'CT',
]);

/** The name a rule jumps or goes to, when it is a chain of its table; null for verdicts and targets. */
export function jumpTarget(rule: Rule, chains: ReadonlyMap<string, Chain>): string | null {
  if (rule instanceof IptRule) {
    const t = rule.targetRef;
    if (!t || (t.kind === 'jump' && STANDARD_TARGETS.has(t.name))) return null;
    return chains.has(t.name) ? t.name : null;
  }
  const t = rule.target;
  return t && (t.kind === 'jump' || t.kind === 'goto') ? t.chain : null;
}

/** The target's name without compiling the rule (`DNAT`, `MARK`, a chain name, `ACCEPT`). */
export function targetName(rule: Rule): string | null {
  if (rule instanceof IptRule) return rule.targetRef?.name ?? null;
  const t = rule.target;
  if (!t) return null;
  return t.kind === 'verdict'
    ? t.verdict
    : t.kind === 'target'
      ? t.module.name
      : t.kind === 'unknown'
        ? t.name
        : t.chain;
}

const MANY_CALLERS = 256;

const HOOK_BIT: Record<HookName, number> = { PREROUTING: 1, INPUT: 2, FORWARD: 4, OUTPUT: 8, POSTROUTING: 16 };

export function hookBit(h: HookName): number {
  return HOOK_BIT[h];
}

export function hooksOf(mask: number): HookName[] {
  return HOOKS.filter(h => (mask & HOOK_BIT[h]) !== 0);
}

/** Every hook a table's chains can run in. */
export function tableMask(table: string): number {
  let m = 0;
  for (const h of Object.keys(TABLE_HOOKS[table]?.hooks ?? {})) m |= HOOK_BIT[h as HookName];
  return m;
}

export class JumpGraph {
  /** Per side: table → target chain → the rules that jump or go there. */
  private readonly callers: [Map<string, Map<string, Rule[]>>, Map<string, Map<string, Rule[]>>] = [
    new Map(),
    new Map(),
  ];
  private readonly writerMemo = new Map<string, Map<string, Rule[]>>();
  private readonly nodeMemo = new Map<string, ChainNode | null>();
  private readonly outMemo = new Map<string, Edge[]>();
  private readonly hookMemo = new Map<string, number>();

  private indexed = false;

  constructor(readonly sides: readonly [Ruleset, Ruleset]) {}

  /**
   * The callers of every chain, read on first use (one pass over both rulesets): a comparison whose
   * changed chains are built-in (filter INPUT) never needs it.
   */
  private index(): void {
    if (this.indexed) return;
    this.indexed = true;
    this.sides.forEach((rs, s) => {
      for (const table of rs.tables.values()) {
        const byTarget = new Map<string, Rule[]>();
        this.callers[s]!.set(table.name, byTarget);
        for (const chain of table.chains.values()) {
          for (const rule of chain.rules) {
            const name = targetName(rule);
            if (name === null || !table.chains.has(name)) continue;
            const list = byTarget.get(name);
            if (list) list.push(rule);
            else byTarget.set(name, [rule]);
          }
        }
      }
    });
  }

  /** The tables that exist on either side. */
  tables(): string[] {
    return [...new Set([...this.sides[0].tables.keys(), ...this.sides[1].tables.keys()])];
  }

  /** chain → the rules of a table (either side) whose target rewrites packets; read on first use. */
  writers(table: string): Map<string, Rule[]> {
    const memo = this.writerMemo.get(table);
    if (memo) return memo;
    const out = new Map<string, Rule[]>();
    for (const rs of this.sides) {
      for (const chain of rs.tables.get(table)?.chains.values() ?? []) {
        for (const rule of chain.rules) {
          const name = targetName(rule);
          if (name === null || !WRITER_TARGETS.has(name)) continue;
          const list = out.get(chain.name);
          if (list) list.push(rule);
          else out.set(chain.name, [rule]);
        }
      }
    }
    this.writerMemo.set(table, out);
    return out;
  }

  node(key: string): ChainNode | null {
    const memo = this.nodeMemo.get(key);
    if (memo !== undefined) return memo;
    const sp = key.indexOf(' ');
    const table = key.slice(0, sp);
    const name = key.slice(sp + 1);
    const a = this.sides[0].tables.get(table)?.chains.get(name);
    const b = this.sides[1].tables.get(table)?.chains.get(name);
    const n = a || b ? { key, table, name, builtin: (a ?? b)!.builtin, sides: [a, b] as const } : null;
    this.nodeMemo.set(key, n);
    return n;
  }

  /** The rules of a chain on both sides (each side's list; an unchanged chain's lists are equal). */
  rules(key: string): { side: 0 | 1; rules: readonly Rule[] }[] {
    const n = this.node(key);
    if (!n) return [];
    const out: { side: 0 | 1; rules: readonly Rule[] }[] = [];
    if (n.sides[0]) out.push({ side: 0, rules: n.sides[0].rules });
    if (n.sides[1]) out.push({ side: 1, rules: n.sides[1].rules });
    return out;
  }

  /** Jumps and gotos out of a chain, on both sides. */
  out(key: string): readonly Edge[] {
    const memo = this.outMemo.get(key);
    if (memo) return memo;
    const n = this.node(key);
    const edges: Edge[] = [];
    n?.sides.forEach((c, s) => {
      const chains = this.sides[s]!.tables.get(n.table)?.chains;
      c?.rules.forEach((rule, pos) => {
        const to = chains ? jumpTarget(rule, chains) : null;
        if (to !== null) edges.push({ to: chainKey(n.table, to), rule, side: s as 0 | 1, pos });
      });
    });
    this.outMemo.set(key, edges);
    return edges;
  }

  /** The chains that jump or go to a chain, on either side. */
  callersOf(key: string): string[] {
    const n = this.node(key);
    if (!n) return [];
    this.index();
    const out = new Set<string>();
    for (const side of this.callers)
      for (const r of side.get(n.table)?.get(n.name) ?? []) out.add(chainKey(n.table, r.chain));
    return [...out];
  }

  private callerCount(n: ChainNode): number {
    this.index();
    return (
      (this.callers[0].get(n.table)?.get(n.name)?.length ?? 0) +
      (this.callers[1].get(n.table)?.get(n.name)?.length ?? 0)
    );
  }

  /**
   * Bit mask of the hooks a chain can run in: the built-in chains that reach it (on either side). A chain
   * called from very many places (kube-proxy's KUBE-MARK-MASQ, from every Service) is taken to run in every
   * hook of its table rather than walking the whole graph above it: more hooks only mean more candidates.
   */
  hookMask(key: string): number {
    const memo = this.hookMemo.get(key);
    if (memo !== undefined) return memo;
    const n = this.node(key);
    // A built-in chain cannot be jumped to (iptables refuses `-j INPUT`): its own hook is all.
    if (n?.builtin) {
      this.hookMemo.set(key, this.ownMask(key));
      return this.ownMask(key);
    }
    if (n && this.callerCount(n) > MANY_CALLERS) {
      this.hookMemo.set(key, tableMask(n.table));
      return tableMask(n.table);
    }
    // Iterative post-order over callers; a chain on a (refused) loop counts as reached by nothing more.
    const stack: { key: string; callers: string[]; i: number; mask: number }[] = [
      { key, callers: this.callersOf(key), i: 0, mask: this.ownMask(key) },
    ];
    const onStack = new Set([key]);
    while (stack.length) {
      const top = stack[stack.length - 1]!;
      if (top.i < top.callers.length) {
        const from = top.callers[top.i++]!;
        const fromNode = this.node(from);
        const m =
          this.hookMemo.get(from) ??
          (fromNode && this.callerCount(fromNode) > MANY_CALLERS ? tableMask(fromNode.table) : undefined);
        if (m !== undefined) top.mask |= m;
        else if (!onStack.has(from)) {
          onStack.add(from);
          stack.push({ key: from, callers: this.callersOf(from), i: 0, mask: this.ownMask(from) });
        }
        continue;
      }
      stack.pop();
      onStack.delete(top.key);
      this.hookMemo.set(top.key, top.mask);
      if (stack.length) stack[stack.length - 1]!.mask |= top.mask;
    }
    return this.hookMemo.get(key)!;
  }

  private ownMask(key: string): number {
    const n = this.node(key);
    if (!n?.builtin) return 0;
    const hook = n.name as HookName;
    return TABLE_HOOKS[n.table]?.hooks[hook] !== undefined ? HOOK_BIT[hook] : 0;
  }

  /** Every chain reachable from `seeds` along jumps (`out`) or against them (`in`), seeds included. */
  closure(seeds: Iterable<string>, dir: 'out' | 'in'): Set<string> {
    const seen = new Set<string>();
    const work = [...seeds];
    while (work.length) {
      const k = work.pop()!;
      if (seen.has(k)) continue;
      seen.add(k);
      const next = dir === 'out' ? this.out(k).map(e => e.to) : this.callersOf(k);
      for (const t of next) if (!seen.has(t)) work.push(t);
    }
    return seen;
  }
}
