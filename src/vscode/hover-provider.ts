/** Hovers on dumps: glue over src/editor/hover. */
import * as vscode from 'vscode';
import { hoverAt } from '../editor/hover/hover.ts';
import { toMarkdown, toRange } from './convert.ts';
import type { DumpStore } from './dump-store.ts';

export class DumpHover implements vscode.HoverProvider {
  constructor(private readonly store: DumpStore) {}

  async provideHover(doc: vscode.TextDocument, pos: vscode.Position, token: vscode.CancellationToken): Promise<vscode.Hover | undefined> {
    const a = await this.store.get(doc);
    if (token.isCancellationRequested) return undefined;
    const h = hoverAt(a.index, pos.line, pos.character);
    return h ? new vscode.Hover(toMarkdown(h.markdown), toRange(h.range)) : undefined;
  }
}
