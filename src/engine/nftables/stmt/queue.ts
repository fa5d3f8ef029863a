/** `queue [num N] [bypass|fanout]` (net/netfilter/nft_queue.c): a userspace program decides — unknown. */
import type { Op } from '../../nft-program/program.ts';

export function lowerQueue(): Op {
  return {
    text: 'queue',
    isMatch: false,
    run: () => [{ verdict: { kind: 'queue', reason: 'queued to userspace: a program decides' } }],
  };
}
