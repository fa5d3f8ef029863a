/**
 * `NOTRACK` and `CT` (`xt_CT.c`), valid in the raw table: `CT --notrack` / `NOTRACK` detach the packet from
 * conntrack (state UNTRACKED, no NAT); other CT options (zone, helper, timeout) do not change the path.
 */
import { CONTINUE, defineTarget } from './types.ts';

function untrack(pkt: Parameters<Parameters<typeof defineTarget>[0]['apply']>[1]): void {
  pkt.ct.state = 'UNTRACKED';
  pkt.ct.dnat = null;
  pkt.ct.snat = null;
}

export const notrackTarget = defineTarget<null>({
  name: 'NOTRACK',
  tables: ['raw'],
  options: [],
  compile: () => null,
  apply(_spec, pkt) {
    untrack(pkt);
    return { effect: CONTINUE, text: 'NOTRACK: connection tracking off for this packet' };
  },
  describe: () => "do not track this packet's connection (no NAT, state UNTRACKED)",
  diffWrites: () => [{ field: 'ctstate' }],
  lintEffect: 'mutates',
});

export const ctTarget = defineTarget<{ notrack: boolean; text: string }>({
  name: 'CT',
  tables: ['raw'],
  options: [
    { name: '--notrack', args: 0 },
    { name: '--helper', args: 1 },
    { name: '--ctevents', args: 1 },
    { name: '--expevents', args: 1 },
    { name: '--zone', args: 1 },
    { name: '--zone-orig', args: 1 },
    { name: '--zone-reply', args: 1 },
    { name: '--timeout', args: 1 },
  ],
  compile: opts => ({
    notrack: opts.some(o => o.name === '--notrack'),
    text: opts.map(o => [o.name, ...o.args].join(' ')).join(' '),
  }),
  apply(spec, pkt) {
    if (spec.notrack) {
      untrack(pkt);
      return { effect: CONTINUE, text: 'CT --notrack: connection tracking off for this packet' };
    }
    return { effect: CONTINUE, text: `CT ${spec.text}` };
  },
  describe: spec => (spec.notrack ? "do not track this packet's connection" : `set conntrack options (${spec.text})`),
  // Only --notrack changes what a later rule reads (the state becomes UNTRACKED).
  diffWrites: spec => (spec.notrack ? [{ field: 'ctstate' }] : []),
  lintEffect: 'mutates',
});
