/** Outline, folding, go to definition, find references and rename for dumps: the dump's engine worker answers (src/editor), this is glue. */
import * as vscode from 'vscode';
import type { Method, Params, Result } from '../shared/engine-protocol.ts';
import { toDocumentSymbol, toFoldingRange, toLocation, toRange, toWorkspaceEdit } from './convert.ts';
import type { DumpStore } from './dump-store.ts';

const OUTLINE_PAGE = 1000;
/** Chains listed in the outline at most (the rest is one row per table saying how many). */
const OUTLINE_CHAINS = 5000;

export class DumpNavigation
  implements
    vscode.DocumentSymbolProvider,
    vscode.FoldingRangeProvider,
    vscode.DefinitionProvider,
    vscode.ReferenceProvider,
    vscode.RenameProvider
{
  constructor(private readonly store: DumpStore) {}

  /** The worker's answer for the document's current parse, or undefined when it changed (or closed) meanwhile. */
  private async ask<M extends Method>(
    doc: vscode.TextDocument,
    token: vscode.CancellationToken | null,
    method: M,
    params: Omit<Params<M>, 'key'>,
  ): Promise<Result<M> | undefined> {
    try {
      const a = await this.store.get(doc);
      if (token?.isCancellationRequested) return undefined;
      const r = await a.ask(method, params);
      return token?.isCancellationRequested ? undefined : r;
    } catch {
      return undefined;
    }
  }

  /**
   * The outline comes in pages (a 100k-chain dump has 100k symbols): each page is copied and converted in
   * a task of its own, so the extension host never spends long on one.
   */
  async provideDocumentSymbols(
    doc: vscode.TextDocument,
    token: vscode.CancellationToken,
  ): Promise<vscode.DocumentSymbol[] | undefined> {
    const tables: vscode.DocumentSymbol[] = [];
    for (let offset = 0; ; offset += OUTLINE_PAGE) {
      const page = await this.ask(doc, token, 'outline', { offset, limit: OUTLINE_PAGE, max: OUTLINE_CHAINS });
      if (!page) return undefined;
      for (const row of page.items) {
        const sym = toDocumentSymbol({ ...row, children: [] });
        if (row.parent < 0) tables.push(sym);
        else tables[row.parent]?.children.push(sym);
      }
      if (offset + OUTLINE_PAGE >= page.total) return tables;
    }
  }

  /** No more folds than the editor keeps (editor.foldingMaximumRegions): the rest would be copied for nothing. */
  async provideFoldingRanges(
    doc: vscode.TextDocument,
    _ctx: vscode.FoldingContext,
    token: vscode.CancellationToken,
  ): Promise<vscode.FoldingRange[] | undefined> {
    const max = vscode.workspace.getConfiguration('editor', doc).get<number>('foldingMaximumRegions', 5000);
    return (await this.ask(doc, token, 'folding', { max }))?.items.map(toFoldingRange);
  }

  async provideDefinition(
    doc: vscode.TextDocument,
    pos: vscode.Position,
    token: vscode.CancellationToken,
  ): Promise<vscode.Location | undefined> {
    const def = await this.ask(doc, token, 'definition', { line: pos.line, character: pos.character });
    return def ? toLocation(doc.uri, def) : undefined;
  }

  async provideReferences(
    doc: vscode.TextDocument,
    pos: vscode.Position,
    ctx: vscode.ReferenceContext,
    token: vscode.CancellationToken,
  ): Promise<vscode.Location[] | undefined> {
    const refs = await this.ask(doc, token, 'references', {
      line: pos.line,
      character: pos.character,
      includeDeclaration: ctx.includeDeclaration,
    });
    return refs?.map(r => toLocation(doc.uri, r));
  }

  async prepareRename(
    doc: vscode.TextDocument,
    pos: vscode.Position,
  ): Promise<{ range: vscode.Range; placeholder: string }> {
    const p = await this.ask(doc, null, 'prepareRename', { line: pos.line, character: pos.character });
    if (!p) throw new Error('The dump changed: try again.');
    if (!p.ok) throw new Error(p.message);
    return { range: toRange(p.range), placeholder: p.placeholder };
  }

  async provideRenameEdits(
    doc: vscode.TextDocument,
    pos: vscode.Position,
    newName: string,
  ): Promise<vscode.WorkspaceEdit> {
    const r = await this.ask(doc, null, 'rename', { line: pos.line, character: pos.character, newName });
    if (!r) throw new Error('The dump changed: try again.');
    if (!r.ok) throw new Error(r.message);
    return toWorkspaceEdit(doc.uri, r.edits);
  }
}
