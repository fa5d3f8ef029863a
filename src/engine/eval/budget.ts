/**
 * Bounds on the work of one trace. A hostile or mistaken dump can make a trace exponential (n chained
 * `-m statistic` forks give 2^n paths) or, if the loader's loop check is skipped, endless; the kernel never
 * runs such a ruleset, but the editor must still answer within seconds and in bounded memory. The evaluator
 * therefore counts, over the whole trace:
 *   - rule evaluations (`steps`): a runaway traversal stops with the rule where it stopped and why;
 *   - paths (`paths`): forks beyond the budget are not followed; their exact probability is kept as the
 *     remainder ("remaining probability p over N paths not enumerated");
 *   - recorded entries (`records`): each fork copies its path's steps, misses and events, which is where
 *     the memory goes, so copying is bounded too.
 * Paths that differ only in mark bits no rule reads are merged as they go (walk.ts), which keeps the
 * common harmless case — random branches that set marks nobody tests — linear.
 */
import type { Ruleset } from '../model.ts';
import { MATCHES } from '../matches/registry.ts';
import { mentionsBesidesJump } from '../iptables/rule-text.ts';
import { IptRule } from '../iptables/rule-node.ts';
import { type Rational, ZERO, add } from '../rational.ts';
import type { TraceAssumption } from './trace-types.ts';

export interface TraceLimits {
  readonly maxSteps: number;
  readonly maxPaths: number;
  readonly maxRecords: number;
  steps: number;
  paths: number;
  records: number;
  /** Why the trace stopped exploring, once it has; null while within every budget. */
  exhausted: string | null;
  /** Probability mass not followed, grouped by the assumptions it was conditional on. */
  readonly remainder: Map<string, { prob: Rational; paths: number; assumptions: readonly TraceAssumption[] }>;
}

export const DEFAULT_MAX_STEPS = 4_000_000;
export const DEFAULT_MAX_PATHS = 4096;
export const DEFAULT_MAX_RECORDS = 3_000_000;

export function newLimits(
  maxSteps = DEFAULT_MAX_STEPS,
  maxPaths = DEFAULT_MAX_PATHS,
  maxRecords = DEFAULT_MAX_RECORDS,
): TraceLimits {
  return { maxSteps, maxPaths, maxRecords, steps: 0, paths: 1, records: 0, exhausted: null, remainder: new Map() };
}

function assumptionsKey(list: readonly TraceAssumption[]): string {
  return list.map(a => `${a.table}/${a.chain}/${a.rule}/${a.assumed}`).join(',');
}

/** Keeps a path's probability as not enumerated (it is neither traced further nor lost). */
export function addRemainder(
  limits: TraceLimits,
  prob: Rational,
  paths: number,
  assumptions: readonly TraceAssumption[],
): void {
  const key = assumptionsKey(assumptions);
  const prev = limits.remainder.get(key);
  if (prev) {
    prev.prob = add(prev.prob, prob);
    prev.paths += paths;
  } else limits.remainder.set(key, { prob: add(ZERO, prob), paths, assumptions: [...assumptions] });
}

export interface LiveMarks {
  /** Bits of the packet mark (`skb->mark`) some rule reads, directly or through CONNMARK. */
  readonly nf: number;
  /** Bits of the connection mark some rule reads. */
  readonly ct: number;
}

const ALL = 0xffffffff;

const live = new WeakMap<Ruleset, LiveMarks>();

/**
 * Which mark bits any rule of the ruleset reads. `-m mark`/`-m connmark` read their mask; MARK and
 * CONNMARK --set-xmark change each bit from that bit alone (`(mark & ~mask) ^ value`, xt_mark.c), so a bit
 * nobody reads stays unread; CONNMARK --save-mark / --restore-mark copy bits between the two marks
 * (xt_connmark.c), so a bit read on one side is read on the other. Anything not understood (an unknown
 * module or target naming a mark, rpfilter's --validmark, an interceptor such as IPVS fwmark services)
 * reads every bit. Only rules whose text mentions "mark" (besides a jump to a chain) are compiled.
 */
export function liveMarks(rs: Ruleset, hasInterceptors: boolean): LiveMarks {
  if (hasInterceptors) return { nf: ALL, ct: ALL };
  const cached = live.get(rs);
  if (cached) return cached;
  let nf = 0;
  let ct = 0;
  const copies: { kind: 'save' | 'restore'; nfmask: number; ctmask: number }[] = [];
  for (const t of rs.tables.values()) {
    for (const c of t.chains.values()) {
      for (const r of c.rules) {
        // Only match and target modules are read below: a rule with neither (an nft rule: its program is
        // its own) adds nothing, and asking whether its text mentions a mark lowered every rule of a lazily
        // read nft script and kept each program (kube-proxy's 43 MB script: 790 MB of heap after the first
        // trace, past the editor worker's heap limit at 101 MB). An iptables rule is not compiled for it.
        if (!(r instanceof IptRule) && r.target === null && r.matches.length === 0) continue;
        // A jump to a chain named …MARK… reads no mark: kube-proxy's 100k `-j KUBE-MARK-MASQ` rules of a
        // 320k-rule dump stay uncompiled (they held 40 MB).
        if (!mentionsBesidesJump(r, 'mark', name => t.chains.has(name))) continue;
        for (const m of r.matches) {
          const name = m.module.name;
          const spec = m.spec as { mask?: number } | null;
          if (name === 'mark') nf |= spec?.mask ?? ALL;
          else if (name === 'connmark') ct |= spec?.mask ?? ALL;
          else if (name === 'rpfilter' || name === 'socket' || !MATCHES.has(name)) {
            nf = ALL;
            ct = ALL;
          }
        }
        const tg = r.target;
        if (!tg || tg.kind !== 'target') {
          if (tg?.kind === 'unknown') {
            nf = ALL;
            ct = ALL;
          }
          continue;
        }
        const tname = tg.module.name;
        const spec = tg.spec as { kind?: string; nfmask?: number; ctmask?: number } | null;
        if (tname === 'MARK') continue;
        if (tname === 'CONNMARK') {
          if (spec?.kind === 'save' || spec?.kind === 'restore')
            copies.push({ kind: spec.kind, nfmask: spec.nfmask ?? ALL, ctmask: spec.ctmask ?? ALL });
          continue;
        }
      }
    }
  }
  // A copied bit that is read on the receiving side is read on the sending side; two rounds reach the
  // fixpoint (save and restore each move bits one way).
  for (let round = 0; round < 2; round++) {
    for (const c of copies) {
      if (c.kind === 'save') nf |= ct & c.nfmask;
      else ct |= nf & c.ctmask;
    }
  }
  const out = { nf: nf >>> 0, ct: ct >>> 0 };
  live.set(rs, out);
  return out;
}
