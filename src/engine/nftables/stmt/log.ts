/** `log [prefix "…"] [level …] [group N]` (net/netfilter/nft_log.c): logs and goes on. */
import type { NftLog } from '../ast.ts';
import type { Op } from '../../nft-program/program.ts';

export function lowerLog(s: NftLog): Op {
  const text = `log${s.prefix !== undefined ? ` prefix "${s.prefix}"` : ''}${s.group !== undefined ? ` group ${s.group}` : ''}`;
  return { text, isMatch: false, run: () => [{}] };
}
