/**
 * Which chains the class analysis must look at. A packet whose traces, on both sides, only ever evaluate
 * chains with identical rules behaves identically, so only packets that reach a changed chain can differ.
 * Their classes are cut by the constants of:
 *
 *   - the changed chains and everything they jump to (`full`: every rule counts);
 *   - the chains that rewrite a field a relevant rule tests before that rule runs (kube-proxy's
 *     KUBE-MARK-MASQ sets the mark KUBE-POSTROUTING tests; a DNAT chooses the address a FORWARD rule
 *     tests), found to a fixed point with the kernel's hook order (these join `full`);
 *   - the chains that lead to those (`all`, back to the built-in chains), of which only the rules that
 *     jump on towards them, and the rules before those that could catch the same packets, count.
 */
import { type HookName, type Rule, TABLE_HOOKS } from '../model.ts';
import type { Family } from '../net/addr.ts';
import { type RuleFacts, type Write, ruleFacts } from './facts.ts';
import { IptRule } from '../iptables/rule-node.ts';
import { type JumpGraph, hooksOf, tableMask, targetName } from './graph.ts';
import { chainKey } from './normalize.ts';
import { intersect } from './space.ts';

export interface Relevant {
  /** Chains all of whose rules cut classes. */
  readonly full: ReadonlySet<string>;
  /** Every chain the analysis walks: `full` plus the ancestors. */
  readonly all: ReadonlySet<string>;
}

type Field = 'dst' | 'src' | 'mark' | 'ctmark' | 'ctstate';

/** The fields each rewriting target may change (facts.ts reads the exact values when it matters). */
const WRITES: Readonly<Record<string, readonly Field[]>> = {
  DNAT: ['dst'],
  REDIRECT: ['dst'],
  SNAT: ['src'],
  MASQUERADE: ['src'],
  NETMAP: ['dst', 'src'],
  MARK: ['mark'],
  CONNMARK: ['mark', 'ctmark'],
  NOTRACK: ['ctstate'],
  CT: ['ctstate'],
};

/**
 * The stages a packet passes, in order, on each of its possible journeys (pipeline.ts): arriving and
 * delivered, arriving and forwarded, and sent by the node (looping back through `lo` without nat).
 */
const JOURNEYS: readonly (readonly string[])[] = (() => {
  const stages = (hooks: HookName[], skipNat = false) =>
    hooks.flatMap(h =>
      Object.entries(TABLE_HOOKS)
        .filter(([t, v]) => v.hooks[h] !== undefined && !(skipNat && t === 'nat'))
        .sort((a, b) => a[1].hooks[h]! - b[1].hooks[h]!)
        .map(([t]) => `${h} ${t}`),
    );
  return [
    stages(['PREROUTING', 'INPUT']),
    stages(['PREROUTING', 'FORWARD', 'POSTROUTING']),
    [...stages(['OUTPUT', 'POSTROUTING']), ...stages(['PREROUTING', 'INPUT'], true)],
  ];
})();

/** Whether a rewrite in (hooks, table) can happen before a test in (hooks, table) on some journey. */
export function canPrecede(wMask: number, wTable: string, tMask: number, tTable: string, nat: boolean): boolean {
  for (const wh of hooksOf(wMask)) {
    for (const th of hooksOf(tMask)) {
      const a = `${wh} ${wTable}`;
      const b = `${th} ${tTable}`;
      // A NAT binding ends its table's walk, so it never feeds a later rule of the same walk.
      if (a === b) {
        if (!nat) return true;
        continue;
      }
      if (JOURNEYS.some(j => j.indexOf(a) >= 0 && j.indexOf(b) > j.indexOf(a))) return true;
    }
  }
  return false;
}

/** Whether a rewrite can change how a rule's test answers. */
export function feeds(w: Write, r: RuleFacts): boolean {
  if (!('to' in w)) return r.tests.has(w.field);
  if (w.field === 'dst' && r.tests.has('out')) return true;
  if (r.addrtype || (w.field === 'dst' ? r.dstCuts : r.srcCuts).length) return true;
  const addr = w.field === 'dst' ? r.dst : r.src;
  if (addr && (addr.negated || !w.to || intersect(addr.value, w.to))) return true;
  const ports = w.field === 'dst' ? r.dports : r.sports;
  return w.ports !== null && ports.some(p => p.negated || p.value.some(s => intersect(s, w.ports!)));
}

/** Consumers (rules whose tests count) grouped by the field they test and the stage they run in. */
class Consumers {
  private readonly byField = new Map<Field | 'out', Map<string, { mask: number; table: string; rules: RuleFacts[] }>>();
  private readonly seen = new Set<Rule>();

