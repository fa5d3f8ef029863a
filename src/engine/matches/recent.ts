/**
 * `-m recent` (`xt_recent.c`). kube-proxy's session affinity uses `--rcheck --seconds 10800 --reap` in
 * KUBE-SVC chains and `--set` in KUBE-SEP chains, with list names equal to the KUBE-SEP chain. Whether the
 * client has a live entry in a list is not in any file: the caller says so (EvalEnv.recent, default none).
 */
import { defineMatch, unknown } from './types.ts';
import { jointAtom, lastArg } from './knowledge.ts';

interface RecentSpec {
  readonly name: string;
  readonly action: 'set' | 'rcheck' | 'update' | 'remove';
  readonly negated: boolean;
  readonly hitcount: number | null;
  readonly seconds: number | null;
  readonly dest: boolean;
}

export const recentMatch = defineMatch<RecentSpec>({
  name: 'recent',
  options: [
    { name: '--name', args: 1 },
    { name: '--set', args: 0, negatable: true },
    { name: '--rcheck', args: 0, negatable: true },
    { name: '--update', args: 0, negatable: true },
    { name: '--remove', args: 0, negatable: true },
    { name: '--seconds', args: 1 },
    { name: '--reap', args: 0 },
    { name: '--hitcount', args: 1 },
    { name: '--rttl', args: 0 },
    { name: '--rsource', args: 0 },
    { name: '--rdest', args: 0 },
    { name: '--mask', args: 1 },
  ],
  compile(opts, ctx) {
    let action: RecentSpec['action'] | null = null;
    let negated = false;
    for (const o of opts) {
      if (o.name === '--set' || o.name === '--rcheck' || o.name === '--update' || o.name === '--remove') {
        if (action) ctx.report(o, 'bad-argument', `recent takes one of --set, --rcheck, --update, --remove`);
        action = o.name.slice(2) as RecentSpec['action'];
        negated = o.negated;
      }
    }
    const hit = opts.find(o => o.name === '--hitcount')?.args[0];
    const sec = opts.find(o => o.name === '--seconds')?.args[0];
    return {
      name: opts.find(o => o.name === '--name')?.args[0] ?? 'DEFAULT',
      action: action ?? 'set',
      negated,
      hitcount: hit === undefined ? null : Number(hit),
      seconds: sec === undefined ? null : Number(sec),
      dest: opts.some(o => o.name === '--rdest'),
    };
  },
  test(spec, _pkt, env) {
    // --set always matches (it records the address); the others look the address up.
    if (spec.action === 'set') return !spec.negated;
    const live = env.recent.has(spec.name);
    if (live && spec.hitcount !== null)
      return unknown(`recent list ${spec.name}: whether the client was seen ${spec.hitcount} times is not known`);
    return live !== spec.negated;
  },
  why: spec =>
    `recent list ${spec.name} has no live entry for this ${spec.dest ? 'destination' : 'client'} (pass --affinity ${spec.name} to assume one)`,
  describe: spec =>
    spec.action === 'set'
      ? `remember the ${spec.dest ? 'destination' : 'source'} in list ${spec.name}`
      : `${spec.negated ? 'not ' : ''}seen in list ${spec.name}${spec.seconds !== null ? ` within ${spec.seconds}s` : ''}`,
  // A list the rule looks up (--rcheck, --update): whether the client has an entry is a caller-stated fact.
  diffFacts: (_spec, options) => ({
    recentLists: options.some(o => o.name === '--rcheck' || o.name === '--update')
      ? [lastArg(options, '--name') ?? 'DEFAULT']
      : [],
  }),
  lintAtoms: jointAtom,
  lintNature: 'varying',
});
