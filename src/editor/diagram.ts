/**
 * The flow diagram of a trace: every outcome's events (hooks, tables, chains, matched rules, policies,
 * routing decisions, random branches, assumptions) merged into one tree where paths share a prefix until
 * they split, with each split's share of packets, rewrites on the edges and one end state per outcome.
 */
import type { Trace, TraceEvent, TraceOutcome } from '../engine/api.ts';
import { outcomeHeadline } from '../engine/api.ts';
import type {
  DiagramModel,
  FlowBranch,
  FlowNode,
  FlowSegment,
  HookVisit,
  OutcomeSummary,
  PacketFields,
} from '../shared/protocol.ts';
import { flowGraph } from './flow-graph/build.ts';
import { percent } from './probability.ts';

const MAX_OUTCOMES = 32;

interface TrieNode {
  readonly node: FlowNode | null;
  readonly key: string;
  readonly children: Map<string, TrieNode>;
  probability: number;
  /** The exact probabilities of the outcomes through here (summed when shown). */
  exact: string[];
  branchLabel: string | null;
}

const REWRITE = /^(DNAT|SNAT|MASQUERADE|REDIRECT|NETMAP) → (.+)$/;

class NodeMaker {
  private n = 0;

  /** `offset`: lines the document shows above the traced text (a header comment), added to every line. */
  constructor(private readonly offset: number) {}

  private stack: string[] = [];
  private lastRuleVerdict = '';

  make(e: TraceEvent): { node: FlowNode; branch: string | null } {
    const id = `n${this.n++}`;
    const base = { id, detail: null, line: null, rewrite: null, flagged: false };
    switch (e.kind) {
      case 'hook':
        this.stack = [];
        return {
          node: {
            ...base,
            kind: 'hook',
            label: e.hook,
            detail: `in ${e.iface.in ?? '—'} · out ${e.iface.out ?? '—'}`,
            depth: 0,
          },
          branch: null,
        };
      case 'chain': {
        if (e.chain === e.hook) this.stack = [];
        else if (this.lastRuleVerdict.startsWith('goto ')) this.stack.pop();
        this.stack.push(e.chain);
        return {
          node: {
            ...base,
            kind: 'chain',
            label: `${e.table} ${e.chain}`,
            line: e.line - 1 + this.offset,
            depth: this.stack.length,
          },
          branch: null,
        };
      }
      case 'rule': {
        const s = e.step;
        this.lastRuleVerdict = s.verdict;
        const m = REWRITE.exec(s.verdict);
        const rewrite = m
          ? `${m[1] === 'DNAT' || m[1] === 'REDIRECT' ? 'dst' : m[1] === 'NETMAP' ? 'addr' : 'src'} → ${m[2]}`
          : null;
        return {
          node: {
            ...base,
            kind: 'rule',
            label: `#${s.rule} ${s.verdict}`,
            detail: `${s.table} ${s.chain} · line ${s.line + this.offset}`,
            line: s.line - 1 + this.offset,
            depth: this.stack.length + 1,
            rewrite,
            flagged: s.verdict.includes('not modelled'),
          },
          branch: null,
        };
      }
      case 'policy':
        this.stack = [];
        return {
          node: {
            ...base,
            kind: 'policy',
            label: `policy ${e.verdict}`,
            detail: `${e.table} ${e.chain}`,
            line: e.line - 1 + this.offset,
            depth: 1,
          },
          branch: null,
        };
      case 'return': {
        const depth = this.stack.length;
        this.stack.pop();
        return {
          node: {
            ...base,
            kind: 'return',
            label: `${e.implicit ? 'end of' : 'RETURN from'} ${e.chain}`,
            detail: null,
            depth,
          },
          branch: null,
        };
      }
      case 'branch': {
        const label = `${e.label}: ${e.taken ? 'taken' : 'not taken'}`;
        return {
          node: {
            ...base,
            kind: 'branch',
            label,
            detail: `${e.table} ${e.chain} rule ${e.rule}`,
            line: e.line - 1 + this.offset,
            depth: this.stack.length + 1,
          },
          branch: label,
        };
      }
      case 'assume': {
        const a = e.assumption;
        const label = `assumed: ${a.table} ${a.chain} rule ${a.rule} ${a.assumed}`;
        return {
          node: {
            ...base,
            kind: 'assume',
            label,
            detail: a.reason,
            line: a.line - 1 + this.offset,
            depth: this.stack.length + 1,
            flagged: true,
          },
          branch: label,
        };
      }
      case 'nat-skipped':
        return {
          node: { ...base, kind: 'nat-skipped', label: `nat skipped on ${e.hook}`, detail: e.reason, depth: 1 },
          branch: null,
        };
      case 'routing':
        this.stack = [];
        return {
          node: {
            ...base,
            kind: 'routing',
            label: `routing: ${e.decision}${e.iface ? ` via ${e.iface}` : ''}`,
            detail: e.reason,
            depth: 0,
            flagged: e.decision === 'drop',
          },
          branch: null,
        };
      case 'note':
        return { node: { ...base, kind: 'note', label: e.text, depth: this.stack.length }, branch: null };
    }
  }

