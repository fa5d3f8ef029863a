/**
 * The flow graph of a trace: every drawn outcome's events become a path of steps (rules, load-balancing
 * splits, routing decisions, an end), and paths that cross the same step share one node — one FORWARD and
 * one POSTROUTING however many endpoints a Service has. Then runs of rules that the same paths cross one
 * after another in one hook become one node (its rows), and a load-balancing target whose chain only
 * rewrites the packet (kube-proxy's KUBE-SEP) is folded into the split's edge, so a 12-endpoint Service
 * reads as one split with 12 labelled edges. The view lays the graph out (webview/graph-layout.ts).
 */
import type { Rational, Trace, TraceOutcome } from '../../engine/api.ts';
import { outcomeHeadline, toNumber } from '../../engine/api.ts';
import type { FlowGraph, GraphEdge, GraphLane, GraphNode, GraphRow, GraphTone } from '../../shared/protocol.ts';
import { exactText, percent } from '../probability.ts';
import { approxFraction, parseExact, sumExact } from './fraction.ts';
import { type Step, pathSteps } from './steps.ts';

interface ProtoNode {
  id: string;
  step: Step;
  rows: GraphRow[];
  /** Indexes of the outcomes that cross it. */
  outcomes: Set<number>;
}

interface ProtoEdge {
  from: string;
  to: string;
  probs: Rational[];
  rewrites: string[];
  via: string | null;
  line: number | null;
  balance: boolean;
}

/** Rows a load-balancing target may have and still be folded into its edge (KUBE-SEP: hairpin mark, DNAT). */
const FOLD_MAX_ROWS = 3;

function addRewrite(list: string[], r: string | null): void {
  if (r && !list.includes(r)) list.push(r);
}

class GraphBuilder {
  readonly nodes = new Map<string, ProtoNode>();
  readonly edges = new Map<string, ProtoEdge>();
  readonly lanes: GraphLane[] = [];
  private readonly probs: Rational[];

  constructor(private readonly outcomes: readonly TraceOutcome[]) {
    this.probs = outcomes.map(o => parseExact(o.probabilityExact) ?? { num: 0n, den: 1n });
  }

  addPath(index: number, steps: readonly Step[]): void {
    let prev: Step | null = null;
    for (const s of steps) {
      if (s.lane && !this.lanes.some(l => l.id === s.lane))
        this.lanes.push({ id: s.lane, label: s.laneLabel ?? s.lane });
      let n = this.nodes.get(s.key);
      if (!n) {
        n = { id: `g${this.nodes.size}`, step: s, rows: s.row ? [s.row] : [], outcomes: new Set() };
        this.nodes.set(s.key, n);
      } else if (s.row && n.rows[0] && s.row.walk !== n.rows[0].walk) {
        // A jump is a walk only if every path through it found nothing in the chain.
        n.rows[0] = { ...n.rows[0], walk: false, why: s.row.walk ? n.rows[0].why : s.row.why };
      }
      n.outcomes.add(index);
      if (prev) {
        const from = this.nodes.get(prev.key)!.id;
        const key = `${from}>${n.id}>${prev.via ?? ''}`;
        let e = this.edges.get(key);
        if (!e) {
          e = {
            from,
            to: n.id,
            probs: [],
            rewrites: [],
            via: prev.via ?? null,
            line: prev.viaLine ?? null,
            balance: prev.kind === 'balance',
          };
          this.edges.set(key, e);
        }
        e.probs.push(this.probs[index]!);
        addRewrite(e.rewrites, prev.rewrite ?? null);
      }
      prev = s;
    }
  }

  private inEdges(id: string): ProtoEdge[] {
    return [...this.edges.values()].filter(e => e.to === id);
  }

  private outEdges(id: string): ProtoEdge[] {
    return [...this.edges.values()].filter(e => e.from === id);
  }

  /** Rules crossed one after another by the same paths, in one hook, become one node. */
  mergeRuns(): void {
    // Adjacency kept up to date as nodes merge, so the pass is linear in the graph's size.
    const byId = new Map([...this.nodes.values()].map(n => [n.id, n]));
    const outs = new Map<string, ProtoEdge[]>();
    const ins = new Map<string, ProtoEdge[]>();
    for (const e of this.edges.values()) {
      outs.set(e.from, [...(outs.get(e.from) ?? []), e]);
      ins.set(e.to, [...(ins.get(e.to) ?? []), e]);
    }
    const gone = new Set<string>();
    for (const a of this.nodes.values()) {
      if (a.step.kind !== 'row' || gone.has(a.id)) continue;
      for (;;) {
        const out = outs.get(a.id) ?? [];
        if (out.length !== 1) break;
        const edge = out[0]!;
        const b = byId.get(edge.to)!;
        if (b === a || b.step.kind !== 'row' || b.step.lane !== a.step.lane || (ins.get(b.id) ?? []).length !== 1)
          break;
        const last = a.rows.length - 1;
        const between = edge.rewrites.join(', ');
        if (between && !a.rows[last]!.rewrite) a.rows[last] = { ...a.rows[last]!, rewrite: between };
        a.rows.push(...b.rows);
        const bOut = outs.get(b.id) ?? [];
        for (const e of bOut) e.from = a.id;
        outs.set(a.id, bOut);
        outs.delete(b.id);
        ins.delete(b.id);
        gone.add(b.id);
      }
    }
    for (const n of [...this.nodes.values()]) if (gone.has(n.id)) this.nodes.delete(n.step.key);
    const edges = [...outs.values()].flat();
    this.edges.clear();
    for (const e of edges) this.edges.set(`${e.from}>${e.to}>${e.via ?? ''}`, e);
  }

