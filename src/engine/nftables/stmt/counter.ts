/** `counter` (net/netfilter/nft_counter.c): counts and goes on. */
import type { Op } from '../../nft-program/program.ts';

export function lowerCounter(): Op {
  return { text: 'counter', isMatch: false, run: () => [{}] };
}
