/**
 * The one place where engine and editor-model values become VS Code values: positions and ranges,
 * severities, diagnostics, edits, symbols, folds and markdown. Everything else in src/vscode works with
 * what this file returns.
 */
import * as vscode from 'vscode';
import type { Position, Range, Severity } from '../engine/api.ts';
import type { EditorDiagnostic } from '../editor/diagnostics.ts';
import type { Fold } from '../editor/folding.ts';
import type { TextEdit } from '../editor/ranges.ts';
import type { OutlineSymbol } from '../editor/symbols.ts';

export function toPosition(p: Position): vscode.Position {
  return new vscode.Position(p.line, p.character);
}

export function toRange(r: Range): vscode.Range {
  return new vscode.Range(r.start.line, r.start.character, r.end.line, r.end.character);
}

export function fromPosition(p: vscode.Position): Position {
  return { line: p.line, character: p.character };
}

export function fromRange(r: vscode.Range): Range {
  return { start: fromPosition(r.start), end: fromPosition(r.end) };
}

export function toSeverity(s: Severity): vscode.DiagnosticSeverity {
  switch (s) {
    case 'error':
      return vscode.DiagnosticSeverity.Error;
    case 'warning':
      return vscode.DiagnosticSeverity.Warning;
    case 'info':
      return vscode.DiagnosticSeverity.Information;
    case 'hint':
      return vscode.DiagnosticSeverity.Hint;
  }
}

export function toDiagnostic(uri: vscode.Uri, d: EditorDiagnostic): vscode.Diagnostic {
  const diag = new vscode.Diagnostic(toRange(d.range), d.message, toSeverity(d.severity));
  diag.source = 'packetlens';
  diag.code = d.code;
  if (d.unnecessary) diag.tags = [vscode.DiagnosticTag.Unnecessary];
  if (d.related.length)
    diag.relatedInformation = d.related.map(
      r => new vscode.DiagnosticRelatedInformation(new vscode.Location(uri, toRange(r.range)), r.message),
    );
  return diag;
}

export function toTextEdit(e: TextEdit): vscode.TextEdit {
  return new vscode.TextEdit(toRange(e.range), e.newText);
}

export function toWorkspaceEdit(uri: vscode.Uri, edits: readonly TextEdit[]): vscode.WorkspaceEdit {
  const we = new vscode.WorkspaceEdit();
  for (const e of edits) we.replace(uri, toRange(e.range), e.newText);
  return we;
}

export function toLocation(uri: vscode.Uri, r: Range): vscode.Location {
  return new vscode.Location(uri, toRange(r));
}

export function toDocumentSymbol(s: OutlineSymbol): vscode.DocumentSymbol {
  const kind =
    s.kind === 'table'
      ? vscode.SymbolKind.Namespace
      : s.kind === 'set'
        ? vscode.SymbolKind.Array
        : s.kind === 'map'
          ? vscode.SymbolKind.Object
          : vscode.SymbolKind.Function;
  const sym = new vscode.DocumentSymbol(s.name, s.detail, kind, toRange(s.range), toRange(s.selectionRange));
  sym.children = s.children.map(toDocumentSymbol);
  return sym;
}

export function toFoldingRange(f: Fold): vscode.FoldingRange {
  return new vscode.FoldingRange(
    f.start,
    f.end,
    f.kind === 'comment' ? vscode.FoldingRangeKind.Comment : vscode.FoldingRangeKind.Region,
  );
}

/** Markdown from the editor model: file text in it is already escaped; links and HTML stay disabled. */
export function toMarkdown(markdown: string): vscode.MarkdownString {
  const md = new vscode.MarkdownString(markdown, false);
  md.isTrusted = false;
  md.supportHtml = false;
  return md;
}

/** Markdown whose links may run only the `commands` named (a status item's tooltip). */
export function toCommandMarkdown(markdown: string, commands: readonly string[]): vscode.MarkdownString {
  const md = new vscode.MarkdownString(markdown, true);
  md.isTrusted = { enabledCommands: [...commands] };
  md.supportHtml = false;
  return md;
}

/** Lines `start`…`end - 1`, whole (to the start of line `end`). */
export function wholeLines(start: number, end: number): vscode.Range {
  return new vscode.Range(start, 0, end, 0);
}

/** The start of a line, as a range (CodeLens, reveal). */
export function lineStart(line: number): vscode.Range {
  return new vscode.Range(line, 0, line, 0);
}

/** The first `count` lines of a document. */
export function firstLines(count: number): vscode.Range {
  return new vscode.Range(0, 0, count, 0);
}

/** Whole-line ranges for decorations. */
export function toLineRanges(lines: readonly number[]): vscode.Range[] {
  return lines.map(lineStart);
}
