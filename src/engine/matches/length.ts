/** `-m length --length a[:b]` (`xt_length.c`): the IP packet's total length; unknown unless the caller gives it. */
import { defineMatch, unknown } from './types.ts';
import { type PortRange, firstArg, formatPortRange, inPortRange, parsePortRange } from './util.ts';
import { optionAtoms } from './knowledge.ts';

export const lengthMatch = defineMatch<{ negated: boolean; range: PortRange }>({
  name: 'length',
  options: [{ name: '--length', args: 1, negatable: true }],
  compile(opts, ctx) {
    const o = opts.find(x => x.name === '--length');
    const text = o ? firstArg(o, ctx) : '';
    const range = parsePortRange(text);
    if (!range) ctx.report(o ?? null, 'bad-argument', `--length takes a length or range a:b, not '${text}'`);
    return { negated: o?.negated ?? false, range: range ?? { from: 0, to: 65535 } };
  },
  test(s, pkt) {
    if (pkt.length === null) return unknown('the packet length is not given');
    return inPortRange(s.range, pkt.length) !== s.negated;
  },
  why: (s, pkt) =>
    `${s.negated ? '! ' : ''}--length ${formatPortRange(s.range)} ${s.negated ? '∋' : '∌'} ${pkt.length}`,
  describe: s => `packet length ${s.negated ? 'not ' : ''}${formatPortRange(s.range)}`,
  // Packet length is not a header field the diff models.
  diffFacts: 'opaque',
  lintAtoms: optionAtoms,
  lintNature: 'stateful',
});
