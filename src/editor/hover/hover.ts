/**
 * The hover at a position of a dump: a chain name, a `-j` verdict or extension, a `*table` line, or else the
 * rule on the line. Returns markdown (file text escaped) and the range it applies to.
 */
import type { DumpIndex } from '../dump-index.ts';
import { chainAt } from '../navigation.ts';
import { type Range, lineSpan } from '../ranges.ts';
import { chainHover } from './chain-hover.ts';
import { ruleHover } from './rule-hover.ts';
import { tableHover, targetHover } from './target-hover.ts';

export interface HoverResult {
  readonly markdown: string;
  readonly range: Range;
}

export function hoverAt(index: DumpIndex, line: number, character: number): HoverResult | null {
  const text = index.lines.lineAt(line);
  const span = index.tableAt(line);
  const trimmed = text.trimStart();
  if (trimmed.startsWith('*')) {
    const start = text.indexOf('*');
    return { markdown: tableHover(trimmed.slice(1).trim()), range: lineSpan(line, start, text.length) };
  }
  const at = chainAt(index, line, character);
  if (at && span) {
    const start =
      at.token.role === 'target' && at.token.optionStart !== undefined && character < at.token.start
        ? at.token.optionStart
        : at.token.start;
    return { markdown: chainHover(index, span.table, at.name), range: lineSpan(line, start, at.token.end) };
  }
  const rule = index.ruleAt(line);
  // `-j ACCEPT`, `-j DNAT`: the target under the cursor (a chain target was handled above).
  const jump = /(?:^|\s)(-j|--jump|-g|--goto)\s+(\S+)/g;
  for (let m = jump.exec(text); m; m = jump.exec(text)) {
    const start = m.index + (m[0].startsWith(' ') || m[0].startsWith('\t') ? 1 : 0);
    const end = m.index + m[0].length;
    if (character >= start && character <= end)
      return { markdown: targetHover(m[2]!, rule), range: lineSpan(line, start, end) };
  }
  if (rule) return { markdown: ruleHover(index, rule), range: rule.range };
  return null;
}
