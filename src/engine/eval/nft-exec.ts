/**
 * Runs one lowered nftables rule on a path, as `nft_do_chain` runs a rule's expressions
 * (net/netfilter/nf_tables_core.c): in order, until one does not match (the rule is done, the chain goes on)
 * or sets a verdict. An operation with several outcomes (numgen's values, an undecidable match) forks the
 * path; each fork carries its exact probability or the assumption it made, like the iptables walker's
 * `-m statistic` and unknown matches.
 */
import type { EvalEnv } from '../matches/env.ts';
import { type Path, forkPath } from './path.ts';
import type { Rule } from '../model.ts';
import { format as formatRational, mul } from '../rational.ts';
import type { NftProgram, Verdict } from '../nft-program/program.ts';

export interface NftBranch {
  readonly path: Path;
  /** The rule's verdict; null when the rule matched and set none (the chain goes on: `continue`). */
  readonly verdict: Verdict | null;
  /** Set when the rule did not match on this path: the first criterion that failed. */
  readonly miss: string | null;
  /** What the rule's statements did (`dnat → 10.0.0.1:80`, `meta mark 0x0 → 0x4000`). */
  readonly did: readonly string[];
}

interface Work {
  path: Path;
  op: number;
  did: string[];
}

export function execNft(prog: NftProgram, start: Path, env: EvalEnv, rule: Rule): NftBranch[] {
  const out: NftBranch[] = [];
  const site = { table: rule.table, chain: rule.chain, rule: rule.index, line: rule.line + 1 };
  const where = `${rule.table} ${rule.chain} rule ${rule.index} (line ${rule.line + 1})`;
  const work: Work[] = [{ path: start, op: 0, did: [] }];
  while (work.length) {
    const w = work.pop()!;
    let ended = false;
    while (!ended && w.op < prog.ops.length) {
      const op = prog.ops[w.op++]!;
      const alts = op.run(w.path.pkt, env);
      if (alts.length === 0) {
        out.push({ path: w.path, verdict: null, miss: `${op.text}: no outcome`, did: w.did });
        ended = true;
        break;
      }
      // Forks first (they copy the path before this one changes), the first outcome stays on `w`.
      const paths = alts.map((_, i) => (i === 0 ? w.path : forkPath(w.path)));
      for (let i = alts.length - 1; i >= 0; i--) {
        const a = alts[i]!;
        const p = paths[i]!;
        const did = i === 0 ? w.did : [...w.did];
        if (a.p) {
          p.prob = mul(p.prob, a.p);
          p.events.push({
            kind: 'branch',
            ...site,
            taken: a.miss === undefined,
            probability: formatRational(a.p),
            label: a.label ?? op.text,
          });
        }
        if (a.assume) {
          const asm = { ...site, assumed: a.assume.assumed, reason: a.assume.reason };
          p.assumptions.push(asm);
          p.events.push({ kind: 'assume', assumption: asm });
        }
        if (a.note) p.notes.push(`${where}: ${a.note}`);
        if (a.apply) {
          const text = a.apply(p.pkt, env, p);
          if (text) did.push(text);
        }
        let end: NftBranch | null = null;
        if (a.miss !== undefined) end = { path: p, verdict: null, miss: a.miss, did };
        else if (a.verdict) end = { path: p, verdict: a.verdict, miss: null, did };
        if (i === 0) {
          if (end) {
            out.push(end);
            ended = true;
          }
        } else if (end) out.push(end);
        else work.push({ path: p, op: w.op, did });
      }
    }
    if (!ended) out.push({ path: w.path, verdict: null, miss: null, did: w.did });
  }
  return out;
}
