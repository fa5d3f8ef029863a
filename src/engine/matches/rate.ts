/**
 * Rate and count limits: `-m limit` (`xt_limit.c`), `-m hashlimit` (`xt_hashlimit.c`), `-m connlimit`
 * (`xt_connlimit.c`). Their state is not in any file, so the trace assumes the packet is within the limit
 * (no flood in progress, no other connections from the client) and says so.
 */
import { defineMatch } from './types.ts';
import { NO_FACTS, jointAtom } from './knowledge.ts';

export const limitMatch = defineMatch<{ text: string }>({
  name: 'limit',
  options: [
    { name: '--limit', args: 1 },
    { name: '--limit-burst', args: 1 },
  ],
  compile: opts => ({ text: opts.map(o => `${o.name} ${o.args.join(' ')}`).join(' ') }),
  test: s => ({ kind: 'assume', value: true, note: `assumed within the rate limit (${s.text})` }),
  why: () => 'rate limit exceeded',
  describe: s => `while under the rate limit ${s.text}`,
  // A rate limit is assumed, and the trace says so: it adds no constant to cut on.
  diffFacts: () => NO_FACTS,
  lintAtoms: jointAtom,
  // A rate meter's answer changes from one packet to the next.
  lintNature: 'varying',
});

export const hashlimitMatch = defineMatch<{ above: boolean; text: string }>({
  name: 'hashlimit',
  options: [
    { name: '--hashlimit-upto', aliases: ['--hashlimit'], args: 1 },
    { name: '--hashlimit-above', args: 1 },
    { name: '--hashlimit-burst', args: 1 },
    { name: '--hashlimit-mode', args: 1 },
    { name: '--hashlimit-srcmask', args: 1 },
    { name: '--hashlimit-dstmask', args: 1 },
    { name: '--hashlimit-name', args: 1 },
    { name: '--hashlimit-htable-size', args: 1 },
    { name: '--hashlimit-htable-max', args: 1 },
    { name: '--hashlimit-htable-expire', args: 1 },
    { name: '--hashlimit-htable-gcinterval', args: 1 },
    { name: '--hashlimit-rate-match', args: 0 },
    { name: '--hashlimit-rate-interval', args: 1 },
  ],
  compile: opts => ({
    above: opts.some(o => o.name === '--hashlimit-above'),
    text: opts.map(o => `${o.name} ${o.args.join(' ')}`).join(' '),
  }),
  test: s => ({
    kind: 'assume',
    value: !s.above,
    note: `assumed within the hashlimit (${s.text}), so it ${s.above ? 'does not match' : 'matches'}`,
  }),
  why: s => (s.above ? 'assumed under the --hashlimit-above rate' : 'hashlimit exceeded'),
  describe: s => `hashlimit ${s.text}`,
  diffFacts: () => NO_FACTS,
  lintAtoms: jointAtom,
  // A rate meter's answer changes from one packet to the next.
  lintNature: 'varying',
});

export const connlimitMatch = defineMatch<{ above: boolean; n: number; text: string }>({
  name: 'connlimit',
  options: [
    { name: '--connlimit-upto', args: 1 },
    { name: '--connlimit-above', args: 1, negatable: true },
    { name: '--connlimit-mask', args: 1 },
    { name: '--connlimit-saddr', args: 0 },
    { name: '--connlimit-daddr', args: 0 },
  ],
  compile(opts, ctx) {
    const o = opts.find(x => x.name === '--connlimit-upto' || x.name === '--connlimit-above');
    const n = Number(o?.args[0]);
    if (!o || !Number.isInteger(n) || n < 0)
      ctx.report(o ?? null, 'bad-argument', 'connlimit needs --connlimit-upto N or --connlimit-above N');
    const above = o?.name === '--connlimit-above' ? !o.negated : false;
    return { above, n, text: opts.map(o2 => `${o2.name} ${o2.args.join(' ')}`).join(' ') };
  },
  // With no other connection from the client, the count is 1 (this one).
  test: s => ({
    kind: 'assume',
    value: s.above ? 1 > s.n : 1 <= s.n,
    note: `assumed this is the client's only connection (${s.text})`,
  }),
  why: s => `1 connection is ${s.above ? 'not above' : 'above'} ${s.n}`,
  describe: s => `connection count ${s.above ? 'above' : 'up to'} ${s.n}`,
  diffFacts: () => NO_FACTS,
  lintAtoms: jointAtom,
  // A rate meter's answer changes from one packet to the next.
  lintNature: 'varying',
});
