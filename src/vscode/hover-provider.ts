/** Hovers on dumps: the dump's engine worker answers (src/editor/hover), this is glue. */
import * as vscode from 'vscode';
import { toMarkdown, toRange } from './convert.ts';
import type { DumpStore } from './dump-store.ts';

export class DumpHover implements vscode.HoverProvider {
  constructor(private readonly store: DumpStore) {}

  async provideHover(
    doc: vscode.TextDocument,
    pos: vscode.Position,
    token: vscode.CancellationToken,
  ): Promise<vscode.Hover | undefined> {
    try {
      const a = await this.store.get(doc);
      if (token.isCancellationRequested) return undefined;
      const h = await a.ask('hover', { line: pos.line, character: pos.character });
      return h && !token.isCancellationRequested
        ? new vscode.Hover(toMarkdown(h.markdown), toRange(h.range))
        : undefined;
    } catch {
      // Cancelled: the document changed (or closed) meanwhile; the next hover asks its new parse.
      return undefined;
    }
  }
}