  /** A load-balancing target that only rewrites (KUBE-SEP: DNAT) becomes its split's edge label. */
  foldTargets(): void {
    for (const n of [...this.nodes.values()]) {
      if (n.step.kind !== 'row' || n.rows.length > FOLD_MAX_ROWS) continue;
      const ins = this.inEdges(n.id);
      const outs = this.outEdges(n.id);
      if (ins.length !== 1 || outs.length !== 1 || !ins[0]!.balance) continue;
      const [i, o] = [ins[0]!, outs[0]!];
      const shown = n.rows.filter(r => !r.walk);
      const main = shown.find(r => r.rewrite) ?? shown[shown.length - 1] ?? n.rows[0]!;
      const rewrites: string[] = [];
      for (const r of n.rows) addRewrite(rewrites, r.rewrite);
      for (const r of o.rewrites) addRewrite(rewrites, r);
      this.edges.delete(`${i.from}>${n.id}>${i.via ?? ''}`);
      this.edges.delete(`${n.id}>${o.to}>${o.via ?? ''}`);
      const via = main.where.replace(/ #\d+$/, '');
      const e: ProtoEdge = { ...i, to: o.to, rewrites, via, line: main.line };
      this.edges.set(`${e.from}>${e.to}>${via}`, e);
      this.nodes.delete(n.step.key);
    }
  }

  result(): FlowGraph {
    const nodes: GraphNode[] = [...this.nodes.values()].map(n => {
      const p = sumExact([...n.outcomes].map(i => this.probs[i]!));
      const s = n.step;
      return {
        id: n.id,
        kind: s.kind === 'row' ? 'rules' : s.kind,
        lane: s.lane,
        title: s.title ?? '',
        ...(s.chooser ? { chooser: s.chooser } : {}),
        rows: n.rows,
        percent: percent(Math.min(1, toNumber(p))),
        exact: exactText(p),
        tone:
          s.kind === 'end'
            ? (s.tone ?? 'normal')
            : worst(
                n.rows.map(r => r.tone),
                s.tone ?? 'normal',
              ),
        why: s.kind === 'end' ? endWhy(this.outcomes, n.outcomes) : (s.why ?? ''),
        line: s.line ?? n.rows[0]?.line ?? null,
      };
    });
    const edges: GraphEdge[] = [...this.edges.values()].map((e, i) => {
      const p = sumExact(e.probs);
      return {
        id: `e${i}`,
        from: e.from,
        to: e.to,
        share: Math.min(1, toNumber(p)),
        percent: percent(Math.min(1, toNumber(p))),
        approx: approxFraction(p),
        exact: exactText(p),
        rewrites: e.rewrites,
        via: e.via,
        line: e.line,
        balance: e.balance,
      };
    });
    const used = new Set(nodes.map(n => n.lane));
    return { lanes: this.lanes.filter(l => used.has(l.id)), nodes, edges };
  }
}

const TONE_ORDER: readonly GraphTone[] = ['normal', 'accept', 'unknown', 'error'];

function worst(tones: readonly GraphTone[], base: GraphTone): GraphTone {
  return tones.reduce((a, t) => (TONE_ORDER.indexOf(t) > TONE_ORDER.indexOf(a) ? t : a), base);
}

/** The outcomes that end at one end node, most probable first, for its hover. */
function endWhy(outcomes: readonly TraceOutcome[], through: ReadonlySet<number>): string {
  const list = [...through].sort((a, b) => outcomes[b]!.probability - outcomes[a]!.probability);
  const lines = list.slice(0, 16).map(i => `${percent(outcomes[i]!.probability)}  ${outcomeHeadline(outcomes[i]!)}`);
  if (list.length > 16) lines.push(`… and ${list.length - 16} more outcomes`);
  return lines.join('\n');
}

/** At most this many outcomes are drawn (the list above the graph names them all). */
export const MAX_GRAPH_OUTCOMES = 64;

/** The graph of a trace; `lineOffset` shifts rule lines when the document shows more above the traced text. */
export function flowGraph(trace: Trace, lineOffset = 0): FlowGraph {
  const drawn = trace.outcomes.slice(0, MAX_GRAPH_OUTCOMES);
  const b = new GraphBuilder(drawn);
  drawn.forEach((o, i) => b.addPath(i, pathSteps(o, lineOffset)));
  b.mergeRuns();
  b.foldTargets();
  return b.result();
}
