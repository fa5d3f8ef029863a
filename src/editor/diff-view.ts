/**
 * A behaviour comparison (`diffRulesets`' report) as the editor shows it: the CodeLens title atop a diff
 * editor, and the report panel's view model — groups (a Service, or a chain), each with the classes that
 * changed the same way folded into one item whose representative packet can be traced on either side.
 * Plain data only: the webview draws it with `textContent`, so nothing from the dumps becomes HTML.
 */
import type { ClassChange, DiffFate, DiffReport, DiffRuleRef } from '../engine/api.ts';
import { fateText, headlineSentences, noChangeText } from '../engine/api.ts';
import type { DiffFateView, DiffGroupView, DiffItemView, DiffRuleView, DiffViewModel } from '../shared/protocol.ts';
import { percent } from './probability.ts';

/** Items shown at most; a 300k-rule comparison can change thousands of classes. */
export const MAX_ITEMS = 300;
/** Alike classes listed per item. */
export const MAX_ALIKE = 50;

const AFFINITY = /\s+\(client in recent list ([^)]*)\)$/;

/**
 * A class's representative packet in the Trace Packet syntax, and what it cannot say: the diff marks a
 * session-affinity class with `(client in recent list …)`, a condition of the client, not of the packet.
 */
export function classPacket(text: string): { packet: string; note: string | null } {
  const m = AFFINITY.exec(text);
  if (!m) return { packet: text.trim(), note: null };
  return {
    packet: text.slice(0, m.index).trim(),
    note: `the client has a live entry in recent list ${m[1]} (session affinity); the trace buttons trace the packet without it`,
  };
}

/** The CodeLens atop the modified side of a diff editor. */
export function diffLensTitle(report: DiffReport): string {
  // An approximate answer without a change already reads "no change found (approximate)".
  return `${report.summary}${report.identical ? ' · same behaviour' : ''}${report.approximate && report.changes.length ? ' (approximate)' : ''}`;
}

function fateView(f: DiffFate): DiffFateView {
  return {
    percent: percent(f.probability),
    exact: f.probabilityExact,
    text: fateText(f),
    flagged: f.assumptions.length > 0 || f.disposition === 'unknown',
  };
}

function ruleView(side: 'old' | 'new', r: DiffRuleRef): DiffRuleView {
  const file = r.file.slice(r.file.lastIndexOf('/') + 1) || r.file;
  return {
    side,
    line: Math.max(0, r.line - 1),
    where: `${file}:${r.line}`,
    rule: `${r.table} ${r.chain} #${r.rule}`,
    text: r.text,
  };
}

/** Classes of a group that changed identically (same aspects, fates and rules) fold into one item. */
function bundleKey(c: ClassChange): string {
  return JSON.stringify([c.aspects, c.old, c.new, c.oldRules.map(r => r.line), c.newRules.map(r => r.line)]);
}

function chainChangeText(c: DiffReport['changedChains'][number]): string {
  const sets = c.sets?.length ? `, ${c.sets.map(n => `@${n}`).join(', ')} changed` : '';
  const what =
    (c.change === 'rules' ? `rules +${c.added} −${c.removed}` : c.change === 'set' ? 'set' : c.change) + sets;
  return `${c.table} ${c.chain} (${what})`;
}

function plural(n: number, one: string, many: string): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
}

export function diffViewModel(report: DiffReport, oldLabel: string, newLabel: string): DiffViewModel {
  let shown = 0;
  let omitted = 0;
  const groups: DiffGroupView[] = report.groups.map(g => {
    const bundles = new Map<string, { first: number; others: number[] }>();
    for (const i of g.changes) {
      const key = bundleKey(report.changes[i]!);
      const b = bundles.get(key);
      if (b) b.others.push(i);
      else bundles.set(key, { first: i, others: [] });
    }
    const items: DiffItemView[] = [];
    for (const b of bundles.values()) {
      if (shown >= MAX_ITEMS) {
        omitted++;
        continue;
      }
      shown++;
      const c = report.changes[b.first]!;
      const { packet, note } = classPacket(c.class.packet);
      items.push({
        change: b.first,
        packet,
        note,
        aspects: c.aspects,
        approximate: c.approximate,
        old: c.old.map(fateView),
        new: c.new.map(fateView),
        oldRules: c.oldRules.map(r => ruleView('old', r)),
        newRules: c.newRules.map(r => ruleView('new', r)),
        alike: b.others
          .slice(0, MAX_ALIKE)
          .map(i => ({ change: i, packet: classPacket(report.changes[i]!.class.packet).packet })),
        alikeMore: Math.max(0, b.others.length - MAX_ALIKE),
      });
    }
    return {
      title: g.title,
      classes: g.changes.length,
      aspects: [...new Set(g.changes.flatMap(i => report.changes[i]!.aspects))],
      items,
    };
  });
  const cc = report.changedChains;
  const facts = `${plural(report.classesTraced, 'packet class', 'packet classes')} traced · ${cc.length ? `${plural(cc.length, 'chain differs', 'chains differ')}` : 'no chain differs'} (counters and comments aside)`;
  return {
    oldLabel,
    newLabel,
    summary: report.summary,
    headlines: headlineSentences(report),
    identical: report.identical,
    facts,
    changedChains: cc.map(chainChangeText),
    groups,
    omitted,
    // Never green without proof: an approximate "no change" says so first, then what was not explored.
    approximations: [
      ...(!report.identical && !report.changes.length ? [noChangeText(report)] : []),
      ...report.approximations,
      ...(report.unexplored ?? []).map(
        r => `not explored: ${r.file}:${r.line} ${r.table} ${r.chain} #${r.rule} ${r.text}`,
      ),
    ],
    warnings: report.warnings,
  };
}

/** The packet of change `index` to trace on a side, or null when the report has no such change. */
export function changePacket(report: DiffReport, index: number): { packet: string; note: string | null } | null {
  const c = report.changes[index];
  return c ? classPacket(c.class.packet) : null;
}
