/**
 * A rule's criteria as a set of literal *atoms*: each header check (`-s`, `-d`, `-p`, `-i`, `-o`, `-f`, with
 * `!`) and what each match module says about its own options (`lintAtoms`, matches/knowledge.ts: one atom per
 * independent option, or the module's options together as one). Rules are ANDs of their criteria, so a rule
 * whose atoms are a subset of a later rule's atoms matches every packet the later one matches — the literal
 * case of shadowing. Everything is read from the compiled rule, as the front end assigned its words (an
 * option belongs to the latest module that knows it, else to the implicit module of `-p`; a repeated option
 * or header check keeps its last value).
 */
import { formatNet } from '../net/addr.ts';
import { IptRule } from '../iptables/rule-node.ts';
import type { IpMatch, Rule } from '../model.ts';

export interface RuleCriteria {
  /** Sorted, without duplicates. */
  readonly atoms: readonly string[];
  /**
   * The least trustworthy `lintNature` of the rule's match modules (fixed when it has none): a varying rule
   * never shadows, a stateful one only until a rule in between changes state.
   */
  readonly nature: 'fixed' | 'stateful' | 'varying';
}

const RANK = { fixed: 0, stateful: 1, varying: 2 } as const;

const not = (n: { readonly negated: boolean }) => (n.negated ? '!' : '');

/** The header checks as atoms (`s 10.0.0.0/8`, `!p tcp`, `i eth+`). */
function headerAtoms(ip: IpMatch, out: Set<string>): void {
  if (ip.src) out.add(`${not(ip.src)}s ${formatNet(ip.src.value)}`);
  if (ip.dst) out.add(`${not(ip.dst)}d ${formatNet(ip.dst.value)}`);
  if (ip.proto) out.add(`${not(ip.proto)}p ${(ip.protoName ?? String(ip.proto.value)).toLowerCase()}`);
  if (ip.inIface) out.add(`${not(ip.inIface)}i ${ip.inIface.value.name}`);
  if (ip.outIface) out.add(`${not(ip.outIface)}o ${ip.outIface.value.name}`);
  if (ip.fragment) out.add(`${not(ip.fragment)}f`);
}

/**
 * A word the front end could not read (an unknown option, a stray word, a bad address or protocol) is not in
 * the compiled rule. Each error stands for it as an atom, so that a broken rule never covers another by the
 * criteria it lost, and two rules only compare equal when they are broken alike. nft rules are linted from
 * their AST (lint/nft.ts): here each is only equal to itself.
 */
function errorAtoms(rule: Rule, out: Set<string>): void {
  if (rule.nft) out.add(`?nft line ${rule.line}`);
  if (!(rule instanceof IptRule)) return;
  for (const d of rule.diagnostics()) if (d.severity === 'error') out.add(`?${d.code}: ${d.message}`);
}

/** The atoms of a rule's criteria; the target and its options are not criteria. */
export function ruleCriteria(rule: Rule): RuleCriteria {
  const atoms = new Set<string>();
  headerAtoms(rule.ip, atoms);
  let nature: RuleCriteria['nature'] = 'fixed';
  for (const m of rule.matches) {
    if (RANK[m.module.lintNature] > RANK[nature]) nature = m.module.lintNature;
    for (const atom of m.module.lintAtoms(m.spec, m.options)) atoms.add(`${m.module.name}:${atom}`);
  }
  errorAtoms(rule, atoms);
  return { atoms: [...atoms].sort(), nature };
}
