/**
 * A path's why-not record: the rules evaluated that did not match, in order. The rules a destination index
 * skipped (thousands in KUBE-SERVICES, every Service before the packet's) are kept as one run whose
 * entries are made only when the full list is read (`list`); the grouped form (`grouped`, the CLI's
 * `--why-not=grouped`) writes such a run as one entry and never makes them. A forked path copies the
 * record's parts, not its entries: the forks share the runs and the misses recorded before the fork.
 */
import type { HookName } from '../hooks.ts';
import type { Chain } from '../model.ts';
import { type ChainIndex, skippedMiss } from './chain-index.ts';
import type { TraceMiss, TraceMissGroup } from './trace-types.ts';

/** Rules `from`…`to - 1` of an indexed chain, each skipped for its `-d` naming another address (`skipExplained`). */
export class SkipRun {
  private list: TraceMiss[] | null = null;

  constructor(
    readonly hook: HookName,
    readonly table: string,
    readonly chain: Chain,
    readonly index: ChainIndex,
    readonly from: number,
    readonly to: number,
    /** `formatAddr` of the packet's destination when the rules were skipped. */
    readonly dst: string,
  ) {}

  get length(): number {
    return this.to - this.from;
  }

  /** The run's misses as the plain walk records them (same fields and words), made once and shared. */
  misses(): TraceMiss[] {
    if (this.list) return this.list;
    const { hook, table, chain, index, dst } = this;
    const out: TraceMiss[] = [];
    for (let i = this.from; i < this.to; i++) {
      const rule = chain.rules[i]!;
      out.push({
        hook,
        table,
        chain: rule.chain,
        rule: rule.index,
        line: rule.line + 1,
        reason: skippedMiss(index, i, dst)!,
      });
    }
    return (this.list = out);
  }

  group(): TraceMissGroup {
    const first = this.chain.rules[this.from]!;
    const last = this.chain.rules[this.to - 1]!;
    return {
      hook: this.hook,
      table: this.table,
      chain: first.chain,
      rule: first.index,
      line: first.line + 1,
      reason: `-d ∌ ${this.dst}: each rule's -d is another address`,
      count: this.length,
      lastRule: last.index,
      lastLine: last.line + 1,
    };
  }
}

export class MissLog {
  /** How many misses the record holds (a run counts its rules): what the budgets count. */
  length = 0;

  constructor(private readonly parts: (TraceMiss | SkipRun)[] = []) {}

  push(m: TraceMiss): void {
    this.parts.push(m);
    this.length++;
  }

  pushRun(r: SkipRun): void {
    this.parts.push(r);
    this.length += r.length;
  }

  fork(): MissLog {
    const copy = new MissLog([...this.parts]);
    copy.length = this.length;
    return copy;
  }

  /** Every miss in order. Entries recorded before a fork are the same objects in both paths' lists. */
  list(): TraceMiss[] {
    // One concat: a run's (cached) list is copied in one block, not pushed entry by entry — a trace makes
    // this list for each of its endings, thousands of entries each at 300k rules.
    return ([] as TraceMiss[]).concat(...this.parts.map(p => (p instanceof SkipRun ? p.misses() : p)));
  }

  /** The misses with consecutive rules of one chain missed for the same reason (and each index run) as one entry. */
  grouped(): TraceMissGroup[] {
    const out: TraceMissGroup[] = [];
    let open: { -readonly [K in keyof TraceMissGroup]: TraceMissGroup[K] } | null = null;
    for (const p of this.parts) {
      if (p instanceof SkipRun) {
        out.push(p.group());
        open = null;
        continue;
      }
      if (
        open &&
        open.hook === p.hook &&
        open.table === p.table &&
        open.chain === p.chain &&
        open.reason === p.reason &&
        p.rule === open.lastRule + 1
      ) {
        open.count++;
        open.lastRule = p.rule;
        open.lastLine = p.line;
        continue;
      }
      // Written out rather than spread: a spread of the miss cost microseconds each here.
      open = {
        hook: p.hook,
        table: p.table,
        chain: p.chain,
        rule: p.rule,
        line: p.line,
        reason: p.reason,
        count: 1,
        lastRule: p.rule,
        lastLine: p.line,
      };
      out.push(open);
    }
    return out;
  }
}
