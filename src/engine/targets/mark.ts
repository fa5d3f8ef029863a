/**
 * `MARK` (`xt_mark.c` mark_tg: `mark = (mark & ~mask) ^ value`) and `CONNMARK` (`xt_connmark.c`, the same
 * on the connection's mark, plus save/restore between the two). Every option form is reduced to the
 * kernel's (value, mask) pair exactly as libxt_MARK.c does: `--set-xmark v/m` → (v, m); `--set-mark v/m` →
 * (v, v|m); `--or-mark v` → (v, v); `--and-mark v` → (0, ~v); `--xor-mark v` → (v, 0). iptables-save then
 * prints every form as `--set-xmark`.
 */
import type { PacketState } from '../net/packet.ts';
import { hex, parseMarkMask, parseU32 } from '../matches/util.ts';
import type { ParsedOption, CompileContext } from '../matches/types.ts';
import { CONTINUE, defineTarget } from './types.ts';

interface XMark {
  readonly value: number;
  readonly mask: number;
  readonly text: string;
}

/** Reduces MARK/CONNMARK --set/--or/--and/--xor forms to the kernel's xmark (value, mask). */
function xmarkOf(o: ParsedOption, ctx: CompileContext): XMark | null {
  const text = o.args[0] ?? '';
  const bad = () => {
    ctx.report(o, 'bad-mark', `'${text}' is not a mark (value[/mask], 32 bits)`);
    return null;
  };
  switch (o.name) {
    case '--set-xmark': {
      const v = parseMarkMask(text);
      return v ? { ...v, text: `${o.name} ${text}` } : bad();
    }
    case '--set-mark': {
      const v = parseMarkMask(text);
      return v ? { value: v.value, mask: (v.mask | v.value) >>> 0, text: `${o.name} ${text}` } : bad();
    }
    case '--or-mark': {
      const v = parseU32(text);
      return v === null ? bad() : { value: v, mask: v, text: `${o.name} ${text}` };
    }
    case '--and-mark': {
      const v = parseU32(text);
      return v === null ? bad() : { value: 0, mask: ~v >>> 0, text: `${o.name} ${text}` };
    }
    case '--xor-mark': {
      const v = parseU32(text);
      return v === null ? bad() : { value: v, mask: 0, text: `${o.name} ${text}` };
    }
  }
  return null;
}

function applyXmark(old: number, x: XMark): number {
  return (((old & ~x.mask) >>> 0) ^ x.value) >>> 0;
}

const XMARK_OPTS = ['--set-xmark', '--set-mark', '--or-mark', '--and-mark', '--xor-mark'];

export const markTarget = defineTarget<XMark | null>({
  name: 'MARK',
  options: XMARK_OPTS.map(name => ({ name, args: 1 })),
  compile(opts, ctx) {
    const o = opts.find(x => XMARK_OPTS.includes(x.name));
    if (!o) {
      ctx.report(null, 'missing-argument', 'MARK needs --set-xmark, --set-mark, --or-mark, --and-mark or --xor-mark');
      return null;
    }
    return xmarkOf(o, ctx);
  },
  apply(spec, pkt) {
    if (!spec) return { effect: CONTINUE, text: 'MARK (invalid)' };
    const before = pkt.mark;
    pkt.mark = applyXmark(before, spec);
    return { effect: CONTINUE, text: `MARK ${hex(before)} → ${hex(pkt.mark)}` };
  },
  describe: spec => (spec ? `set packet mark (${spec.text})` : 'set packet mark'),
  diffWrites: () => [{ field: 'mark' }],
  lintEffect: 'mutates',
});

type ConnmarkSpec =
  | { kind: 'set'; x: XMark }
  | { kind: 'save'; nfmask: number; ctmask: number }
  | { kind: 'restore'; nfmask: number; ctmask: number }
  | null;

export const connmarkTarget = defineTarget<ConnmarkSpec>({
  name: 'CONNMARK',
  options: [
    ...XMARK_OPTS.map(name => ({ name, args: 1 })),
    { name: '--save-mark', args: 0 },
    { name: '--restore-mark', args: 0 },
    { name: '--mask', args: 1 },
    { name: '--nfmask', args: 1 },
    { name: '--ctmask', args: 1 },
  ],
  compile(opts, ctx) {
    const maskOf = (name: string) => {
      const o = opts.find(x => x.name === name) ?? opts.find(x => x.name === '--mask');
      return o ? (parseU32(o.args[0] ?? '') ?? 0xffffffff) : 0xffffffff;
    };
    if (opts.some(o => o.name === '--save-mark'))
      return { kind: 'save', nfmask: maskOf('--nfmask'), ctmask: maskOf('--ctmask') };
    if (opts.some(o => o.name === '--restore-mark'))
      return { kind: 'restore', nfmask: maskOf('--nfmask'), ctmask: maskOf('--ctmask') };
    const o = opts.find(x => XMARK_OPTS.includes(x.name));
    if (!o) {
      ctx.report(null, 'missing-argument', 'CONNMARK needs --set-xmark/--set-mark/--save-mark/--restore-mark');
      return null;
    }
    const x = xmarkOf(o, ctx);
    return x ? { kind: 'set', x } : null;
  },
  apply(spec, pkt: PacketState) {
    if (!spec) return { effect: CONTINUE, text: 'CONNMARK (invalid)' };
    if (pkt.ct.state === 'UNTRACKED' || pkt.ct.state === 'INVALID')
      return { effect: CONTINUE, text: `CONNMARK: no effect, the packet has no conntrack entry (${pkt.ct.state})` };
    const before = pkt.ct.mark;
    if (spec.kind === 'set') pkt.ct.mark = applyXmark(before, spec.x);
    else if (spec.kind === 'save') {
      // xt_connmark.c: newmark = (ct->mark & ~ctmask) ^ (skb->mark & nfmask)
      pkt.ct.mark = (((before & ~spec.ctmask) >>> 0) ^ ((pkt.mark & spec.nfmask) >>> 0)) >>> 0;
    } else {
      // newmark = (skb->mark & ~nfmask) ^ (ct->mark & ctmask)
      const old = pkt.mark;
      pkt.mark = (((old & ~spec.nfmask) >>> 0) ^ ((before & spec.ctmask) >>> 0)) >>> 0;
      return { effect: CONTINUE, text: `CONNMARK restore: packet mark ${hex(old)} → ${hex(pkt.mark)}` };
    }
    return { effect: CONTINUE, text: `CONNMARK ${hex(before)} → ${hex(pkt.ct.mark)}` };
  },
  describe: spec =>
    !spec
      ? 'connection mark'
      : spec.kind === 'set'
        ? `set connection mark (${spec.x.text})`
        : spec.kind === 'save'
          ? 'copy the packet mark to the connection'
          : 'copy the connection mark to the packet',
  // --restore-mark copies the connection mark into the packet mark; every other form sets the connection mark.
  diffWrites: (_spec, options) =>
    options.some(o => o.name === '--restore-mark') ? [{ field: 'mark' }] : [{ field: 'ctmark' }],
  lintEffect: 'mutates',
});
