/**
 * Targets whose verdict is decided elsewhere: `NFQUEUE`/`QUEUE` (a userspace program decides; with
 * `--queue-bypass` and no listener the packet is accepted), `TPROXY` (`xt_TPROXY.c`: accepted to a local
 * transparent socket if one exists, else dropped), `SYNPROXY`.
 */
import { hex, parseMarkMask } from '../matches/util.ts';
import { defineTarget } from './types.ts';
import { WRITES_NOTHING } from '../matches/knowledge.ts';

export const nfqueueTarget = defineTarget<{ text: string }>({
  name: 'NFQUEUE',
  options: [
    { name: '--queue-num', args: 1 },
    { name: '--queue-balance', args: 1 },
    { name: '--queue-bypass', args: 0 },
    { name: '--queue-cpu-fanout', args: 0 },
    { name: '--fail-open', args: 0 },
  ],
  compile: opts => ({ text: opts.map(o => [o.name, ...o.args].join(' ')).join(' ') }),
  apply: spec => ({
    effect: { kind: 'unknown', reason: `NFQUEUE ${spec.text}: a userspace program decides the verdict` },
    text: `NFQUEUE ${spec.text}`,
  }),
  describe: () => 'hand the packet to a userspace program, which decides',
  diffWrites: WRITES_NOTHING,
  lintEffect: 'terminates',
});

export const tproxyTarget = defineTarget<{ text: string; mark: { value: number; mask: number } | null }>({
  name: 'TPROXY',
  tables: ['mangle'],
  hooks: ['PREROUTING'],
  options: [
    { name: '--on-port', args: 1 },
    { name: '--on-ip', args: 1 },
    { name: '--tproxy-mark', args: 1 },
  ],
  compile: opts => {
    const m = opts.find(o => o.name === '--tproxy-mark')?.args[0];
    return { text: opts.map(o => [o.name, ...o.args].join(' ')).join(' '), mark: m ? parseMarkMask(m) : null };
  },
  apply(spec, pkt) {
    if (spec.mark) pkt.mark = (((pkt.mark & ~spec.mark.mask) >>> 0) ^ spec.mark.value) >>> 0;
    return {
      effect: {
        kind: 'unknown',
        reason: `TPROXY ${spec.text}: accepted if a transparent socket listens, else dropped`,
      },
      text: `TPROXY ${spec.text}${spec.mark ? ` (mark ${hex(pkt.mark)})` : ''}`,
    };
  },
  describe: spec => `deliver to a local transparent proxy (${spec.text})`,
  // `--tproxy-mark` sets the packet mark (xt_TPROXY.c) before the packet is delivered.
  diffWrites: spec => (spec.mark ? [{ field: 'mark' }] : []),
  lintEffect: 'terminates',
});

export const synproxyTarget = defineTarget<{ text: string }>({
  name: 'SYNPROXY',
  options: [
    { name: '--mss', args: 1 },
    { name: '--wscale', args: 1 },
    { name: '--sack-perm', args: 0 },
    { name: '--timestamp', args: 0 },
    { name: '--ecn', args: 0 },
  ],
  compile: opts => ({ text: opts.map(o => [o.name, ...o.args].join(' ')).join(' ') }),
  apply: () => ({ effect: { kind: 'unknown', reason: 'SYNPROXY answers the handshake itself' }, text: 'SYNPROXY' }),
  describe: () => 'answer the TCP handshake on behalf of the server (SYNPROXY)',
  diffWrites: WRITES_NOTHING,
  lintEffect: 'terminates',
});
