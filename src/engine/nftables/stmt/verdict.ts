/**
 * `accept`, `drop`, `continue`, `return`, `jump CHAIN`, `goto CHAIN`: net/netfilter/nft_immediate.c loads
 * the verdict, nf_tables_core.c `nft_do_chain` acts on it (jump pushes a return point, goto does not;
 * accept ends this base chain only — the hook's next base chain still runs, nf_hook_slow — while drop ends
 * the packet).
 */
import type { NftVerdictStmt } from '../ast.ts';
import type { Op, Verdict } from '../../nft-program/program.ts';

export function verdictText(v: Verdict): string {
  return v.chain !== undefined ? `${v.kind} ${v.chain}` : v.kind;
}

export function lowerVerdict(s: NftVerdictStmt): Op {
  const verdict: Verdict = { kind: s.verdict, ...(s.target !== undefined ? { chain: s.target } : {}) };
  const alts = [{ verdict }];
  return { text: verdictText(verdict), isMatch: false, run: () => alts };
}
