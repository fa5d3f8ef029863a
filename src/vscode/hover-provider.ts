/** Hovers on dumps: the dump's engine worker answers (src/editor/hover), this is glue. */
import * as vscode from 'vscode';
import { toMarkdown, toRange } from './convert.ts';
import type { DumpStore } from './dump-store.ts';
import { timing, timingOn } from './timing.ts';

export class DumpHover implements vscode.HoverProvider {
  constructor(private readonly store: DumpStore) {}

  async provideHover(
    doc: vscode.TextDocument,
    pos: vscode.Position,
    token: vscode.CancellationToken,
  ): Promise<vscode.Hover | undefined> {
    const asked = timingOn() ? Date.now() : 0;
    try {
      const a = await this.store.get(doc);
      if (token.isCancellationRequested) return undefined;
      const t1 = timingOn() ? Date.now() : 0;
      const h = await a.ask('hover', { line: pos.line, character: pos.character });
      timing(() => {
        const t2 = Date.now();
        return `hover ${pos.line + 1}:${pos.character + 1} asked at ${asked}: answered after ${t2 - asked} ms (the parse ${t1 - asked} ms, the worker ${t2 - t1} ms, ${h?.markdown.length ?? 0} characters of markdown)`;
      });
      return h && !token.isCancellationRequested
        ? new vscode.Hover(toMarkdown(h.markdown), toRange(h.range))
        : undefined;
    } catch {
      // Cancelled: the document changed (or closed) meanwhile; the next hover asks its new parse.
      return undefined;
    }
  }
}
