/**
 * What a ruleset's first trace computes once and keeps — the mark bits any rule reads (`liveMarks`,
 * budget.ts), the candidate indexes of long chains and the words of their `-d` networks (chain-index.ts) —
 * computed ahead of it, one step at a time: the editor's engine worker runs the steps in short slices when
 * a dump's diagnostics are done, so the first Trace Packet does not pay for them (on the 320k-rule
 * kube-proxy bench dump, in process: that trace's CPU 364–473 ms without, 144–169 ms after these steps).
 * Traces answer the same with or without them: they fill the same caches earlier.
 */
import { formatNet } from '../net/addr.ts';
import type { Ruleset } from '../model.ts';
import { liveMarks } from './budget.ts';
import { chainIndex } from './chain-index.ts';

/** `-d` words filled per step: a few milliseconds. */
const WORDS_PER_STEP = 2000;

export function* prepareTraceSteps(rs: Ruleset): Generator<void, void> {
  liveMarks(rs, false);
  yield;
  for (const t of rs.tables.values()) {
    for (const c of t.chains.values()) {
      const index = chainIndex(c);
      if (!index?.dstNets) continue;
      yield;
      // As skippedMiss fills them on first use.
      const { dstNets, dstWords } = index;
      for (let i = 0; i < dstNets.length; i++) {
        const net = dstNets[i];
        if (net && dstWords[i] === undefined) dstWords[i] = formatNet(net);
        if (i % WORDS_PER_STEP === WORDS_PER_STEP - 1) yield;
      }
    }
  }
}
