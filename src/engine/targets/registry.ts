/** Every target the evaluator models, by the name `-j` uses. ACCEPT/DROP/RETURN/QUEUE are built in. */
import { ctTarget, notrackTarget } from './conntrack.ts';
import { connmarkTarget, markTarget } from './mark.ts';
import { dnatTarget, masqueradeTarget, netmapTarget, redirectTarget, snatTarget } from './nat.ts';
import { PASSIVE_TARGETS } from './passive.ts';
import { nfqueueTarget, synproxyTarget, tproxyTarget } from './queue.ts';
import { rejectTarget } from './reject.ts';
import type { TargetModule } from './types.ts';

const ALL: TargetModule<unknown>[] = [
  dnatTarget,
  snatTarget,
  masqueradeTarget,
  redirectTarget,
  netmapTarget,
  markTarget,
  connmarkTarget,
  rejectTarget,
  notrackTarget,
  ctTarget,
  nfqueueTarget,
  tproxyTarget,
  synproxyTarget,
  ...PASSIVE_TARGETS,
];

export const TARGETS: ReadonlyMap<string, TargetModule<unknown>> = new Map(ALL.map(t => [t.name, t]));

/** Verdicts every table knows without an extension. */
export const STANDARD_TARGETS = new Set(['ACCEPT', 'DROP', 'RETURN', 'QUEUE']);
