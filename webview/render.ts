/**
 * Draws the diagram model with DOM nodes and `textContent` only: nothing from the model (which carries
 * text from the dump) is ever parsed as HTML.
 */
import type { DiagramModel, FlowGraph, GraphNode, RouteHop } from '../src/shared/protocol.ts';
import { button } from './controls.ts';
import { type Measure, layoutGraph } from './graph-layout.ts';
import { drawGraph } from './graph-render.ts';

export interface RenderHandlers {
  reveal(line: number): void;
  select(outcome: number): void;
  toggleWalks(): void;
  /** `fitted`: whether the graph is drawn fitted now (the default depends on its width). */
  toggleFit(fitted: boolean): void;
  focused(id: string): void;
  exportAs(format: 'svg' | 'png'): void;
}

export interface UiState {
  readonly selectedOutcome: number | null;
  /** The non-matching chain walk is drawn (collapsed by default). */
  readonly showWalks: boolean;
  /** The graph is scaled to the panel's width; null: when it is a little wider than the panel. */
  readonly fit: boolean | null;
  /** The node or row that had the focus. */
  readonly focus: string | null;
}

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className: string | null,
  text?: string,
): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** client → node of a trace from manifests, each hop with why the packet goes there. */
function routeStrip(route: readonly RouteHop[]): HTMLElement {
  const strip = el('section', 'route');
  strip.setAttribute('aria-label', 'Route through the cluster');
  const row = el('div', 'route-row');
  route.forEach((h, i) => {
    if (i > 0) row.append(el('span', 'arrow', '→'));
    const hop = el('div', `route-hop hop-${h.kind}`);
    hop.append(el('span', 'hop-name', h.name));
    if (h.address) hop.append(el('span', 'hop-address', h.address));
    hop.title = h.reason;
    row.append(hop);
  });
  strip.append(row);
  for (const h of route) if (h.reason) strip.append(el('p', 'hop-reason', `${h.name}: ${h.reason}`));
  return strip;
}

/** An exact fraction: long ones (products of 2^31 denominators) are cut with an ellipsis, whole in the tooltip. */
function exact(text: string): HTMLElement {
  const e = el('span', 'exact', text);
  e.title = text;
  return e;
}

/** The smallest scale a graph is fitted to the panel at by default (below it, text is too small to read). */
const MIN_FIT_SCALE = 0.6;

/** Text widths in the graph's font, measured by the browser. */
function measurer(): Measure {
  const ctx = document.createElement('canvas').getContext('2d');
  const family = getComputedStyle(document.body).getPropertyValue('--vscode-editor-font-family').trim() || 'monospace';
  if (ctx) ctx.font = `12px ${family}`;
  return t => (ctx ? ctx.measureText(t).width : t.length * 7.2);
}

function nodeName(n: GraphNode): string {
  const first = n.rows.find(r => !r.walk) ?? n.rows[0];
  return n.title || (first ? `${first.where} ${first.verdict}` : n.kind);
}

/** The graph as text, in lane order: every node with its rows, every edge with its share and rewrites. */
function outline(g: FlowGraph, h: RenderHandlers): HTMLElement {
  const details = el('details', 'outline');
  // Open: it is the graph's words for everyone (and whole where the drawing clips a long rule).
  details.open = true;
  details.append(el('summary', null, 'Text outline of the graph'));
  const byId = new Map(g.nodes.map(n => [n.id, n]));
  const list = el('ol', null);
  const order = [...g.lanes.map(l => l.id), null];
  const nodes = [...g.nodes].sort((a, b) => order.indexOf(a.lane) - order.indexOf(b.lane));
  for (const n of nodes) {
    const li = el('li', `tone-${n.tone}`);
    li.append(el('span', 'outline-head', `${n.lane ? `${n.lane}: ` : ''}${nodeName(n)} — ${n.percent}`));
    if (n.why) li.append(el('p', 'outline-why', n.why));
    if (n.rows.length) {
      const rows = el('ul', null);
      for (const r of n.rows) {
        const item = el('li', r.walk ? 'walk' : null);
        const text = `${r.where} ${r.verdict}${r.walk ? ' (walked, no match)' : ''}${r.rewrite ? ` — rewrites ${r.rewrite}` : ''}`;
        if (r.line !== null) {
          const line = r.line;
          const b = el('button', 'link', text);
          b.type = 'button';
          b.title = r.why;
          b.addEventListener('click', () => h.reveal(line));
          item.append(b);
        } else item.append(el('span', null, text));
        rows.append(item);
      }
      li.append(rows);
    }
    const outs = g.edges.filter(e => e.from === n.id);
    if (outs.length) {
      const edges = el('ul', 'outline-edges');
      for (const e of outs) {
        const to = byId.get(e.to);
        edges.append(
          el(
            'li',
            null,
            `→ ${e.percent}${e.approx ? ` (${e.approx})` : ''} to ${to ? nodeName(to) : e.to}${e.rewrites.length ? `, rewrites ${e.rewrites.join(', ')}` : ''}${e.via ? `, through ${e.via}` : ''}`,
          ),
        );
      }
      li.append(edges);
    }
    list.append(li);
  }
  details.append(list);
  return details;
}

