/**
 * Views of a diff report: plain text for terminals and a markdown comment for pull requests (the editor
 * can show the same markdown in a hover or a preview). Both fold the classes of a group that changed the
 * same way into one entry, since a Service's endpoints change for every client address alike; the JSON
 * view (the report itself) lists every class. Text taken from dumps is escaped, never interpreted.
 */
import { formatPercent as percent } from '../present.ts';
import type { ChainChange, ClassChange, DiffFate, DiffReport, DiffRuleRef } from './types.ts';

/** One fate in words: `forwarded, DNAT 10.10.1.11:80, masqueraded to 172.18.0.4`. */
export function fateText(f: DiffFate): string {
  const parts: string[] = [f.disposition];
  if (f.dnat) parts.push(`DNAT ${f.dnat}`);
  if (f.snat) parts.push(f.masquerade ? `masqueraded to ${f.snat}` : `SNAT to ${f.snat}`);
  else if (f.masquerade) parts.push('masqueraded');
  if (f.rejectWith) parts.push(`with ${f.rejectWith}`);
  if (f.reason && f.disposition !== 'rejected') parts.push(`(${f.reason})`);
  for (const a of f.assumptions) parts.push(`assuming ${a}`);
  return parts.join(', ');
}

/** No class was found to change, but sameness is not proven: never worded as "identical". */
export function noChangeText(report: DiffReport): string {
  const n = report.unexplored?.length ?? 0;
  return `no change found (approximate): sameness is not proven${n ? `; ${n} changed rule${n === 1 ? '' : 's'} not fully explored (listed below)` : ''}`;
}

function chainText(c: ChainChange): string {
  const sets = c.sets?.length ? `, ${c.sets.map(n => `@${n}`).join(', ')} changed` : '';
  const what =
    (c.change === 'rules' ? `rules +${c.added} −${c.removed}` : c.change === 'set' ? 'set' : c.change) + sets;
  return `${c.table} ${c.chain} (${what})`;
}

/** Classes of a group that changed identically, with the first as the example. */
interface Bundle {
  readonly first: ClassChange;
  readonly others: ClassChange[];
}

/**
 * Text keys for values, each serialised once per object: a report's changes share their fates and rule
 * lists (retain.ts), and serialising 17,000 copies of ten fates for every view cost 100 MB.
 */
function keyCache(): (v: object) => string {
  const known = new Map<object, string>();
  return v => {
    let k = known.get(v);
    if (k === undefined) known.set(v, (k = JSON.stringify(v)));
    return k;
  };
}

function bundles(report: DiffReport, indexes: readonly number[], text = keyCache()): Bundle[] {
  const byKey = new Map<string, Bundle>();
  for (const i of indexes) {
    const c = report.changes[i]!;
    const lines = (rules: readonly DiffRuleRef[]) => rules.map(r => r.line).join(',');
    const key = `${c.aspects.join(',')}|${text(c.old)}|${text(c.new)}|${lines(c.oldRules)}|${lines(c.newRules)}`;
    const b = byKey.get(key);
    if (b) b.others.push(c);
    else byKey.set(key, { first: c, others: [] });
  }
  return [...byKey.values()];
}

/** Groups shown in full per kind of change in the text view; the rest are named in one line. */
export const FOLD_AFTER = 3;
const FOLDED_NAMES = 20;

/** Groups that changed alike (same aspects, same responsible rules, bundle by bundle) beyond `FOLD_AFTER`. */
interface Fold {
  shown: number;
  readonly more: string[];
  classes: number;
  readonly aspects: readonly string[];
}

/** What a group's changes are, without the packets and fates that differ between Services. */
function signature(all: readonly Bundle[]): string {
  const lines = (rules: readonly DiffRuleRef[]) => rules.map(r => `${r.file}:${r.line}`).join(',');
  return all
    .map(b => `${b.first.aspects.join(',')}|${lines(b.first.oldRules)}|${lines(b.first.newRules)}`)
    .sort()
    .join(' ');
}

function ruleRefText(r: DiffRuleRef): string {
  return `${r.file}:${r.line}  ${r.table} ${r.chain} #${r.rule}  ${r.text}`;
}

/** Headlines shown at most before "and N more"; the report below lists every change. */
export const MAX_HEADLINES = 8;

