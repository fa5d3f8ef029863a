/**
 * Draws the diagram model with DOM nodes and `textContent` only: nothing from the model (which carries
 * text from the dump) is ever parsed as HTML.
 */
import type { DiagramModel, FlowNode, FlowSegment, HookVisit, RouteHop } from '../src/shared/protocol.ts';

export interface RenderHandlers {
  reveal(line: number): void;
  toggle(id: string): void;
  select(outcome: number): void;
}

export interface UiState {
  readonly collapsed: ReadonlySet<string>;
  readonly selectedOutcome: number | null;
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

function hookStrip(hooks: readonly HookVisit[]): HTMLElement {
  const strip = el('section', 'hooks');
  strip.setAttribute('aria-label', 'Netfilter hooks on the way');
  const box = (name: HookVisit['hook'], label: string) => {
    const h = hooks.find(x => x.hook === name);
    const b = el('div', `hook${h?.visited ? ' visited' : ''}`);
    b.append(el('span', 'hook-name', label));
    if (h?.visited) b.append(el('span', 'hook-share', h.percent));
    return b;
  };
  const arrow = (t = '→') => el('span', 'arrow', t);
  const top = el('div', 'hook-row');
  top.append(
    el('span', 'end-label', 'in'),
    arrow(),
    box('PREROUTING', 'PREROUTING'),
    arrow(),
    box('routing', 'routing decision'),
    arrow(),
    box('INPUT', 'INPUT'),
    arrow(),
    el('span', 'end-label', 'local process'),
  );
  const mid = el('div', 'hook-row indent');
  mid.append(
    arrow('↘'),
    box('FORWARD', 'FORWARD'),
    arrow(),
    box('POSTROUTING', 'POSTROUTING'),
    arrow(),
    el('span', 'end-label', 'out'),
  );
  const bottom = el('div', 'hook-row');
  bottom.append(
    el('span', 'end-label', 'local process'),
    arrow(),
    box('OUTPUT', 'OUTPUT'),
    arrow('→ routing → POSTROUTING → out'),
  );
  strip.append(top, mid, bottom);
  return strip;
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

function nodeItem(n: FlowNode, h: RenderHandlers): HTMLElement[] {
  const li = el('li', `node kind-${n.kind} depth-${Math.min(n.depth, 8)}${n.flagged ? ' flagged' : ''}`);
  li.id = n.id;
  li.append(el('span', 'label', n.label));
  if (n.detail) li.append(el('span', 'detail', n.detail));
  if (n.flagged) li.append(el('span', 'flag', 'unknown'));
  if (n.line !== null) {
    const line = n.line;
    li.tabIndex = 0;
    li.classList.add('clickable');
    li.title = `Reveal line ${line + 1} in the dump`;
    li.addEventListener('click', () => h.reveal(line));
    li.addEventListener('keydown', e => {
      if (e.key === 'Enter' || e.key === ' ') {
        e.preventDefault();
        h.reveal(line);
      }
    });
  }
  const out: HTMLElement[] = [li];
  if (n.rewrite) out.push(el('li', `edge rewrite depth-${Math.min(n.depth, 8)}`, n.rewrite));
  return out;
}

/** An exact fraction: long ones (products of 2^31 denominators) are cut with an ellipsis, whole in the tooltip. */
function exact(text: string): HTMLElement {
  const e = el('span', 'exact', text);
  e.title = text;
  return e;
}

/**
 * A run of nodes, then its split. The first split is drawn side by side when it has few branches; deeper
 * splits (a cascade of random draws) are stacked, so any number of branches stays readable.
 */
function segment(
  s: FlowSegment,
  ui: UiState,
  h: RenderHandlers,
  branchLabel: string | null = null,
  level = 0,
): HTMLElement {
  const wrap = el('div', 'segment');
  const list = el('ol', 'nodes');
  s.nodes.forEach((n, i) => {
    // The branch heading already says what the split node says; keep the node (it reveals the rule) short.
    const shown =
      i === 0 && branchLabel !== null && n.label === branchLabel ? { ...n, label: n.detail ?? '', detail: null } : n;
    list.append(...nodeItem(shown, h));
  });
  wrap.append(list);
  if (s.branches.length) {
    const row = el('div', `branches ${level === 0 && s.branches.length <= 3 ? 'split' : 'stack'}`);
    for (const b of s.branches) {
      const col = el('div', 'branch');
      const key = b.segment.nodes[0]?.id ?? b.label;
      const head = el('button', 'branch-head');
      head.type = 'button';
      const collapsed = ui.collapsed.has(key);
      head.setAttribute('aria-expanded', String(!collapsed));
      head.append(
        el('span', 'twisty', collapsed ? '▸' : '▾'),
        el('span', 'branch-label', b.label),
        el('span', 'pct', b.percent),
        exact(b.exact),
      );
      head.addEventListener('click', () => h.toggle(key));
      col.append(head);
      if (!collapsed) col.append(segment(b.segment, ui, h, b.label, s.branches.length > 1 ? level + 1 : level));
      row.append(col);
    }
    wrap.append(row);
  }
  return wrap;
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
  root.append(hookStrip(model.hooks));
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
  const flow = el('section', 'flow');
  flow.id = 'flow';
  flow.setAttribute('aria-label', 'Path of the packet');
  flow.append(segment(model.flow, ui, h));
  root.append(flow);
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
