/**
 * Draws the laid-out flow graph as SVG, built with createElementNS and `textContent` only (nothing from the
 * model is parsed as markup). Nodes and their rows are focusable: Tab or the arrow keys move between them,
 * Enter reveals the rule in the editor, and focus or hover shows why the packet matched (or walked past).
 * Colours are theme variables set by class in main.css (checked for contrast by test/editor/contrast.test.ts).
 */
import type { GraphLayout, LaidEdge, LaidNode } from './graph-layout.ts';
import { LABEL_LINE_H, LANE_HEAD, PAD, ROW_H, short } from './graph-layout.ts';

const SVG = 'http://www.w3.org/2000/svg';

export interface GraphHandlers {
  reveal(line: number): void;
  toggleWalks(): void;
  /** A node or row took the focus (kept in the panel's state, so a reload puts it back). */
  focused(id: string): void;
}

function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number>,
  cls?: string,
): SVGElementTagNameMap[K] {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (cls) e.setAttribute('class', cls);
  return e;
}

function text(x: number, y: number, s: string, cls: string): SVGTextElement {
  const t = svg('text', { x, y }, cls);
  t.textContent = s;
  return t;
}

/** The tooltip: one element, positioned next to what it explains, text only. */
function tooltip(host: HTMLElement): { show(target: Element, s: string): void; hide(): void } {
  const tip = document.createElement('div');
  tip.className = 'graph-tip';
  tip.setAttribute('role', 'tooltip');
  tip.id = 'graph-tip';
  tip.hidden = true;
  host.append(tip);
  return {
    show(target, s) {
      const r = target.getBoundingClientRect();
      const h = host.getBoundingClientRect();
      tip.textContent = s;
      tip.hidden = false;
      tip.style.left = `${Math.max(0, r.left - h.left + host.scrollLeft)}px`;
      tip.style.top = `${r.bottom - h.top + host.scrollTop + 4}px`;
    },
    hide() {
      tip.hidden = true;
    },
  };
}

function focusable(
  el: SVGElement,
  id: string,
  label: string,
  why: string,
  line: number | null,
  h: GraphHandlers,
  tip: ReturnType<typeof tooltip>,
): void {
  el.setAttribute('tabindex', '0');
  el.setAttribute('role', line !== null ? 'button' : 'img');
  el.setAttribute('aria-label', `${label}. ${why.replace(/\n/g, '. ')}`);
  el.setAttribute('data-focus-id', id);
  el.classList.add('focusable');
  const show = () => tip.show(el, why ? `${label}\n${why}` : label);
  el.addEventListener('mouseenter', show);
  el.addEventListener('mouseleave', () => tip.hide());
  el.addEventListener('focus', () => {
    show();
    h.focused(id);
  });
  el.addEventListener('blur', () => tip.hide());
  if (line !== null) {
    el.classList.add('clickable');
    el.addEventListener('click', e => {
      e.stopPropagation();
      h.reveal(line);
    });
  }
}

function edgePath(e: LaidEdge): string {
  const pts = e.points;
  if (pts.length === 0) return '';
  let d = `M${pts[0]!.x},${pts[0]!.y}`;
  // A smooth curve through dagre's points (quadratic segments between midpoints).
  for (let i = 1; i < pts.length - 1; i++) {
    const p = pts[i]!;
    const n = pts[i + 1]!;
    d += ` Q${p.x},${p.y} ${(p.x + n.x) / 2},${(p.y + n.y) / 2}`;
  }
  const last = pts[pts.length - 1]!;
  return `${d} L${last.x},${last.y}`;
}

function edgeClass(e: LaidEdge, target: LaidNode | undefined): string {
  if (target?.node.tone === 'error' && target.node.kind === 'end') return 'edge error';
  if (e.edge.rewrites.length) return 'edge rewrite';
  return 'edge';
}

function drawEdge(
  e: LaidEdge,
  target: LaidNode | undefined,
  h: GraphHandlers,
  tip: ReturnType<typeof tooltip>,
): SVGGElement {
  const g = svg('g', {}, edgeClass(e, target));
  g.append(
    svg('path', { d: edgePath(e), 'stroke-width': e.width.toFixed(2), 'marker-end': 'url(#arrow)' }, 'edge-line'),
  );
  if (e.label) {
    const l = e.label;
    const box = svg('g', {}, 'edge-label');
    box.append(svg('rect', { x: l.x, y: l.y, width: l.w, height: l.h, rx: 3 }, 'label-bg'));
    l.lines.forEach((s, i) => {
      const isShare = e.edge.balance && i === 0;
      box.append(text(l.x + 3, l.y + (i + 1) * LABEL_LINE_H - 4, s, isShare ? 'share' : 'rewrite-text'));
    });
    const label = [
      e.edge.balance
        ? `${e.edge.percent} of packets (${e.edge.approx || e.edge.exact})`
        : `${e.edge.percent} of packets`,
      ...e.edge.rewrites,
    ].join(', ');
    const why = [
      `exactly ${e.edge.exact}`,
      e.edge.via ? `through ${e.edge.via}` : '',
      e.edge.rewrites.length ? `rewrites here: ${e.edge.rewrites.join(', ')}` : '',
    ]
      .filter(Boolean)
      .join('\n');
    focusable(box, e.edge.id, label, why, e.edge.line, h, tip);
    g.append(box);
  }
  return g;
}

