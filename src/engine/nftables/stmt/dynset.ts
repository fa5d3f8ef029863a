/**
 * `update @s { KEY [timeout T] }`, `add @s { … }`, `delete @s { … }` from the packet path
 * (net/netfilter/nft_dynset.c). The element takes effect for later packets, whose lookups see what the
 * caller states about the set (EvalEnv.recent, as for `-m recent`); this packet goes on.
 */
import type { NftSetStmt } from '../ast.ts';
import type { LowerCtx, Op } from '../../nft-program/program.ts';

export function lowerSetStmt(s: NftSetStmt, ctx: LowerCtx): Op {
  const text = `${s.op} @${s.set} { … }`;
  if (!ctx.lookupSet(s.set)) ctx.report('unknown-set', `set @${s.set} is not defined in this table`, s.range);
  return {
    text,
    isMatch: false,
    run: () => [
      {
        apply: () =>
          `${s.op} @${s.set}: later packets of this flow see the element (state it for a trace with the set's name as a live entry)`,
      },
    ],
  };
}
