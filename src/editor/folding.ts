/**
 * Folding: each table section (`*table` … COMMIT), its block of chain declarations, each chain's block of
 * rules, and runs of `#` comment lines.
 */
import { type DumpIndex, ruleBlocks } from './dump-index.ts';

export interface Fold {
  readonly start: number;
  readonly end: number;
  readonly kind: 'region' | 'comment';
}

export function foldingRanges(index: DumpIndex): Fold[] {
  const folds: Fold[] = [];
  for (const span of index.tables) {
    if (span.endLine > span.startLine) folds.push({ start: span.startLine, end: span.endLine, kind: 'region' });
    let declStart = -1;
    for (let l = span.startLine + 1; l <= span.endLine + 1; l++) {
      const isDecl = l <= span.endLine && index.lines.lineAt(l).startsWith(':');
      if (isDecl && declStart < 0) declStart = l;
      if (!isDecl && declStart >= 0) {
        if (l - 1 > declStart) folds.push({ start: declStart, end: l - 1, kind: 'region' });
        declStart = -1;
        // Declarations come first in a section; stop at the first rule to keep this cheap on big dumps.
        break;
      }
    }
    for (const chain of span.table.chains.values()) {
      for (const [a, b] of ruleBlocks(chain)) if (b > a) folds.push({ start: a, end: b, kind: 'region' });
    }
  }
  let commentStart = -1;
  const n = index.lines.lineCount;
  for (let l = 0; l <= n; l++) {
    const isComment = l < n && index.ruleAt(l) === undefined && index.lines.lineAt(l).trimStart().startsWith('#');
    if (isComment && commentStart < 0) commentStart = l;
    if (!isComment && commentStart >= 0) {
      if (l - 1 > commentStart) folds.push({ start: commentStart, end: l - 1, kind: 'comment' });
      commentStart = -1;
    }
  }
  return folds.sort((a, b) => a.start - b.start || b.end - a.end);
}