/** The headlines as sentences (a full stop added), at most `MAX_HEADLINES`, then how many more there are. */
export function headlineSentences(report: DiffReport): string[] {
  const hs = report.headlines ?? [];
  const out = hs.slice(0, MAX_HEADLINES).map(h => `${h.text}.`);
  if (hs.length > MAX_HEADLINES) out.push(`… and ${hs.length - MAX_HEADLINES} more (below).`);
  return out;
}

export function formatDiffText(report: DiffReport): string {
  // A reviewer reads the change in words first (headlines.ts), then the evidence.
  const heads = headlineSentences(report);
  const out: string[] = [
    ...heads,
    ...(heads.length ? [''] : []),
    `packetlens diff: ${report.old.file} → ${report.new.file}`,
  ];
  const cc = report.changedChains;
  out.push(
    cc.length
      ? `${cc.length} chain${cc.length === 1 ? ' differs' : 's differ'}: ${cc.slice(0, 8).map(chainText).join(', ')}${cc.length > 8 ? `, … (${cc.length - 8} more)` : ''}`
      : 'no chain differs (counters and comments aside)',
  );
  out.push(`${report.summary}  (${report.classesTraced} packet classes traced)`);
  if (report.identical)
    out.push(
      cc.length
        ? 'behaviour is identical (proven): the differences do not change any packet’s fate'
        : 'behaviour is identical',
    );
  else if (!report.changes.length) out.push(noChangeText(report));
  const text = keyCache();
  const folds = new Map<string, Fold>();
  for (const g of report.groups) {
    const all = bundles(report, g.changes, text);
    // A change every Service crosses (KUBE-MARK-MASQ) changes a thousand Services alike: the first few
    // are shown in full, the rest named in one line each kind (headlines.ts says what each one does).
    const sig = signature(all);
    const fold = folds.get(sig) ?? { shown: 0, more: [], classes: 0, aspects: all[0]?.first.aspects ?? [] };
    folds.set(sig, fold);
    if (fold.shown >= FOLD_AFTER) {
      fold.more.push(g.title);
      fold.classes += g.changes.length;
      continue;
    }
    fold.shown++;
    out.push('', `${g.title}  (${g.changes.length} class${g.changes.length === 1 ? '' : 'es'})`);
    for (const b of all) {
      const c = b.first;
      out.push(`  ${c.class.packet}  [${c.aspects.join(', ')}]${c.approximate ? '  (approximate)' : ''}`);
      if (b.others.length)
        out.push(
          `    and ${b.others.length} more class${b.others.length === 1 ? '' : 'es'} changed the same way, e.g. ${b.others
            .slice(0, 3)
            .map(o => o.class.packet)
            .join('; ')}`,
        );
      for (const [label, fates] of [
        ['old', c.old],
        ['new', c.new],
      ] as const) {
        fates.forEach((f, i) => {
          out.push(`    ${i === 0 ? label : '   '}  ${percent(f.probability).padStart(7)}  ${fateText(f)}`);
          for (const p of f.path ?? []) out.push(`                    ${p}`);
        });
      }
      for (const [label, rules] of [
        ['old rules', c.oldRules],
        ['new rules', c.newRules],
      ] as const) {
        rules.forEach((r, i) => out.push(`    ${i === 0 ? label : '         '}  ${ruleRefText(r)}`));
      }
    }
  }
  for (const f of folds.values()) {
    if (!f.more.length) continue;
    const names = f.more.slice(0, FOLDED_NAMES).join(', ');
    out.push(
      '',
      `and ${f.more.length} more ${f.more.length === 1 ? 'group' : 'groups'} (${f.classes} class${f.classes === 1 ? '' : 'es'}) changed in the same aspects [${f.aspects.join(', ')}] by the same rules as the ones above: ${names}${f.more.length > FOLDED_NAMES ? `, … (${f.more.length - FOLDED_NAMES} more; --json lists every class)` : ''}`,
    );
  }
  if (report.approximations.length) out.push('', ...report.approximations.map(a => `approximate: ${a}`));
  for (const r of report.unexplored ?? []) out.push(`not explored: ${ruleRefText(r)}`);
  for (const w of report.warnings) out.push(`warning: ${w}`);
  return out.join('\n');
}

/** Markdown stays well below GitHub's 65,536-character limit for a comment. */
const MARKDOWN_BUDGET = 30_000;
const MAX_BUNDLES = 8;

