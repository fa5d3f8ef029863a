/**
 * `quota [over] N unit [used M]` (net/netfilter/nft_quota.c): bytes counted since load, which no ruleset
 * shows. The trace assumes the quota is not used up, and says so: `quota` matches, `quota over` does not.
 */
import type { NftQuota } from '../ast.ts';
import type { Op } from '../../nft-program/program.ts';

export function lowerQuota(s: NftQuota): Op {
  const text = `quota ${s.inv ? 'over ' : ''}${s.value} ${s.unit}`;
  const note = `${text}: assumed not used up (the bytes counted so far are not in the ruleset)`;
  const alts = s.inv ? [{ miss: note, note }] : [{ note }];
  return { text, isMatch: true, run: () => alts };
}
