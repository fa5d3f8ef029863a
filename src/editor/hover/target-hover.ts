/**
 * Hover on `-j TARGET` (a verdict or a target extension) and on a `*table` line: what it does and where
 * the kernel allows it.
 */
import { TABLE_HOOKS, TARGETS, type Rule } from '../../engine/api.ts';
import { VERDICT_TEXT, describeTarget } from './describe-rule.ts';
import { code, escapeMarkdown } from './markdown.ts';

/** Targets by what they do, for the hover's first line (iptables-extensions(8), "TARGET EXTENSIONS"). */
const ROLE: Record<string, string> = {
  DNAT: "rewrites the destination address (and port) of the connection; only a connection's first packet sees nat, conntrack translates the rest",
  SNAT: 'rewrites the source address (and port) of the connection',
  MASQUERADE: 'rewrites the source to the address of the interface the packet leaves by',
  REDIRECT: "sends the packet to the node itself (DNAT to the incoming interface's address)",
  NETMAP: 'maps a whole network onto another, host bits kept',
  REJECT: 'drops the packet and answers the sender with an error',
  MARK: 'sets the packet mark (nfmark), which later rules, routing and tc can read',
  CONNMARK: 'sets, saves or restores the connection mark',
  LOG: 'logs the packet to the kernel log; the packet goes on to the next rule',
  NFLOG: 'hands a copy of the packet to a userspace logger; the packet goes on',
  NOTRACK: 'exempts the packet from connection tracking (and so from NAT)',
  CT: 'sets connection-tracking options for the packet (or turns tracking off)',
  NFQUEUE: 'hands the packet to a userspace program, which decides its fate',
};

export function targetHover(name: string, rule: Rule | undefined): string {
  const lines: string[] = [];
  const verdict = VERDICT_TEXT[name];
  if (verdict) {
    lines.push(`**${name}** — standard verdict`, '', escapeMarkdown(verdict));
    if (name === 'RETURN') lines.push('', 'In a built-in chain RETURN applies the chain policy.');
    return lines.join('\n');
  }
  const mod = TARGETS.get(name);
  lines.push(
    `**${escapeMarkdown(name)}** — ${mod ? 'target extension' : 'target not modelled: a trace that reaches it ends as unknown'}`,
  );
  if (ROLE[name]) lines.push('', `${ROLE[name]}.`);
  if (rule?.target && rule.target.kind === 'target')
    lines.push('', `Here: ${escapeMarkdown(describeTarget(rule.target))}.`);
  if (mod?.tables)
    lines.push(
      '',
      `Allowed in table${mod.tables.length > 1 ? 's' : ''} ${mod.tables.map(code).join(', ')}${mod.hooks ? `, chains ${mod.hooks.map(code).join(', ')}` : ''}.`,
    );
  return lines.join('\n');
}

export function tableHover(name: string): string {
  const hooks = TABLE_HOOKS[name];
  if (!hooks) return `**${escapeMarkdown(name)}** is not a netfilter table (raw, mangle, nat, filter, security).`;
  const list = Object.entries(hooks.hooks).map(([h, p]) => `${code(h)} (priority ${p})`);
  const lines = [`**table ${name}** — hooks ${list.join(', ')}`];
  if (hooks.kind === 'nat')
    lines.push(
      '',
      'Only the first packet of a connection traverses nat; conntrack applies the translation it chose to the rest.',
    );
  if (name === 'raw') lines.push('', 'Runs before connection tracking: the place for NOTRACK / CT.');
  if (name === 'mangle') lines.push('', 'For changing packets (marks, TTL, DSCP); runs on every hook.');
  return lines.join('\n');
}
