/**
 * A live capture held against the prediction: which predicted outcome the kernel's path follows, and where
 * they part — the first rule on which they disagree, with the likely reason (a rule the capture's node has
 * and the dump does not, a rule the prediction did not match and why, an assumption it took, a context it
 * lacked such as the node's routes, or the capture simply ending).
 */
import type { Ruleset } from '../model.ts';
import type { Trace, TraceOutcome } from '../eval/trace-types.ts';
import { type Capture, type CaptureGroup, type CapturedEvent, readCapture } from './capture.ts';
import { type LineText, nftVerdict, ruleText } from './words.ts';
import { outcomeHeadline } from '../present.ts';

export interface LiveComparison {
  readonly format: Capture['format'];
  readonly traceId: string | null;
  readonly packets: number;
  readonly result: 'same-path' | 'parted' | 'no-capture';
  readonly outcome: { readonly index: number; readonly headline: string; readonly probability: number } | null;
  /** Rule and policy events on which both agree before they part (or in all). */
  readonly agreed: number;
  readonly parted: {
    readonly kernel: string | null;
    readonly predicted: string | null;
    /** The dump's line (1-based) of the rule the kernel took where they part, when the dump has it. */
    readonly kernelLine: number | null;
    /** The dump's line (1-based) of the predicted rule or policy where they part. */
    readonly predictedLine: number | null;
    readonly reason:
      'rule-differs' | 'not-matched' | 'assumed' | 'context' | 'capture-ended' | 'prediction-ended' | 'verdict-differs';
    readonly explanation: string;
  } | null;
  /** Captured lines skipped: rules of tables the dump does not have, the tracer's own TRACE / nftrace rules. */
  readonly skipped: readonly string[];
}

interface Ev {
  readonly kind: 'rule' | 'policy';
  readonly table: string;
  readonly chain: string;
  readonly verdict: string;
  readonly text: string | null;
  readonly number: number | null;
  readonly line: number | null;
}