function html(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** A markdown code span that survives backticks and table pipes in its text. */
function code(s: string): string {
  const longest = Math.max(0, ...(s.match(/`+/g) ?? []).map(m => m.length));
  const fence = '`'.repeat(longest + 1);
  const body = s.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
  return `${fence}${/^`|`$/.test(body) ? ` ${body} ` : body}${fence}`;
}

function cell(s: string): string {
  return html(s).replace(/\|/g, '\\|');
}

export function formatDiffMarkdown(report: DiffReport): string {
  const out: string[] = [`### packetlens diff: ${code(report.old.file)} → ${code(report.new.file)}`, ''];
  const heads = headlineSentences(report);
  if (heads.length) out.push(...heads.map(h => `- **${cell(h)}**`), '');
  const cc = report.changedChains;
  out.push(
    `**${cell(report.summary)}** — ${report.classesTraced} packet classes traced; ${cc.length} chain${cc.length === 1 ? '' : 's'} differ${cc.length === 1 ? 's' : ''} (counters and comments aside).`,
    '',
  );
  if (report.identical)
    out.push(cc.length ? 'Behaviour is identical (proven): no packet’s fate changes.' : 'Behaviour is identical.', '');
  else if (!report.changes.length) out.push(`**${cell(noChangeText(report))}**`, '');
  if (report.groups.length) {
    out.push('| affected | classes | what changes |', '|---|---:|---|');
    for (const g of report.groups) {
      const aspects = [...new Set(g.changes.flatMap(i => report.changes[i]!.aspects))];
      const name =
        g.key.kind === 'service' ? `Service ${code(g.key.name)}` : `chain ${code(`${g.key.table} ${g.key.chain}`)}`;
      out.push(`| ${name} | ${g.changes.length} | ${aspects.join(', ')} |`);
    }
    out.push('');
  }
  let shown = 0;
  for (const g of report.groups) {
    // GitHub refuses comments over 65,536 characters: stop in time and point to the full report.
    if (out.join('\n').length > MARKDOWN_BUDGET) {
      out.push(
        `*${report.groups.length - shown} more affected Service${report.groups.length - shown === 1 ? '' : 's'} or chains not shown; \`packetlens diff --json\` lists every class.*`,
        '',
      );
      break;
    }
    shown++;
    const all = bundles(report, g.changes);
    out.push(
      `<details><summary>${html(g.title)} — ${g.changes.length} class${g.changes.length === 1 ? '' : 'es'}</summary>`,
      '',
    );
    if (all.length > MAX_BUNDLES)
      out.push(`*${all.length} different changes; the first ${MAX_BUNDLES} are shown.*`, '');
    for (const b of all.slice(0, MAX_BUNDLES)) {
      const c = b.first;
      out.push(
        `${code(c.class.packet)}${b.others.length ? ` and ${b.others.length} more class${b.others.length === 1 ? '' : 'es'} alike` : ''}${c.approximate ? ' *(approximate)*' : ''}`,
        '',
      );
      out.push('| | probability | fate |', '|---|---:|---|');
      for (const [label, fates] of [
        ['old', c.old],
        ['new', c.new],
      ] as const) {
        fates.forEach((f, i) =>
          out.push(
            `| ${i === 0 ? label : ''} | ${percent(f.probability)} | ${cell(fateText(f))}${f.path ? `<br>${f.path.map(cell).join('<br>')}` : ''} |`,
          ),
        );
      }
      out.push('');
      for (const [label, rules] of [
        ['old', c.oldRules],
        ['new', c.newRules],
      ] as const) {
        if (rules.length)
          out.push(`- ${label}: ${rules.map(r => `${code(`${r.file}:${r.line}`)} ${code(r.text)}`).join(', ')}`);
      }
      out.push('');
    }
    out.push('</details>', '');
  }
  if (cc.length) {
    out.push('<details><summary>Chains that differ</summary>', '');
    for (const c of cc) out.push(`- ${code(chainText(c))}`);
    out.push('', '</details>', '');
  }
  for (const a of report.approximations) out.push(`> approximate: ${cell(a)}`);
  for (const r of report.unexplored ?? []) out.push(`> not explored: ${code(`${r.file}:${r.line}`)} ${code(r.text)}`);
  for (const w of report.warnings) out.push(`> warning: ${cell(w)}`);
  return out.join('\n').replace(/\n+$/, '\n');
}
