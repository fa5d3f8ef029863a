/**
 * `limit rate [over] N/unit [burst …]` (net/netfilter/nft_limit.c): a token bucket whose fill depends on
 * traffic no ruleset shows. The trace assumes the rate is not exceeded, and says so: `limit rate` matches,
 * `limit rate over` does not.
 */
import type { NftLimit } from '../ast.ts';
import type { Op } from '../../nft-program/program.ts';

export function lowerLimit(s: NftLimit): Op {
  const text = `limit rate ${s.inv ? 'over ' : ''}${s.rate}${s.unit === 'packets' ? '' : ` ${s.unit}`}/${s.per}${s.burst ? ` burst ${s.burst} ${s.burstUnit ?? s.unit}` : ''}`;
  const note = `${text}: assumed not exceeded (the bucket's state is not in the ruleset)`;
  const alts = s.inv ? [{ miss: note, note }] : [{ note }];
  return { text, isMatch: true, run: () => alts };
}
