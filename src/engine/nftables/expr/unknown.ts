/**
 * Expressions the evaluator does not model — `jhash`/`symhash` (nft_hash.c: a keyed hash of the packet), `rt`
 * (nft_rt.c), `socket` (nft_socket.c), `osf`, `ipsec`, `exthdr`, raw payloads — and ones a front end could
 * not read. They read as unknown: every rule that uses one forks into "matches" and "does not match".
 */
import type { ExprOut, LExpr } from '../../nft-program/program.ts';
import { INTEGER } from '../../nft-program/types.ts';

export function unknownExpr(text: string, reason: string): LExpr {
  const out: ExprOut = { kind: 'unknown', reason };
  return { types: [INTEGER], text, eval: () => out };
}
