/**
 * Tracing a typed packet through a parsed dump for the editor: with why-not (`explain`), because the
 * CodeLens shows why each evaluated rule missed.
 */
import {
  type HookInterceptor,
  type IpsetStore,
  type NodeConfig,
  type Trace,
  parsePacketText,
  tracePacket,
} from '../engine/api.ts';
import type { DumpIndex } from './dump-index.ts';

/** What a node bundle adds to a trace: IPVS (its ipvsadm listing) and the sets of its `ipset save`. */
export interface TraceExtra {
  readonly interceptors?: readonly HookInterceptor[];
  readonly ipsets?: IpsetStore;
}

export type EditorTrace = { ok: true; trace: Trace; ms: number } | { ok: false; error: string };

export function traceText(index: DumpIndex, packet: string, node: NodeConfig, extra: TraceExtra = {}): EditorTrace {
  if (index.ruleset.tables.size === 0) {
    const why = index.ruleset.diagnostics.find(d => d.severity === 'error');
    return {
      ok: false,
      error: `Nothing to trace: ${index.ruleset.file} has no tables${why ? ` (${why.message})` : ' (expected iptables-save output: *filter, *nat, … sections)'}.`,
    };
  }
  const parsed = parsePacketText(packet);
  if (!parsed.ok) return parsed;
  const t0 = performance.now();
  const r = tracePacket(index.ruleset, parsed.input, {
    node,
    explain: true,
    ...(extra.interceptors?.length ? { interceptors: extra.interceptors } : {}),
    ...(extra.ipsets ? { ipsets: extra.ipsets } : {}),
  });
  return r.ok ? { ok: true, trace: r.trace, ms: performance.now() - t0 } : r;
}

/** One line for a status message: `2 outcomes: 50% forwarded → 10.10.1.11:80 …, 50% …`. */
export function traceSummary(trace: Trace): string {
  const first = trace.outcomes
    .slice(0, 3)
    .map(o => `${Math.round(o.probability * 10000) / 100}% ${o.disposition}${o.dnat ? ` → ${o.dnat}` : ''}`);
  const more = trace.outcomes.length > 3 ? `, +${trace.outcomes.length - 3} more` : '';
  return `${trace.outcomes.length} outcome${trace.outcomes.length === 1 ? '' : 's'}: ${first.join(', ')}${more}`;
}
