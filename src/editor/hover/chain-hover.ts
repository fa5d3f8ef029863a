/**
 * Hover on a chain name: what the chain is (built-in: its hook, priority and policy; kube-proxy's: the
 * Service and port it serves, where it is entered and its endpoints with each one's exact share), how many
 * rules it has and who jumps to it.
 */
import { type Chain, TABLE_HOOKS, type Table, loadsModule } from '../../engine/api.ts';
import type { DumpIndex } from '../dump-index.ts';
import {
  type Distribution,
  distribution,
  endpointOfSep,
  kubeChainKind,
  serviceEntries,
  serviceOfChain,
  sharesOfSep,
} from '../kube-proxy-chains.ts';
import { exactText, percentOf } from '../probability.ts';
import { KUBE_CHAIN_TEXT } from './kube-text.ts';
import { cell, code, escapeMarkdown } from './markdown.ts';

function plural(n: number, word: string): string {
  return `${n.toLocaleString('en-US')} ${word}${n === 1 ? '' : 's'}`;
}

function distributionTable(d: Distribution): string[] {
  if (d.shares.length === 0) return [];
  const out = ['', '| endpoint | share of new connections | exact |', '|---|---:|---|'];
  for (const s of d.shares)
    out.push(`| ${cell(s.endpoint ?? s.target)} | ${percentOf(s.share)} | ${exactText(s.share)} |`);
  if (d.rest.num !== 0n && d.shares.length)
    out.push(`| *(no endpoint rule: on to the next rules)* | ${percentOf(d.rest)} | ${exactText(d.rest)} |`);
  if (d.affinity)
    out.push(
      '',
      'Session affinity: a client with a live `recent` entry goes back to its endpoint first; the shares apply to the others.',
    );
  return out;
}

export function chainHover(index: DumpIndex, table: Table, name: string): string {
  const chain: Chain | undefined = table.chains.get(name);
  if (!chain)
    return `**${escapeMarkdown(name)}** is not declared in table ${code(table.name)}: iptables-restore refuses a table that jumps to it.`;
  const refs = index.referencesTo(table.name, name);
  const lines: string[] = [];
  if (chain.builtin) {
    const prio = TABLE_HOOKS[table.name]?.hooks[name as 'INPUT'];
    lines.push(
      `**${escapeMarkdown(name)}** — built-in chain of table ${code(table.name)} on hook ${code(name)}${prio !== undefined ? ` (priority ${prio})` : ''}`,
    );
    lines.push(
      '',
      `${plural(chain.rules.length, 'rule')} · policy **${chain.policy ?? 'ACCEPT'}**: a packet no rule decides is ${chain.policy === 'DROP' ? 'dropped' : 'accepted'}.`,
    );
    return lines.join('\n');
  }
  lines.push(
    `**${escapeMarkdown(name)}** — user chain in table ${code(table.name)} · ${plural(chain.rules.length, 'rule')} · referenced by ${plural(refs.length, 'rule')}`,
  );
  const kind = kubeChainKind(name);
  if (kind) {
    lines.push('', `kube-proxy: ${KUBE_CHAIN_TEXT[kind]}`);
    const service =
      kind === 'svc' || kind === 'svl' || kind === 'ext' || kind === 'fw' || kind === 'sep'
        ? serviceOfChain(index, table.name, chain)
        : null;
    if (service) lines.push('', `Service port ${code(service)}`);
    if (kind === 'svc' || kind === 'svl' || kind === 'ext' || kind === 'fw') {
      const entries = serviceEntries(index, table.name, chain);
      if (entries.length)
        lines.push(
          '',
          `Entered for ${entries
            .slice(0, 6)
            .map(e => code(e.text))
            .join(', ')}${entries.length > 6 ? ` and ${entries.length - 6} more` : ''}`,
        );
    }
    if (kind === 'svc' || kind === 'svl') lines.push(...distributionTable(distribution(index, table.name, chain)));
    if (kind === 'sep') {
      const ep = endpointOfSep(chain);
      if (ep) lines.push('', `Endpoint ${code(ep)}`);
      for (const { via, share } of sharesOfSep(index, table.name, chain)) {
        lines.push(
          '',
          `Gets ${percentOf(share.share)} (exactly ${exactText(share.share)}) of new connections through ${code(via)}`,
        );
      }
    }
  } else if (chain.rules.some(r => loadsModule(r, 'statistic'))) {
    // Only chains with random rules have shares; loadsModule spares compiling a long chain's rules.
    const d = distribution(index, table.name, chain);
    if (d.shares.some(s => s.branch)) lines.push('', 'Random branches:', ...distributionTable(d));
  }
  if (refs.length) {
    const shown = refs
      .slice(0, 5)
      .map(r => `${code(r.rule.chain)} rule ${r.rule.index} (line ${r.line + 1}${r.kind === 'goto' ? ', goto' : ''})`);
    lines.push('', `Jumped to from ${shown.join(', ')}${refs.length > 5 ? ` and ${refs.length - 5} more` : ''}`);
  } else lines.push('', 'No rule jumps here: its rules never run.');
  return lines.join('\n');
}
