/**
 * Lays the flow graph out with dagre (a kept layered-graph layout library; nothing here places a node by
 * hand): left to right, one box per lane (hook visit) around its nodes, edge labels given their own room.
 * Pure: text widths come from the caller's `measure`, so tests run it without a DOM.
 */
import dagre from '@dagrejs/dagre';
import type { FlowGraph, GraphEdge, GraphLane, GraphNode, GraphRow } from '../src/shared/protocol.ts';

/** Width in pixels of a text in the graph's font. */
export type Measure = (text: string) => number;

export const ROW_H = 18;
export const PAD = 6;
export const LABEL_LINE_H = 16;
export const LANE_HEAD = 20;
/** Longest row or label text drawn whole; longer ones are clipped with an ellipsis (whole in the hover). */
export const MAX_CHARS = 42;

export interface LaidRow {
  readonly row: GraphRow;
  readonly text: string;
  /** Top of the row inside the node. */
  readonly y: number;
  /** Top of the rewrite line drawn under the row (the connector to the next row), if any. */
  readonly rewriteY: number | null;
}

export interface LaidNode {
  readonly node: GraphNode;
  /** Top-left corner and size. */
  readonly x: number;
  readonly y: number;
  readonly w: number;
  readonly h: number;
  readonly lines: readonly string[];
  readonly rows: readonly LaidRow[];
  /** Rows of the non-matching walk left out (collapsed). */
  readonly hiddenWalks: number;
}

export interface LaidEdge {
  readonly edge: GraphEdge;
  readonly points: readonly { readonly x: number; readonly y: number }[];
  /** Stroke width: by the share of packets along the edge. */
  readonly width: number;
  readonly label: {
    readonly x: number;
    readonly y: number;
    readonly w: number;
    readonly h: number;
    readonly lines: readonly string[];
  } | null;
}

export interface LaidLane {
  readonly lane: GraphLane;
  readonly x: number;
  readonly y: number;
  readonly w: number;
  readonly h: number;
}

export interface GraphLayout {
  readonly width: number;
  readonly height: number;
  readonly nodes: readonly LaidNode[];
  readonly edges: readonly LaidEdge[];
  readonly lanes: readonly LaidLane[];
}

export function clip(text: string, max = MAX_CHARS): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** `nat KUBE-SVC-DLGPAL4ZCYSJ7UPR #2 jump KUBE-SEP-…`: the table is the lane's business, the chain stays. */
export function rowText(r: GraphRow): string {
  return clip(short(`${r.where} ${r.verdict}`));
}

/** kube-proxy's hashed chain names shortened to their first 4 characters (`KUBE-SVC-DLGP…`); whole in the hover. */
export function short(text: string): string {
  return text.replace(/\b(KUBE-[A-Z]+-)([A-Z0-9]{4})[A-Z0-9]{12}\b/g, '$1$2…').replace(/ \(source port[^)]*\)/, '');
}

/** The visible rows of a node: the walk's only when expanded, or when the node has nothing else. */
export function visibleRows(n: GraphNode, showWalks: boolean): readonly GraphRow[] {
  const shown = n.rows.filter(r => showWalks || !r.walk);
  return shown.length ? shown : n.rows;
}

/** The text lines of a node other than its rows. */
export function nodeLines(n: GraphNode, g: FlowGraph): string[] {
  switch (n.kind) {
    case 'balance': {
      const ways = g.edges.filter(e => e.from === n.id).length;
      return [
        clip(`◆ ${short(n.title)}`),
        `load balance · ${ways} way${ways === 1 ? '' : 's'}${n.chooser ? ` · ${n.chooser}` : ''}`,
      ];
    }
    case 'end':
      return [clip(`${n.tone === 'error' ? '✕' : n.tone === 'unknown' ? '?' : '■'} ${n.title}`), n.percent];
    case 'routing':
      return [clip(n.title)];
    default:
      return [];
  }
}

