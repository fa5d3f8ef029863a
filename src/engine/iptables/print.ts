/**
 * Writes a ruleset back as iptables-save text: tables in the order read, chain declarations (built-ins
 * first, with policy and counters), rules in chain order with the words they were written with (quoted
 * words re-quoted the way `xtables_save_string` does), COMMIT after each table.
 */
import type { Ruleset } from '../model.ts';
import { quoteIfNeeded, saveString, tokenizeLine } from './tokenize.ts';

export interface PrintOptions {
  /** Print `[pkts:bytes]` counters as `iptables-save -c` does. */
  readonly counters?: boolean;
}

export function printRuleSpec(raw: string, specStart: number): string {
  const { tokens } = tokenizeLine(raw.slice(specStart));
  return tokens.map(t => (t.quoted ? saveString(t.text) : quoteIfNeeded(t.text))).join(' ');
}

export function printIptables(rs: Ruleset, options: PrintOptions = {}): string {
  const out: string[] = [];
  for (const table of rs.tables.values()) {
    out.push(`*${table.name}`);
    const chains = [...table.chains.values()];
    const ordered = [...chains.filter(c => c.builtin), ...chains.filter(c => !c.builtin)];
    for (const c of ordered) {
      const ctr = c.counters ?? { packets: '0', bytes: '0' };
      out.push(`:${c.name} ${c.builtin ? (c.policy ?? 'ACCEPT') : '-'} [${ctr.packets}:${ctr.bytes}]`);
    }
    for (const c of chains) {
      for (const r of c.rules) {
        const spec = printRuleSpec(r.raw, r.specStart);
        const prefix = options.counters && r.counters ? `[${r.counters.packets}:${r.counters.bytes}] ` : '';
        out.push(`${prefix}-A ${c.name}${spec ? ` ${spec}` : ''}`);
      }
    }
    out.push('COMMIT');
  }
  return out.length ? `${out.join('\n')}\n` : '';
}
