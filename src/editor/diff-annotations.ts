/**
 * What each changed hunk of a dump diff does, for the diff editor: the headline (engine diff/headlines.ts)
 * a changed rule or chain causes, placed on that rule's line on its side (a new rule on the right, a
 * removed one on the left), and on a changed chain's declaration line when only its policy changed. A
 * changed chain whose differences change no packet's fate says so. Plain data: the glue shows it as a
 * CodeLens above the line (the extension turns `diffEditor.codeLens` on for dumps); text after the line
 * would sit past the right edge of a long kube-proxy rule.
 */
import type { DiffReport } from '../engine/api.ts';
import { noChangeText } from '../engine/api.ts';
import { escapeMarkdown } from './hover/markdown.ts';

export interface HunkAnnotation {
  readonly side: 'old' | 'new';
  /** 0-based line in that side's dump. */
  readonly line: number;
  /** What the line's change does, short enough to follow the line. */
  readonly text: string;
  /** Every headline the line takes part in, for the hover: markdown, its text escaped. */
  readonly hover: string;
  /** The same as plain text (a CodeLens tooltip). */
  readonly tooltip: string;
}

/** Characters of an annotation shown after the line; the hover has the rest. */
export const ANNOTATION_CHARS = 110;
/** Lines annotated at most: a 300k-rule regeneration can change thousands. */
export const MAX_ANNOTATIONS = 2000;

function clip(s: string): string {
  return s.length <= ANNOTATION_CHARS ? s : `${s.slice(0, ANNOTATION_CHARS - 1)}…`;
}

export function hunkAnnotations(report: DiffReport): HunkAnnotation[] {
  const at = new Map<string, { side: 'old' | 'new'; line: number; texts: string[] }>();
  const add = (side: 'old' | 'new', line: number, text: string) => {
    const k = `${side} ${line}`;
    const e = at.get(k);
    if (!e) at.set(k, { side, line, texts: [text] });
    else if (!e.texts.includes(text)) e.texts.push(text);
  };
  for (const h of report.headlines ?? []) {
    for (const r of h.rules) add(r.side, r.line - 1, h.text);
    if (h.kind === 'policy') {
      for (const c of report.changedChains) {
        if (`${c.table} ${c.chain}` !== h.subject || c.change !== 'policy') continue;
        if (c.newLine !== null) add('new', c.newLine - 1, h.text);
        if (c.oldLine !== null) add('old', c.oldLine - 1, h.text);
      }
    }
  }
  // A changed chain no headline touches changes nothing that was found: say so where the chain is declared.
  const touched = new Set([...at.values()].map(e => `${e.side} ${e.line}`));
  const none = report.identical
    ? 'no packet’s fate changes (proven)'
    : report.changes.length
      ? null
      : noChangeText(report);
  for (const c of report.changedChains) {
    const quiet = report.proven && !chainTouched(report, c.table, c.chain);
    const text = none ?? (quiet ? 'no packet’s fate changes here' : null);
    if (!text) continue;
    if (c.newLine !== null && !touched.has(`new ${c.newLine - 1}`)) add('new', c.newLine - 1, text);
    else if (c.oldLine !== null && c.newLine === null) add('old', c.oldLine - 1, text);
  }
  return [...at.values()]
    .sort((a, b) => (a.side === b.side ? a.line - b.line : a.side === 'old' ? -1 : 1))
    .slice(0, MAX_ANNOTATIONS)
    .map(e => ({
      side: e.side,
      line: e.line,
      text: clip(e.texts.length === 1 ? e.texts[0]! : `${e.texts[0]} (+${e.texts.length - 1} more)`),
      tooltip: e.texts.map(t => `${t}.`).join('\n'),
      hover: ['**Packet Lens** · what this change does to packets', ...e.texts.map(t => escapeMarkdown(`${t}.`))].join(
        '\n\n',
      ),
    }));
}

/** Whether some headline's rules lie in the chain (on either side). */
function chainTouched(report: DiffReport, table: string, chain: string): boolean {
  return (report.headlines ?? []).some(h => h.rules.some(r => r.table === table && r.chain === chain));
}