  end(o: TraceOutcome, i: number): FlowNode {
    const p = o.packet;
    const detail = `${p.protocol} ${p.src}${p.sport !== null ? `:${p.sport}` : ''} → ${p.dst}${p.dport !== null ? `:${p.dport}` : ''}${o.assumptions.length ? ` · if ${o.assumptions.map(a => `${a.chain} #${a.rule} ${a.assumed}`).join(', ')}` : ''}`;
    return {
      id: `end${i}`,
      kind: 'end',
      label: `${percent(o.probability)} ${outcomeHeadline(o)}`,
      detail,
      line: null,
      depth: 0,
      rewrite: null,
      flagged: o.disposition === 'unknown' || o.assumptions.length > 0,
    };
  }
}

function eventKey(e: TraceEvent): string {
  return JSON.stringify(e);
}

function addExact(list: string[]): string {
  if (list.length === 1) return list[0]!;
  let num = 0n;
  let den = 1n;
  for (const f of list) {
    const [n, d] = f.split('/');
    const fn = BigInt(n!);
    const fd = BigInt(d ?? '1');
    num = num * fd + fn * den;
    den *= fd;
  }
  let a = num < 0n ? -num : num;
  let b = den;
  while (b !== 0n) [a, b] = [b, a % b];
  const g = a || 1n;
  return den / g === 1n ? String(num / g) : `${num / g}/${den / g}`;
}

function toSegment(start: TrieNode): FlowSegment {
  const nodes: FlowNode[] = [];
  let cur = start;
  for (;;) {
    if (cur.node) nodes.push(cur.node);
    if (cur.children.size !== 1) break;
    cur = cur.children.values().next().value!;
  }
  const branches: FlowBranch[] = [...cur.children.values()].map(child => ({
    label: child.branchLabel ?? child.node?.label ?? '',
    percent: percent(Math.min(1, child.probability)),
    exact: addExact(child.exact),
    segment: toSegment(child),
  }));
  return { nodes, branches };
}

function hookVisits(outcomes: readonly TraceOutcome[]): HookVisit[] {
  const order = ['PREROUTING', 'routing', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING'] as const;
  const share = new Map<string, number>();
  for (const o of outcomes) {
    const seen = new Set<string>();
    for (const e of o.events) {
      const key = e.kind === 'hook' ? e.hook : e.kind === 'routing' ? 'routing' : null;
      if (key && !seen.has(key)) {
        seen.add(key);
        share.set(key, (share.get(key) ?? 0) + o.probability);
      }
    }
  }
  return order.map(hook => ({
    hook,
    visited: share.has(hook),
    percent: share.has(hook) ? percent(Math.min(1, share.get(hook)!)) : '',
  }));
}

/** The diagram of a trace; `lineOffset` shifts rule lines when the document shows more above the traced text. */
export function traceDiagram(
  trace: Trace,
  title: string,
  packet: string,
  fields: PacketFields,
  lineOffset = 0,
): DiagramModel {
  const drawn = trace.outcomes.slice(0, MAX_OUTCOMES);
  const root: TrieNode = { node: null, key: '', children: new Map(), probability: 0, exact: [], branchLabel: null };
  const maker = new NodeMaker(lineOffset);
  drawn.forEach((o, i) => {
    let cur = root;
    cur.probability += o.probability;
    cur.exact.push(o.probabilityExact);
    for (const e of o.events) {
      const key = eventKey(e);
      let next = cur.children.get(key);
      if (!next) {
        const made = maker.make(e);
        next = { node: made.node, key, children: new Map(), probability: 0, exact: [], branchLabel: made.branch };
        cur.children.set(key, next);
      } else maker.make(e);
      next.probability += o.probability;
      next.exact.push(o.probabilityExact);
      cur = next;
    }
    const end: TrieNode = {
      node: maker.end(o, i),
      key: `end${i}`,
      children: new Map(),
      probability: o.probability,
      exact: [o.probabilityExact],
      branchLabel: `outcome ${i + 1}`,
    };
    cur.children.set(end.key, end);
  });
  const outcomes: OutcomeSummary[] = trace.outcomes.map((o, index) => ({
    index,
    disposition: o.disposition,
    headline: outcomeHeadline(o),
    percent: percent(o.probability),
    exact: o.probabilityExact,
    flagged: o.disposition === 'unknown' || o.assumptions.length > 0,
    reaches: null,
    merged: mergedWords(o),
  }));
  return {
    title,
    packet,
    fields,
    from: trace.from,
    hooks: hookVisits(trace.outcomes),
    outcomes,
    flow: toSegment(root),
    warnings: [...trace.warnings, ...new Set(trace.outcomes.flatMap(o => o.notes))],
    omitted: trace.outcomes.length - drawn.length,
    route: [],
    graph: flowGraph(trace, lineOffset),
  };
}

/** What the CLI's `[N paths]` and "mark bits … differ" lines say, for the outcome list (null for one path). */
function mergedWords(o: TraceOutcome): string | null {
  if (o.paths <= 1 || o.notEnumerated) return null;
  const bits = [
    o.markVaries ? `packet mark bits ${o.markVaries}` : null,
    o.ctmarkVaries ? `connection mark bits ${o.ctmarkVaries}` : null,
  ].filter(b => b !== null);
  const differ = bits.length ? `; they differ in ${bits.join(' and ')}, which no rule reads` : '';
  return `${o.paths} paths end here alike${differ}. The graph draws one of them.`;
}