/** The lines of an edge's label: a split's share first, then the rewrites done on the way. */
export function edgeLines(e: GraphEdge): string[] {
  const lines: string[] = [];
  if (e.balance) lines.push(`${e.percent}${e.approx ? `  ${e.approx}` : ''}`);
  for (const r of e.rewrites) lines.push(clip(r, 30));
  return lines;
}

export function edgeWidth(share: number): number {
  return 1.5 + 6 * Math.sqrt(Math.max(0, Math.min(1, share)));
}

export function layoutGraph(g: FlowGraph, showWalks: boolean, measure: Measure): GraphLayout {
  const d = new dagre.graphlib.Graph({ compound: true, multigraph: true });
  d.setGraph({ rankdir: 'LR', nodesep: 10, ranksep: 22, edgesep: 6, marginx: 10, marginy: 10 });
  d.setDefaultEdgeLabel(() => ({}));
  for (const l of g.lanes) d.setNode(`lane:${l.id}`, { width: 0, height: 0, paddingTop: LANE_HEAD });
  const laid = new Map<string, { lines: string[]; rows: LaidRow[]; hidden: number; w: number; h: number }>();
  for (const n of g.nodes) {
    const lines = nodeLines(n, g);
    const rows: LaidRow[] = [];
    let y = PAD + lines.length * ROW_H;
    let w = Math.max(0, ...lines.map(measure));
    const shown = visibleRows(n, showWalks);
    for (const r of shown) {
      const text = rowText(r);
      w = Math.max(w, measure(text));
      const rewriteY = r.rewrite ? y + ROW_H : null;
      if (r.rewrite) w = Math.max(w, measure(`  ⤷ ${clip(r.rewrite, 36)}`));
      rows.push({ row: r, text, y, rewriteY });
      y += ROW_H * (r.rewrite ? 2 : 1);
    }
    const hidden = n.rows.length - shown.length;
    if (hidden) {
      w = Math.max(w, measure(`+ ${hidden} walked without a match`));
      y += ROW_H;
    }
    const size = { w: Math.ceil(w + 2 * PAD + 4), h: Math.max(y + PAD, 2 * PAD + ROW_H) };
    laid.set(n.id, { lines, rows, hidden, ...size });
    d.setNode(n.id, { width: size.w, height: size.h });
    if (n.lane) d.setParent(n.id, `lane:${n.lane}`);
  }
  for (const e of g.edges) {
    const lines = edgeLines(e);
    const w = lines.length ? Math.max(...lines.map(measure)) + 6 : 0;
    d.setEdge({ v: e.from, w: e.to, name: e.id }, { width: w, height: lines.length * LABEL_LINE_H, labelpos: 'c' });
  }
  dagre.layout(d);
  const nodes: LaidNode[] = g.nodes.map(n => {
    const p = d.node(n.id)!;
    const l = laid.get(n.id)!;
    return {
      node: n,
      x: p.x! - l.w / 2,
      y: p.y! - l.h / 2,
      w: l.w,
      h: l.h,
      lines: l.lines,
      rows: l.rows,
      hiddenWalks: l.hidden,
    };
  });
  const edges: LaidEdge[] = g.edges.map(e => {
    const p = d.edge({ v: e.from, w: e.to, name: e.id })!;
    const lines = edgeLines(e);
    return {
      edge: e,
      points: (p.points ?? []).map((q: { x: number; y: number }) => ({ x: q.x, y: q.y })),
      width: edgeWidth(e.share),
      label: lines.length
        ? { x: p.x! - p.width! / 2, y: p.y! - p.height! / 2, w: p.width!, h: p.height!, lines }
        : null,
    };
  });
  const lanes: LaidLane[] = g.lanes.map(l => {
    const p = d.node(`lane:${l.id}`)!;
    return { lane: l, x: p.x! - p.width / 2, y: p.y! - p.height / 2, w: p.width, h: p.height };
  });
  const gl = d.graph();
  return { width: Math.ceil(gl.width ?? 0), height: Math.ceil(gl.height ?? 0), nodes, edges, lanes };
}
