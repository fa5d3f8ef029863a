/** Outline, folding, go to definition, find references and rename for dumps: glue over src/editor. */
import * as vscode from 'vscode';
import { foldingRanges } from '../editor/folding.ts';
import { chainAt, definitionOf, prepareRename, referencesOf, renameChain } from '../editor/navigation.ts';
import { outline } from '../editor/symbols.ts';
import { toDocumentSymbol, toFoldingRange, toLocation, toRange, toWorkspaceEdit } from './convert.ts';
import type { DumpStore } from './dump-store.ts';

export class DumpNavigation implements vscode.DocumentSymbolProvider, vscode.FoldingRangeProvider, vscode.DefinitionProvider, vscode.ReferenceProvider, vscode.RenameProvider {
  constructor(private readonly store: DumpStore) {}

  async provideDocumentSymbols(doc: vscode.TextDocument, token: vscode.CancellationToken): Promise<vscode.DocumentSymbol[] | undefined> {
    const a = await this.store.get(doc);
    if (token.isCancellationRequested) return undefined;
    return outline(a.index).map(toDocumentSymbol);
  }

  async provideFoldingRanges(doc: vscode.TextDocument, _ctx: vscode.FoldingContext, token: vscode.CancellationToken): Promise<vscode.FoldingRange[] | undefined> {
    const a = await this.store.get(doc);
    if (token.isCancellationRequested) return undefined;
    return foldingRanges(a.index).map(toFoldingRange);
  }

  async provideDefinition(doc: vscode.TextDocument, pos: vscode.Position, token: vscode.CancellationToken): Promise<vscode.Location | undefined> {
    const a = await this.store.get(doc);
    if (token.isCancellationRequested) return undefined;
    const at = chainAt(a.index, pos.line, pos.character);
    const def = at ? definitionOf(a.index, at) : null;
    return def ? toLocation(doc.uri, def) : undefined;
  }

  async provideReferences(doc: vscode.TextDocument, pos: vscode.Position, ctx: vscode.ReferenceContext, token: vscode.CancellationToken): Promise<vscode.Location[] | undefined> {
    const a = await this.store.get(doc);
    if (token.isCancellationRequested) return undefined;
    const at = chainAt(a.index, pos.line, pos.character);
    return at ? referencesOf(a.index, at, ctx.includeDeclaration).map((r) => toLocation(doc.uri, r)) : undefined;
  }

  async prepareRename(doc: vscode.TextDocument, pos: vscode.Position): Promise<{ range: vscode.Range; placeholder: string }> {
    const a = await this.store.get(doc);
    const p = prepareRename(a.index, pos.line, pos.character);
    if (!p.ok) throw new Error(p.message);
    return { range: toRange(p.range), placeholder: p.placeholder };
  }

  async provideRenameEdits(doc: vscode.TextDocument, pos: vscode.Position, newName: string): Promise<vscode.WorkspaceEdit> {
    const a = await this.store.get(doc);
    const r = renameChain(a.index, pos.line, pos.character, newName);
    if (!r.ok) throw new Error(r.message);
    return toWorkspaceEdit(doc.uri, r.edits);
  }
}
