/**
 * `-m mark --mark value[/mask]` (`xt_mark.c`: `((skb->mark & mask) == mark) ^ invert`) and `-m connmark`
 * (`xt_connmark.c`, the same test on the connection's mark).
 */
import type { PacketState } from '../net/packet.ts';
import { optionAtoms } from './knowledge.ts';
import { defineMatch } from './types.ts';
import { firstArg, formatMarkMask, hex, not, parseMarkMask } from './util.ts';

interface MarkSpec {
  readonly negated: boolean;
  readonly value: number;
  readonly mask: number;
}

function make(name: 'mark' | 'connmark', read: (p: PacketState) => number, label: string) {
  // xt_connmark.c: without a conntrack entry (untracked or invalid packets) the match fails, `!` or not.
  const noCt = (p: PacketState) => name === 'connmark' && (p.ct.state === 'UNTRACKED' || p.ct.state === 'INVALID');
  return defineMatch<MarkSpec>({
    name,
    options: [{ name: '--mark', args: 1, negatable: true }],
    compile(opts, ctx) {
      const o = opts.find(x => x.name === '--mark');
      if (!o) {
        ctx.report(null, 'missing-argument', `${name} needs --mark value[/mask]`);
        return { negated: false, value: 0, mask: 0 };
      }
      const text = firstArg(o, ctx);
      const v = parseMarkMask(text);
      if (!v) {
        ctx.report(o, 'bad-mark', `'${text}' is not a mark (value[/mask], hex or decimal, 32 bits)`);
        return { negated: o.negated, value: 0, mask: 0 };
      }
      return { negated: o.negated, value: v.value, mask: v.mask };
    },
    test: (s, pkt) => !noCt(pkt) && ((read(pkt) & s.mask) >>> 0 === s.value) !== s.negated,
    why: (s, pkt) =>
      noCt(pkt)
        ? `the packet has no conntrack entry (${pkt.ct.state}), so connmark never matches`
        : `${not(s.negated)}--mark ${formatMarkMask(s)} ${s.negated ? '=' : '≠'} ${hex(read(pkt))}`,
    describe: s => `${label} ${s.negated ? 'without' : 'with'} bits ${formatMarkMask(s)}`,
    // The packet mark's values cut the mark space; the connection mark is only tracked as tested.
    diffFacts: (_s, options) => ({
      marks:
        name === 'mark'
          ? options.flatMap(o => {
              const m = o.name === '--mark' ? parseMarkMask(o.args[0] ?? '') : null;
              return m ? [m] : [];
            })
          : [],
      tests: options.some(o => o.name === '--mark') ? [name === 'mark' ? 'mark' : 'ctmark'] : [],
    }),
    lintAtoms: optionAtoms,
    // MARK and CONNMARK rules change the marks.
    lintNature: 'stateful',
  });
}

export const markMatch = make('mark', p => p.mark, 'packet mark');
export const connmarkMatch = make('connmark', p => p.ct.mark, 'connection mark');
