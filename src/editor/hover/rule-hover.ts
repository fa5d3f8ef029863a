/**
 * Hover on a rule: its criteria and target in words, its random branch with the kernel's exact
 * probability, the share of the chain's packets it takes when the chain load-balances, its comment and
 * counters.
 */
import type { Rule } from '../../engine/api.ts';
import type { DumpIndex } from '../dump-index.ts';
import { distribution } from '../kube-proxy-chains.ts';
import { exactText, percentOf, ruleRandomBranch } from '../probability.ts';
import { describeCriteria, describeTarget } from './describe-rule.ts';
import { code, escapeMarkdown } from './markdown.ts';

export function ruleHover(index: DumpIndex, rule: Rule): string {
  const lines: string[] = [
    `**Rule ${rule.index}** of ${code(`${rule.table} ${rule.chain}`)} · line ${rule.line + 1}`,
    '',
  ];
  const criteria = describeCriteria(rule);
  if (criteria.length) {
    lines.push('Matches packets with:');
    for (const c of criteria) lines.push(`- ${escapeMarkdown(c)}`);
  } else lines.push('Matches every packet that reaches it.');
  lines.push('', `Then: ${escapeMarkdown(describeTarget(rule.target))}`);
  const branch = ruleRandomBranch(rule);
  const chain = index.chain(rule.table, rule.chain);
  // Shares only exist among random rules: look at the chain only when this rule or the one before draws.
  const previous = chain?.rules[rule.index - 2];
  const share =
    chain && (branch || (previous && ruleRandomBranch(previous)))
      ? distribution(index, rule.table, chain, rule).shares.find(s => s.rule === rule)
      : undefined;
  if (branch) {
    lines.push(
      '',
      `Random branch: taken by ${percentOf(branch.p)} (exactly ${exactText(branch.p)}) of the packets that reach it — ${branch.mode === 'random' ? `iptables stores round(${escapeMarkdown(branch.text)} × 2^31)` : `one packet in ${escapeMarkdown(branch.text)}`}.`,
    );
    if (share)
      lines.push(
        '',
        `Share of the chain's new connections: ${percentOf(share.share)} (exactly ${exactText(share.share)}).`,
      );
  } else {
    if (share && share.share.num !== share.share.den)
      lines.push(
        '',
        `Takes the rest: ${percentOf(share.share)} (exactly ${exactText(share.share)}) of the chain's new connections.`,
      );
  }
  if (rule.comment) lines.push('', `Comment: ${code(rule.comment)}`);
  if (rule.counters)
    lines.push(
      '',
      `Counters: ${Number(rule.counters.packets).toLocaleString('en-US')} packets, ${Number(rule.counters.bytes).toLocaleString('en-US')} bytes`,
    );
  return lines.join('\n');
}
