/**
 * A plain reading of one nftables rule for its hover: "When ip daddr is 10.0.0.1 and tcp dport is 80:
 * accept", with verdict maps spelled out (a numgen map: each branch with its exact share, nft_numgen.c's
 * `reciprocal_scale`, as the evaluator forks) and what each verdict does to the packet (nft(8), VERDICT
 * STATEMENT).
 */
import { type NftExpr, type NftStmt, formatRational, numgenShares, toNumber } from '../../engine/api.ts';
import { code, escapeMarkdown } from '../hover/markdown.ts';
import { percent } from '../probability.ts';
import { exprText, stmtText } from './print.ts';
import type { NftIndex } from './nft-index.ts';

const OPS: Readonly<Record<string, string>> = {
  '==': 'is',
  '!=': 'is not',
  '<': 'is below',
  '>': 'is above',
  '<=': 'is at most',
  '>=': 'is at least',
  in: 'has any of',
};

function plural(n: number, word: string): string {
  return `${n.toLocaleString('en-US')} ${word}${n === 1 ? '' : 's'}`;
}

function condition(s: Extract<NftStmt, { kind: 'match' }>, nft: NftIndex, scope: string): string {
  const left = code(exprText(s.left));
  if (s.right.kind === 'setref') {
    const set = nft.set(scope, s.right.name);
    const size = set
      ? ` (${plural(set.elements.length, 'element')}${set.flags.includes('dynamic') ? ', filled at run time' : ''})`
      : '';
    return `${left} ${s.op === '!=' ? 'is not in' : 'is in'} ${code(`@${s.right.name}`)}${size}`;
  }
  if (s.right.kind === 'set') return `${left} ${s.op === '!=' ? 'is none of' : 'is one of'} ${code(exprText(s.right))}`;
  return `${left} ${OPS[s.op] ?? s.op} ${code(exprText(s.right))}`;
}

export function verdictReading(verdict: string, target?: string): string {
  switch (verdict) {
    case 'accept':
      return 'accept (ends this base chain; base chains of later priority on the same hook still see the packet)';
    case 'drop':
      return 'drop the packet';
    case 'return':
      return 'return to the chain that jumped here (in a base chain: its policy)';
    case 'continue':
      return 'go on with the next rule';
    case 'jump':
      return `jump to chain ${code(target ?? '?')} (and come back here unless it decides)`;
    case 'goto':
      return `go to chain ${code(target ?? '?')} (no return here: a return there goes back to the chain that jumped here)`;
    default:
      return escapeMarkdown(verdict);
  }
}

/** The branches of `numgen … vmap { 0 : goto a, 1 : goto b }`, each with its exact share. */
export function numgenBranches(
  s: Extract<NftStmt, { kind: 'vmap' }>,
): { value: number; target: string; verdict: string; share: string; exact: string }[] | null {
  if (s.key.kind !== 'numgen' || s.data.kind !== 'set') return null;
  const shares = numgenShares(s.key.mode, s.key.mod);
  if (!shares) return null;
  const out: { value: number; target: string; verdict: string; share: string; exact: string }[] = [];
  for (const item of s.data.items) {
    const m = item.kind === 'elem' ? item.value : item;
    if (m.kind !== 'mapping' || m.key.kind !== 'value' || typeof m.key.value !== 'number' || m.data.kind !== 'verdict')
      continue;
    const share = shares[m.key.value - s.key.offset];
    if (!share) continue;
    out.push({
      value: m.key.value,
      target: m.data.target ?? m.data.verdict,
      verdict: m.data.verdict,
      share: percent(toNumber(share)),
      exact: formatRational(share),
    });
  }
  return out;
}

function vmapReading(s: Extract<NftStmt, { kind: 'vmap' }>, nft: NftIndex, scope: string): string[] {
  const branches = numgenBranches(s);
  if (branches) {
    const key = s.key as Extract<NftExpr, { kind: 'numgen' }>;
    const lines = [
      `pick ${key.mode === 'random' ? 'at random' : 'in turn (a shared counter)'} one of ${plural(key.mod, 'value')} (${code(exprText(s.key))}) and follow its verdict:`,
      '',
      '| value | verdict | share | exact |',
      '|---:|---|---:|---|',
    ];
    for (const b of branches)
      lines.push(`| ${b.value} | ${escapeMarkdown(b.verdict)} ${code(b.target)} | ${b.share} | ${b.exact} |`);
    return [lines.join('\n')];
  }
  if (s.data.kind === 'setref') {
    const m = nft.set(scope, s.data.name);
    return [
      `look up ${code(exprText(s.key))} in verdict map ${code(`@${s.data.name}`)}${m ? ` (${plural(m.elements.length, 'element')})` : ''} and take the element's verdict; no element: on to the next rule`,
    ];
  }
  return [
    `look up ${code(exprText(s.key))} in ${code(exprText(s.data))} and take the element's verdict; no element: on to the next rule`,
  ];
}

function action(s: NftStmt, nft: NftIndex, scope: string): string[] {
  switch (s.kind) {
    case 'verdict':
      return [verdictReading(s.verdict, s.target)];
    case 'vmap':
      return vmapReading(s, nft, scope);
    case 'nat':
      if (s.type === 'masquerade') return ["masquerade (the source becomes the outgoing interface's address)"];
      if (s.type === 'redirect')
        return [`redirect to the node itself${s.port ? ` port ${code(exprText(s.port))}` : ''}`];
      return [
        `${s.type === 'dnat' ? 'DNAT: destination' : 'SNAT: source'} becomes ${code(stmtText(s).replace(/^\w+\s+(ip6?\s+)?to\s+/, ''))}`,
      ];
    case 'reject':
      return [
        `reject${s.type ? ` with ${escapeMarkdown(s.type)}${s.code ? ` ${escapeMarkdown(s.code)}` : ''}` : ' (icmp port-unreachable; tcp reset for TCP in inet tables)'}`,
      ];
    case 'mangle':
      return [`set ${code(exprText(s.key))} to ${code(exprText(s.value))}`];
    case 'counter':
      return ['count it'];
    case 'log':
      return [`log it${s.prefix !== undefined ? ` with prefix ${code(s.prefix)}` : ''}`];
    case 'limit':
    case 'quota':
      return [`${code(stmtText(s))} (traces assume it is not exceeded, and say so)`];
    case 'setop':
      return [`${s.op} ${code(exprText(s.elem))} in ${code(`@${s.set}`)}`];
    case 'notrack':
      return ['do not track the connection'];
    default:
      return [code(stmtText(s))];
  }
}

/**
 * The reading of a rule's statements as markdown paragraphs: its conditions joined by "and", then what it
 * does, one statement after another.
 */
export function describeNftRule(stmts: readonly NftStmt[], nft: NftIndex, scope: string): string[] {
  const conds: string[] = [];
  const acts: string[] = [];
  for (const s of stmts) {
    if (s.kind === 'match') conds.push(condition(s, nft, scope));
    else acts.push(...action(s, nft, scope));
  }
  const out = [`${conds.length ? `When ${conds.join(' and ')}:` : 'Every packet:'}${acts.length ? ` ${acts[0]}` : ''}`];
  for (const a of acts.slice(1)) out.push(`then ${a}`);
  if (!acts.some(a => /accept|drop|reject|return|jump|go to|DNAT|SNAT|masquerade|redirect|verdict/.test(a)))
    out.push('No verdict: the packet goes on with the next rule.');
  return out;
}