  add(rule: Rule, mask: number, table: string, family: Family): boolean {
    if (this.seen.has(rule)) return false;
    this.seen.add(rule);
    const f = ruleFacts(rule, family);
    for (const t of f.tests) {
      let stages = this.byField.get(t);
      if (!stages) this.byField.set(t, (stages = new Map()));
      const k = `${mask} ${table}`;
      const group = stages.get(k);
      if (group) group.rules.push(f);
      else stages.set(k, { mask, table, rules: [f] });
    }
    return true;
  }

  /** Stage groups testing `field` that a rewrite in (mask, table) can precede. */
  reachable(field: Field, mask: number, table: string): RuleFacts[][] {
    const out: RuleFacts[][] = [];
    const nat = field === 'dst' || field === 'src';
    for (const f of field === 'dst' ? (['dst', 'out'] as const) : [field]) {
      for (const g of this.byField.get(f)?.values() ?? [])
        if (canPrecede(mask, table, g.mask, g.table, nat)) out.push(g.rules);
    }
    return out;
  }
}

export function relevantChains(g: JumpGraph, changed: ReadonlySet<string>, family: Family): Relevant {
  const full = new Set<string>(g.closure(changed, 'out'));
  const consumers = new Consumers();
  const addChain = (key: string) => {
    const node = g.node(key)!;
    for (const { rules } of g.rules(key)) for (const r of rules) consumers.add(r, g.hookMask(key), node.table, family);
  };
  for (const k of full) addChain(k);
  // Ancestry starts at the changed chains and the rewriters, not at what the changed chains jump to: a
  // shared chain below them (KUBE-MARK-MASQ) is reached from everywhere, but only its changed callers matter.
  const seeds = new Set(changed);
  let ancestors = g.closure(seeds, 'in');
  for (let round = 0; round < 64; round++) {
    let grew = false;
    // The rules that lead into the relevant part test fields too (a gate on a mark): they are consumers.
    for (const a of ancestors) {
      if (full.has(a)) continue;
      for (const e of g.out(a))
        if (ancestors.has(e.to) && consumers.add(e.rule, g.hookMask(a), g.node(a)!.table, family)) grew = true;
    }
    for (const table of g.tables()) {
      // Most rewriters cannot precede any test (kube-proxy's 100k DNATs against nat tests): decide that per
      // table before looking at a chain's hooks or a rule's options.
      const possible = new Set<Field>();
      for (const f of ['dst', 'src', 'mark', 'ctmark', 'ctstate'] as const)
        if (consumers.reachable(f, tableMask(table), table).length) possible.add(f);
      if (!possible.size) continue;
      for (const [chain, rules] of g.writers(table)) {
        const key = chainKey(table, chain);
        if (full.has(key)) continue;
        const mask = g.hookMask(key);
        const hit = rules.some(rule =>
          (WRITES[targetName(rule) ?? ''] ?? []).some(field => {
            if (!possible.has(field)) return false;
            const groups = consumers.reachable(field, mask, table);
            if (!groups.length) return false;
            const writes = ruleFacts(rule, family).writes.filter(x => x.field === field);
            return writes.some(x => groups.some(list => list.some(r => feeds(x, r))));
          }),
        );
        if (hit) {
          full.add(key);
          seeds.add(key);
          addChain(key);
          grew = true;
        }
      }
    }
    if (!grew) break;
    ancestors = g.closure(seeds, 'in');
  }
  return { full, all: new Set([...full, ...ancestors]) };
}

/** Targets that neither end the walk nor change the packet or state a later rule reads (iptables-extensions(8)). */
const PASS_TARGETS = new Set(['RETURN', 'LOG', 'NFLOG', 'ULOG', 'TRACE']);

/**
 * Whether a jump may be left out of a class's proof (the refinement shortcut of docs/diff.md): an iptables
 * `-j` (not `-g`, which would skip the rest of its chain on return) into a chain from which every packet
 * comes back unchanged. Every rule below it only logs, returns or jumps on, and none names `-m recent`
 * (`--set` records the packet for later rules). A packet that takes such a jump is back at the next rule
 * with the same fields, marks and state as one that does not, so the jump cannot tell a box's packets
 * apart. A chain that can ACCEPT, DROP, REJECT or rewrite can: a packet it accepts in filter FORWARD still
 * meets a changed nat POSTROUTING chain that a packet dropped by the policy never reaches.
 */
export function transparentJump(g: JumpGraph, rule: Rule, key: string): boolean {
  if (!(rule instanceof IptRule) || rule.targetRef?.kind !== 'jump') return false;
  for (const k of g.closure([key], 'out')) {
    for (const { rules } of g.rules(k)) {
      for (const r of rules) {
        if (!(r instanceof IptRule) || r.loadsModule('recent')) return false;
        const t = r.targetRef;
        if (t && !PASS_TARGETS.has(t.name) && !g.out(k).some(e => e.rule === r)) return false;
      }
    }
  }
  return true;
}