function drawNode(n: LaidNode, h: GraphHandlers, tip: ReturnType<typeof tooltip>): SVGGElement {
  const node = n.node;
  const g = svg('g', { transform: `translate(${n.x},${n.y})` }, `node kind-${node.kind} tone-${node.tone}`);
  g.append(svg('rect', { width: n.w, height: n.h, rx: node.kind === 'end' ? 12 : 4 }, 'node-box'));
  n.lines.forEach((s, i) => g.append(text(PAD, PAD + (i + 1) * ROW_H - 5, s, i === 0 ? 'node-title' : 'node-sub')));
  if (n.lines.length) {
    const label = n.lines.join(', ');
    const why = `${node.percent} of packets (exactly ${node.exact})${node.why ? `\n${node.why}` : ''}`;
    focusable(g, node.id, label, why, node.line, h, tip);
  }
  for (const r of n.rows) {
    const row = svg('g', {}, `row tone-${r.row.tone}${r.row.walk ? ' walk' : ''}`);
    row.append(svg('rect', { x: 1, y: r.y, width: n.w - 2, height: ROW_H }, 'row-bg'));
    row.append(text(PAD, r.y + ROW_H - 5, r.text, 'row-text'));
    focusable(row, `${node.id}:${r.row.where}`, `${r.row.where} ${r.row.verdict}`, r.row.why, r.row.line, h, tip);
    g.append(row);
    if (r.rewriteY !== null)
      g.append(text(PAD, r.rewriteY + ROW_H - 5, `  ⤷ ${short(r.row.rewrite!)}`, 'rewrite-text'));
  }
  if (n.hiddenWalks) {
    const y = n.h - PAD - ROW_H;
    const more = svg('g', {}, 'walk-toggle');
    more.append(text(PAD, y + ROW_H - 5, `+ ${n.hiddenWalks} walked without a match`, 'node-sub'));
    more.setAttribute('tabindex', '0');
    more.setAttribute('role', 'button');
    more.setAttribute('aria-label', `Show the ${n.hiddenWalks} rules walked without a match`);
    more.addEventListener('click', e => {
      e.stopPropagation();
      h.toggleWalks();
    });
    more.addEventListener('keydown', e => {
      if (e.key === 'Enter' || e.key === ' ') {
        e.preventDefault();
        h.toggleWalks();
      }
    });
    g.append(more);
  }
  return g;
}

/** Arrow keys move through the focusable parts in reading order; Enter and Space act like a click. */
function keyboard(root: SVGSVGElement): void {
  root.addEventListener('keydown', e => {
    const items = [...root.querySelectorAll<SVGElement>('[tabindex="0"]')];
    const i = items.indexOf(document.activeElement as SVGElement);
    if (i < 0) return;
    if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      items[i]!.dispatchEvent(new MouseEvent('click', { bubbles: false }));
    } else if (e.key === 'ArrowRight' || e.key === 'ArrowDown') {
      e.preventDefault();
      items[Math.min(items.length - 1, i + 1)]!.focus();
    } else if (e.key === 'ArrowLeft' || e.key === 'ArrowUp') {
      e.preventDefault();
      items[Math.max(0, i - 1)]!.focus();
    }
  });
}

export function drawGraph(
  host: HTMLElement,
  layout: GraphLayout,
  h: GraphHandlers,
  focus: string | null,
): SVGSVGElement {
  const tip = tooltip(host);
  const root = svg('svg', {
    width: layout.width,
    height: layout.height + LANE_HEAD,
    viewBox: `0 ${-LANE_HEAD} ${layout.width} ${layout.height + LANE_HEAD}`,
    role: 'group',
    'aria-label': 'Flow graph of the packet (the text outline below says the same)',
  });
  root.classList.add('flow-graph');
  const defs = svg('defs', {});
  const marker = svg('marker', {
    id: 'arrow',
    viewBox: '0 0 10 10',
    refX: 9,
    refY: 5,
    markerWidth: 9,
    markerHeight: 9,
    markerUnits: 'userSpaceOnUse',
    orient: 'auto-start-reverse',
  });
  marker.append(svg('path', { d: 'M0,0 L10,5 L0,10 z' }, 'arrow-head'));
  defs.append(marker);
  root.append(defs);
  for (const l of layout.lanes) {
    const g = svg('g', {}, 'lane');
    g.append(svg('rect', { x: l.x, y: l.y - LANE_HEAD, width: l.w, height: l.h + LANE_HEAD, rx: 6 }, 'lane-box'));
    g.append(text(l.x + 6, l.y - LANE_HEAD + 14, l.lane.label, 'lane-label'));
    root.append(g);
  }
  const byId = new Map(layout.nodes.map(n => [n.node.id, n]));
  for (const e of layout.edges) root.append(drawEdge(e, byId.get(e.edge.to), h, tip));
  for (const n of layout.nodes) root.append(drawNode(n, h, tip));
  keyboard(root);
  host.append(root);
  if (focus) root.querySelector<SVGElement>(`[data-focus-id="${CSS.escape(focus)}"]`)?.focus({ preventScroll: false });
  return root;
}