const norm = (s: string | null) => (s ?? '').replace(/\s+/g, ' ').replace(/"/g, '').trim();

function predicted(o: TraceOutcome, lines: LineText): Ev[] {
  const out: Ev[] = [];
  for (const e of o.events) {
    if (e.kind === 'rule') {
      const s = e.step;
      const text = ruleText(s, lines, o.packet.family);
      out.push({
        kind: 'rule',
        table: s.table,
        chain: s.chain,
        verdict: nftVerdict(s.verdict),
        text: s.family ? text : text.replace(/^-[46] -t \S+ /, ''),
        number: s.rule,
        line: s.line,
      });
    } else if (e.kind === 'policy')
      out.push({
        kind: 'policy',
        table: e.table,
        chain: e.chain,
        verdict: e.verdict.toLowerCase(),
        text: null,
        number: null,
        line: e.line,
      });
  }
  return out;
}

function same(c: Ev, p: Ev): boolean {
  if (c.kind !== p.kind || c.table !== p.table || c.chain !== p.chain) return false;
  if (c.kind === 'policy') return c.verdict === p.verdict;
  if (c.text !== null) return norm(c.text) === norm(p.text);
  return c.number === p.number;
}

function describe(e: Ev | undefined): string | null {
  if (!e) return null;
  if (e.kind === 'policy') return `${e.table} ${e.chain} policy ${e.verdict}`;
  return `${e.table} ${e.chain} ${e.number !== null && e.line !== null ? `rule ${e.number} (line ${e.line}) ` : e.number !== null ? `rule ${e.number} ` : ''}${e.text ?? ''} (${e.verdict})`.replace(
    /\s+/g,
    ' ',
  );
}

/** Whether the group is the predicted packet: its first packet line carries the packet's addresses and ports. */
function isPacket(g: CaptureGroup, trace: Trace): boolean {
  const p = g.events.find(e => e.packet)?.packet;
  if (!p) return false;
  return (
    p.src === trace.packet.src &&
    p.dst === trace.packet.dst &&
    (trace.packet.dport === null || p.dport === null || p.dport === trace.packet.dport)
  );
}

export function compareWithCapture(
  trace: Trace,
  rs: Ruleset,
  lines: LineText,
  captureText: string,
  symbolicNode: boolean,
): LiveComparison {
  const cap = readCapture(captureText);
  const group = cap.groups.find(g => isPacket(g, trace)) ?? null;
  const base = { format: cap.format, packets: cap.groups.length };
  if (!group)
    return {
      ...base,
      traceId: null,
      result: 'no-capture',
      outcome: null,
      agreed: 0,
      parted: null,
      skipped: cap.groups.length
        ? [
            `no traced packet ${trace.packet.src} -> ${trace.packet.dst}${trace.packet.dport !== null ? `:${trace.packet.dport}` : ''} in the capture (${cap.groups.length} other packets)`,
          ]
        : ['nothing in the capture is an xtables-monitor, nft monitor trace or kernel TRACE line'],
    };
  const skipped: string[] = [];
  const tableKnown = (e: CapturedEvent) =>
    rs.tables.has(e.family && rs.format === 'nft' ? `${e.family} ${e.table}` : e.table);
  const kernel: Ev[] = [];
  for (const e of group.events) {
    if (e.kind !== 'rule' && e.kind !== 'policy') continue;
    if (!tableKnown(e)) {
      skipped.push(`line ${e.line}: ${e.family ? `${e.family} ` : ''}${e.table} is not in the dump`);
      continue;
    }
    if (e.text && (/-j TRACE\b/.test(e.text) || /nftrace set 1/.test(e.text))) {
      skipped.push(`line ${e.line}: the tracer's own rule`);
      continue;
    }
    kernel.push({
      kind: e.kind,
      table: e.table,
      chain: e.chain,
      verdict: e.verdict ?? '',
      text: e.text,
      number: e.number,
      line: null,
    });
  }
  // The outcome the kernel's path follows longest (ties: the more probable, which comes first).
  let best = { index: -1, common: -1, pred: [] as Ev[] };
  trace.outcomes.forEach((o, index) => {
    const pred = predicted(o, lines);
    let common = 0;
    while (common < pred.length && common < kernel.length && same(kernel[common]!, pred[common]!)) common++;
    if (common > best.common) best = { index, common, pred };
  });
  const o = trace.outcomes[best.index]!;
  const outcome = { index: best.index, headline: outcomeHeadline(o), probability: o.probability };
  const k = kernel[best.common];
  const p = best.pred[best.common];
  if (!k && !p)
    return { ...base, traceId: group.id, result: 'same-path', outcome, agreed: best.common, parted: null, skipped };
  return {
    ...base,
    traceId: group.id,
    result: 'parted',
    outcome,
    agreed: best.common,
    parted: {
      kernel: describe(k),
      predicted: describe(p),
      kernelLine: k ? dumpLineOf(k, rs, lines, o.packet.family) : null,
      predictedLine: p?.line ?? null,
      ...why(k, p, o, rs, lines, symbolicNode, group),
    },
    skipped,
  };
}

/** The captured rule's place in the dump: its chain and index, by its text, else by its number. */
function inDumpOf(k: Ev, rs: Ruleset, lines: LineText, family: 4 | 6) {
  const chain = [...rs.tables.values()].find(t => t.name === k.table)?.chains.get(k.chain);
  if (!chain || k.kind !== 'rule') return { chain, index: -1 };
  const index =
    k.text === null
      ? -1
      : chain.rules.findIndex(
          r =>
            norm(
              ruleText(
                {
                  hook: 'PREROUTING',
                  table: k.table,
                  chain: k.chain,
                  rule: 0,
                  line: r.line + 1,
                  verdict: '',
                  ...(rs.format === 'nft' ? { family: 'ip' } : {}),
                },
                lines,
                family,
              ).replace(/^-[46] -t \S+ /, ''),
            ) === norm(k.text),
        );
  return { chain, index };
}

/** The dump line (1-based) of the rule the kernel took, or null when the dump does not have it. */
function dumpLineOf(k: Ev, rs: Ruleset, lines: LineText, family: 4 | 6): number | null {
  const { chain, index } = inDumpOf(k, rs, lines, family);
  if (!chain) return null;
  const r =
    index >= 0 ? chain.rules[index] : k.text === null && k.number !== null ? chain.rules[k.number - 1] : undefined;
  return r ? r.line + 1 : null;
}

function why(
  k: Ev | undefined,
  p: Ev | undefined,
  o: TraceOutcome,
  rs: Ruleset,
  lines: LineText,
  symbolic: boolean,
  group: CaptureGroup,
): { reason: NonNullable<LiveComparison['parted']>['reason']; explanation: string } {
  if (!k)
    return {
      reason: 'capture-ended',
      explanation: `the kernel's trace ends here while the prediction goes on: the packet was dropped outside the rules (routing, rp_filter, a martian address — give the node's files with --node-context), or the capture was cut short`,
    };
  if (!p)
    return {
      reason: 'prediction-ended',
      explanation: `the prediction ends here (${o.disposition}) but the kernel went on: the node routed or delivered the packet differently — compare the capture's PACKET lines (IN=/OUT=) with the predicted interfaces, and give the node's own files with --node-context`,
    };
  if (k.kind === 'rule') {
    const { chain, index: inDump } = inDumpOf(k, rs, lines, o.packet.family);
    if (k.text !== null && chain && inDump < 0 && rs.format === 'nft')
      return {
        reason: 'not-matched',
        explanation: `nft printed this rule as \`${k.text}\`, which is not the dump's text of any rule of ${k.table} ${k.chain}; nft lists rules in its own canonical form, so packetlens cannot tell from the text whether the node's rule differs (unknown)`,
      };
    if (k.text !== null && chain && inDump < 0)
      return {
        reason: 'rule-differs',
        explanation: `the capture's node has a rule in ${k.table} ${k.chain} that the dump does not: ${k.text} — the node's rules differ from the dump here (the dump's chain has ${chain.rules.length} rules)`,
      };
    if (
      p.kind === 'rule' &&
      p.chain === k.chain &&
      p.table === k.table &&
      k.text !== null &&
      norm(k.text) === norm(p.text)
    )
      return {
        reason: 'verdict-differs',
        explanation: `the same rule, but the kernel's verdict was ${k.verdict} and the prediction's ${p.verdict}`,
      };
    const n = inDump >= 0 ? inDump + 1 : k.number;
    const miss = o.misses.find(m => m.table === k.table && m.chain === k.chain && m.rule === n);
    const assumed = o.assumptions.find(a => a.table === k.table && a.chain === k.chain && a.rule === n);
    if (assumed)
      return {
        reason: 'assumed',
        explanation: `the kernel matched ${k.table} ${k.chain} rule ${n}; the prediction assumed it ${assumed.assumed}: ${assumed.reason}`,
      };
    if (miss)
      return {
        reason: symbolic ? 'context' : 'not-matched',
        explanation: `the kernel matched ${k.table} ${k.chain} rule ${n} (line ${miss.line}); the prediction found it does not match: ${miss.reason}${symbolic ? " — the prediction had no node address (node(eth0)); give the node's files with --node-context" : ''}`,
      };
  }
  const pk = group.events.filter(e => e.packet).map(e => e.packet!);
  const outs = [...new Set(pk.map(x => x.oif).filter(Boolean))];
  if (outs.length && o.packet.out && !outs.includes(o.packet.out))
    return {
      reason: 'context',
      explanation: `the kernel sent the packet out of ${outs.join(', ')}, the prediction out of ${o.packet.out}: the prediction lacked the node's routes — give its ip -j route with --node-context`,
    };
  return {
    reason: 'not-matched',
    explanation: `the kernel took ${describe(k)} where the prediction took ${describe(p)}; the packet the kernel saw may differ from the one traced (compare the capture's PACKET lines)`,
  };
}
