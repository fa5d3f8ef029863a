/**
 * Draws a behaviour comparison (the diff view model) with DOM nodes and `textContent` only: packets, rule
 * texts and reasons come from the dumps and are never parsed as HTML. Each changed class can be traced on
 * the old or the new side; each named rule reveals its line in that side's dump.
 */
import type { DiffFateView, DiffItemView, DiffRuleView, DiffViewModel } from '../src/shared/protocol.ts';
import { button } from './controls.ts';

export interface DiffHandlers {
  trace(side: 'old' | 'new', change: number): void;
  reveal(side: 'old' | 'new', line: number): void;
  /** The report as the CLI's `--markdown`, to the clipboard (the extension makes it from the report). */
  copyMarkdown(): void;
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

function fates(label: 'old' | 'new', list: readonly DiffFateView[]): HTMLTableRowElement[] {
  return list.map((f, i) => {
    const tr = el('tr', `fate fate-${label}${f.flagged ? ' flagged' : ''}`);
    tr.append(el('th', null, i === 0 ? label : ''), el('td', 'pct', f.percent), el('td', 'fate-text', f.text));
    const exact = el('td', 'exact', f.exact);
    exact.title = f.exact;
    tr.append(exact);
    return tr;
  });
}

function ruleList(rules: readonly DiffRuleView[], h: DiffHandlers): HTMLElement | null {
  if (!rules.length) return null;
  const ul = el('ul', 'diff-rules');
  for (const r of rules) {
    const li = el('li', `diff-rule side-${r.side} clickable`);
    li.tabIndex = 0;
    li.title = `Reveal line ${r.line + 1} of the ${r.side} dump`;
    li.append(
      el('span', 'side', r.side),
      el('span', 'where', r.where),
      el('span', 'rule', r.rule),
      el('code', 'rule-text', r.text),
    );
    const go = () => h.reveal(r.side, r.line);
    li.addEventListener('click', go);
    li.addEventListener('keydown', e => {
      if (e.key === 'Enter' || e.key === ' ') {
        e.preventDefault();
        go();
      }
    });
    ul.append(li);
  }
  return ul;
}

function traceButtons(change: number, h: DiffHandlers, small = false): HTMLElement {
  const row = el('div', small ? 'trace-buttons small' : 'trace-buttons');
  row.append(
    button('Trace on old', 'secondary', () => h.trace('old', change)),
    button('Trace on new', small ? 'secondary' : 'primary', () => h.trace('new', change)),
  );
  return row;
}

function item(it: DiffItemView, h: DiffHandlers): HTMLElement {
  const art = el('article', `diff-item${it.approximate ? ' flagged' : ''}`);
  const head = el('p', 'diff-packet');
  head.append(el('code', null, it.packet), el('span', 'aspects', it.aspects.join(', ')));
  if (it.approximate) head.append(el('span', 'flag', 'approximate'));
  art.append(head);
  if (it.note) art.append(el('p', 'note', it.note));
  const table = el('table', 'fates');
  table.append(...fates('old', it.old), ...fates('new', it.new));
  art.append(table);
  for (const rules of [it.oldRules, it.newRules]) {
    const ul = ruleList(rules, h);
    if (ul) art.append(ul);
  }
  art.append(traceButtons(it.change, h));
  if (it.alike.length) {
    const more = it.alike.length + it.alikeMore;
    const details = el('details', 'alike');
    details.append(el('summary', null, `and ${more} more class${more === 1 ? '' : 'es'} changed the same way`));
    const ol = el('ol', 'alike-list');
    for (const a of it.alike) {
      const li = el('li', 'alike-item');
      li.append(el('code', null, a.packet), traceButtons(a.change, h, true));
      ol.append(li);
    }
    details.append(ol);
    if (it.alikeMore) details.append(el('p', 'note', `${it.alikeMore} more not listed.`));
    art.append(details);
  }
  return art;
}

export function renderDiff(root: HTMLElement, model: DiffViewModel, h: DiffHandlers): void {
  root.replaceChildren();
  const header = el('header', 'title');
  header.append(el('h1', null, `Packet behaviour · ${model.oldLabel} → ${model.newLabel}`));
  // The change in a reviewer's words first (the CLI's first lines), then the counts and the evidence.
  const heads = model.headlines ?? [];
  if (heads.length) {
    const ul = el('ul', 'headlines');
    ul.setAttribute('aria-label', 'What changes, in short');
    for (const h of heads) ul.append(el('li', 'headline', h));
    header.append(ul);
  }
  header.append(el('p', 'summary', model.summary), el('p', 'facts', model.facts));
  const actions = el('div', 'diff-actions');
  actions.append(button('Copy as Markdown', 'secondary', () => h.copyMarkdown()));
  header.append(actions);
  root.append(header);
  if (model.identical)
    root.append(
      el(
        'p',
        'identical',
        model.changedChains.length
          ? 'Behaviour is identical: the differences change no packet’s fate.'
          : 'Behaviour is identical: no chain differs.',
      ),
    );
  const groups = el('section', 'diff-groups');
  groups.setAttribute('aria-label', 'What changes');
  for (const g of model.groups) {
    const sec = el('section', 'diff-group');
    sec.append(
      el('h2', null, g.title),
      el('p', 'meta', `${g.classes} class${g.classes === 1 ? '' : 'es'} · ${g.aspects.join(', ')}`),
    );
    for (const it of g.items) sec.append(item(it, h));
    groups.append(sec);
  }
  root.append(groups);
  if (model.omitted)
    root.append(
      el('p', 'note', `${model.omitted} more changes are not shown; \`packetlens diff --json\` lists every class.`),
    );
  if (model.changedChains.length) {
    const d = el('details', 'changed-chains');
    d.append(el('summary', null, `Chains that differ (${model.changedChains.length})`));
    const ul = el('ul', null);
    for (const c of model.changedChains) ul.append(el('li', null, c));
    d.append(ul);
    root.append(d);
  }
  if (model.approximations.length || model.warnings.length) {
    const w = el('section', 'warnings');
    w.setAttribute('aria-label', 'Warnings');
    for (const a of model.approximations) w.append(el('p', 'warning', `approximate: ${a}`));
    for (const x of model.warnings) w.append(el('p', 'warning', `warning: ${x}`));
    root.append(w);
  }
}
