/**
 * Quick fixes for the diagnostics that have an obvious repair: declare a missing chain, remove a rule that
 * never matches or a chain nothing uses, write `! -s addr` instead of the deprecated `-s ! addr`, give a
 * user chain the `-` policy, add a missing COMMIT.
 */
import type { DiagnosticCode, Range } from '../engine/api.ts';
import { ruleBlocks, type DumpIndex } from './dump-index.ts';
import { type TextEdit, lineSpan, wholeLine } from './ranges.ts';

export interface QuickFix {
  readonly title: string;
  readonly edits: readonly TextEdit[];
  readonly preferred: boolean;
}

export interface FixableDiagnostic {
  readonly code: DiagnosticCode | string;
  readonly range: Range;
}

function textIn(index: DumpIndex, r: Range): string {
  return index.lines
    .lineAt(r.start.line)
    .slice(r.start.character, r.end.line === r.start.line ? r.end.character : undefined);
}

function declareChain(index: DumpIndex, d: FixableDiagnostic): QuickFix[] {
  const name = textIn(index, d.range).trim().split(/\s+/).pop();
  const span = index.tableAt(d.range.start.line);
  if (!name || !span || name.startsWith('-')) return [];
  // After the table's last declaration, where iptables-save puts them.
  let at = span.startLine;
  for (let l = span.startLine + 1; l <= span.endLine; l++) {
    const text = index.lines.lineAt(l);
    if (text.startsWith(':')) at = l;
    else if (text.trim() !== '' && !text.startsWith('#')) break;
  }
  // An undeclared dashed name is a missing chain; an unknown capitalised one may be a mistyped target.
  return [
    {
      title: `Declare chain ${name} in table ${span.table.name}`,
      edits: [{ range: lineSpan(at + 1, 0, 0), newText: `:${name} - [0:0]\n` }],
      preferred: d.code === 'undeclared-target',
    },
  ];
}

function removeRule(index: DumpIndex, d: FixableDiagnostic): QuickFix[] {
  const rule = index.ruleAt(d.range.start.line);
  if (!rule) return [];
  return [
    {
      title: `Remove rule ${rule.index} of ${rule.chain} (it never matches)`,
      edits: [{ range: wholeLine(rule.line), newText: '' }],
      preferred: true,
    },
  ];
}

function removeChain(index: DumpIndex, d: FixableDiagnostic): QuickFix[] {
  const span = index.tableAt(d.range.start.line);
  const name = textIn(index, d.range);
  const chain = span?.table.chains.get(name);
  if (!span || !chain || chain.builtin) return [];
  const lines = new Set<number>([chain.range.start.line]);
  for (const [a, b] of ruleBlocks(chain)) for (let l = a; l <= b; l++) lines.add(l);
  const edits = [...lines].sort((a, b) => a - b).map(l => ({ range: wholeLine(l), newText: '' }));
  const n = chain.rules.length;
  return [
    {
      title: `Remove unused chain ${name}${n ? ` and its ${n} rule${n === 1 ? '' : 's'}` : ''}`,
      edits,
      preferred: false,
    },
  ];
}

function fixNegation(index: DumpIndex, d: FixableDiagnostic): QuickFix[] {
  const text = textIn(index, d.range);
  const withValue = /^(\S+)\s+!\s+(\S+)$/.exec(text);
  const bare = /^(\S+)\s+!$/.exec(text);
  const newText = withValue ? `! ${withValue[1]} ${withValue[2]}` : bare ? `! ${bare[1]}` : null;
  if (!newText) return [];
  return [{ title: `Write '${newText}'`, edits: [{ range: d.range, newText }], preferred: true }];
}

function userChainPolicy(index: DumpIndex, d: FixableDiagnostic): QuickFix[] {
  if (!index.lines.lineAt(d.range.start.line).startsWith(':')) return [];
  return [
    { title: "Write '-' (user chains have no policy)", edits: [{ range: d.range, newText: '-' }], preferred: true },
  ];
}

function addCommit(index: DumpIndex, d: FixableDiagnostic): QuickFix[] {
  const span = index.tableAt(d.range.start.line);
  if (!span) return [];
  let last = span.endLine;
  while (last > span.startLine && index.lines.lineAt(last).trim() === '') last--;
  const atEnd = last + 1 >= index.lines.lineCount;
  const edit = atEnd
    ? { range: lineSpan(last, index.lines.lineAt(last).length, index.lines.lineAt(last).length), newText: '\nCOMMIT' }
    : { range: lineSpan(last + 1, 0, 0), newText: 'COMMIT\n' };
  return [{ title: `Add COMMIT to table ${span.table.name}`, edits: [edit], preferred: true }];
}

const FIXERS: Partial<Record<string, (index: DumpIndex, d: FixableDiagnostic) => QuickFix[]>> = {
  'undeclared-target': declareChain,
  'unknown-target': declareChain,
  'shadowed-rule': removeRule,
  'unused-chain': removeChain,
  'deprecated-syntax': fixNegation,
  'policy-on-user-chain': userChainPolicy,
  'missing-commit': addCommit,
};

export function quickFixes(index: DumpIndex, d: FixableDiagnostic): QuickFix[] {
  const fixer = FIXERS[d.code];
  return fixer ? fixer(index, d) : [];
}