function graphSection(model: DiagramModel, ui: UiState, h: RenderHandlers): HTMLElement {
  const section = el('section', 'graph');
  section.id = 'flow';
  section.setAttribute('aria-label', 'Path of the packet');
  const g = model.graph;
  if (!g) return section;
  const walks = g.nodes.reduce((k, n) => k + n.rows.filter(r => r.walk).length, 0);
  const bar = el('div', 'graph-toolbar');
  if (walks)
    bar.append(
      button(
        ui.showWalks
          ? 'Hide the walk without a match'
          : `Show ${walks} step${walks === 1 ? '' : 's'} walked without a match`,
        'secondary',
        h.toggleWalks,
      ),
    );
  const fitButton = button('Fit to width', 'secondary', () => h.toggleFit(host.classList.contains('fit')));
  bar.append(
    fitButton,
    button('Export SVG…', 'secondary', () => h.exportAs('svg')),
    button('Export PNG…', 'secondary', () => h.exportAs('png')),
  );
  section.append(bar);
  const host = el('div', 'graph-host');
  section.append(host);
  // Laid out once the host is in the document (the measure reads the theme's font).
  queueMicrotask(() => {
    const layout = layoutGraph(g, ui.showWalks, measurer());
    const root = drawGraph(host, layout, h, ui.focus);
    // Unless the user chose, a graph a little wider than the panel is scaled to fit; a much wider one scrolls.
    const fit = ui.fit ?? (layout.width > host.clientWidth && layout.width * MIN_FIT_SCALE <= host.clientWidth);
    fitButton.textContent = fit ? 'Actual size' : 'Fit to width';
    host.classList.toggle('fit', fit);
    if (fit) {
      root.setAttribute('width', '100%');
      root.removeAttribute('height');
    }
  });
  section.append(outline(g, h));
  return section;
}

export function render(
  root: HTMLElement,
  model: DiagramModel,
  ui: UiState,
  h: RenderHandlers,
  form: HTMLElement,
): void {
  root.replaceChildren();
  const header = el('header', 'title');
  header.append(
    el('h1', null, `Packet flow · ${model.title}`),
    el('p', 'packet', `${model.packet} — ${model.from === 'outside' ? 'arrives from outside' : 'sent by the node'}`),
  );
  root.append(header);
  if (model.fileErrors) {
    // Above the outcomes: they describe a file the kernel would not load.
    const banner = el('p', 'file-errors', `⚠ ${model.fileErrors}`);
    banner.setAttribute('role', 'alert');
    root.append(banner);
  }
  root.append(form);
  if (model.route.length) root.append(routeStrip(model.route));
  const outcomes = el('section', 'outcomes');
  outcomes.setAttribute('aria-label', 'Outcomes');
  outcomes.append(el('h2', null, `${model.outcomes.length} outcome${model.outcomes.length === 1 ? '' : 's'}`));
  const list = el('ol', 'outcome-list');
  for (const o of model.outcomes) {
    const li = el(
      'li',
      `outcome disposition-${o.disposition}${o.flagged ? ' flagged' : ''}${ui.selectedOutcome === o.index ? ' selected' : ''}`,
    );
    const b = el('button', 'outcome-button');
    b.type = 'button';
    b.append(el('span', 'pct', o.percent), el('span', 'headline', o.headline), exact(o.exact));
    b.addEventListener('click', () => h.select(o.index));
    li.append(b);
    if (o.reaches) li.append(el('p', 'reaches', `⇒ ${o.reaches}`));
    if (o.merged) li.append(el('p', 'merged', o.merged));
    list.append(li);
  }
  outcomes.append(list);
  if (model.omitted > 0)
    outcomes.append(el('p', 'note', `${model.omitted} less likely outcomes are listed but not drawn.`));
  root.append(outcomes);
  if (model.warnings.length) {
    const w = el('section', 'warnings');
    w.setAttribute('aria-label', 'Warnings');
    for (const text of model.warnings) w.append(el('p', 'warning', text));
    root.append(w);
  }
  root.append(graphSection(model, ui, h));
  if (ui.selectedOutcome !== null)
    document.getElementById(`end${ui.selectedOutcome}`)?.scrollIntoView({ block: 'center' });
}

export function renderMessage(root: HTMLElement, text: string, kind: 'error' | 'busy'): void {
  let status = root.querySelector<HTMLElement>('#status');
  if (!status) {
    status = el('p', null);
    status.id = 'status';
    status.setAttribute('role', 'status');
    root.prepend(status);
  }
  status.className = kind;
  status.textContent = text;
}
