/** `-m iprange --src-range/--dst-range a-b` (`xt_iprange.c`), inclusive, each with `!`. */
import { type Addr, formatAddr, inRange, parseAddrRange } from '../net/addr.ts';
import { defineMatch } from './types.ts';
import { firstArg } from './util.ts';
import { optionAtoms } from './knowledge.ts';
import { type Span, addrValue } from '../net/span.ts';

type R = { negated: boolean; from: Addr; to: Addr; text: string } | null;

export const iprangeMatch = defineMatch<{ src: R; dst: R }>({
  name: 'iprange',
  options: [
    { name: '--src-range', args: 1, negatable: true },
    { name: '--dst-range', args: 1, negatable: true },
  ],
  compile(opts, ctx) {
    const spec: { src: R; dst: R } = { src: null, dst: null };
    for (const o of opts) {
      const text = firstArg(o, ctx);
      const r = parseAddrRange(text);
      if (!r || !text.includes('-')) ctx.report(o, 'bad-address', `'${text}' is not an address range (from-to)`);
      else spec[o.name === '--src-range' ? 'src' : 'dst'] = { negated: o.negated, ...r, text };
    }
    return spec;
  },
  test: (s, pkt) =>
    !((s.src && inRange(s.src, pkt.src) === s.src.negated) || (s.dst && inRange(s.dst, pkt.dst) === s.dst.negated)),
  why(s, pkt) {
    if (s.src && inRange(s.src, pkt.src) === s.src.negated)
      return `${s.src.negated ? '! ' : ''}--src-range ${s.src.text} ${s.src.negated ? '∋' : '∌'} ${formatAddr(pkt.src)}`;
    return `${s.dst!.negated ? '! ' : ''}--dst-range ${s.dst!.text} ${s.dst!.negated ? '∋' : '∌'} ${formatAddr(pkt.dst)}`;
  },
  describe: s =>
    [
      s.src && `source ${s.src.negated ? 'outside' : 'in'} ${s.src.text}`,
      s.dst && `destination ${s.dst.negated ? 'outside' : 'in'} ${s.dst.text}`,
    ]
      .filter(Boolean)
      .join(', '),
  diffFacts: (_s, options, family) => {
    const srcCuts: Span[] = [];
    const dstCuts: Span[] = [];
    for (const o of options) {
      const r = parseAddrRange(o.args[0] ?? '');
      if (r && r.from.v === family)
        (o.name === '--src-range' ? srcCuts : dstCuts).push({ lo: addrValue(r.from), hi: addrValue(r.to) });
    }
    return { srcCuts, dstCuts, tests: options.map(o => (o.name === '--src-range' ? 'src' : 'dst')) };
  },
  lintAtoms: optionAtoms,
  lintNature: 'fixed',
});
