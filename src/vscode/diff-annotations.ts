/**
 * The effect of each changed hunk, written after its line in a dump diff editor (both sides): the headline
 * the changed rule causes (src/editor/diff-annotations.ts), from the comparison the CodeLens and the status
 * item already asked for — this class never starts one. A decoration rather than a CodeLens, since VS Code
 * hides CodeLens in diff editors unless `diffEditor.codeLens` is on.
 */
import * as vscode from 'vscode';
import { hunkAnnotations } from '../editor/diff-annotations.ts';
import { lineEnd, toMarkdown } from './convert.ts';
import type { BehaviourDiffs } from './diff-controller.ts';

export class DiffHunkAnnotations implements vscode.Disposable {
  private readonly type = vscode.window.createTextEditorDecorationType({
    after: {
      color: new vscode.ThemeColor('editorCodeLens.foreground'),
      fontStyle: 'italic',
      margin: '0 0 0 2em',
    },
  });
  private readonly subscriptions: vscode.Disposable[];

  constructor(private readonly diffs: BehaviourDiffs) {
    this.subscriptions = [
      vscode.window.onDidChangeVisibleTextEditors(() => void this.refresh()),
      diffs.onDidCompare(() => void this.refresh()),
      // An edit makes the comparison stale: its lines no longer say what the report says.
      vscode.workspace.onDidChangeTextDocument(e => {
        if (e.contentChanges.length) this.clear(e.document.uri);
      }),
    ];
  }

  async refresh(): Promise<void> {
    const shown = new Set<vscode.TextEditor>();
    for (const pair of this.diffs.dumpPairs()) {
      const c = await this.diffs.peek(pair);
      const notes = c?.ok ? hunkAnnotations(c.report) : [];
      for (const editor of vscode.window.visibleTextEditors) {
        const uri = editor.document.uri.toString();
        const side = uri === pair.modified.toString() ? 'new' : uri === pair.original.toString() ? 'old' : null;
        if (!side || shown.has(editor)) continue;
        shown.add(editor);
        const lines = editor.document.lineCount;
        editor.setDecorations(
          this.type,
          notes
            .filter(n => n.side === side && n.line < lines)
            .map(n => ({
              range: lineEnd(n.line, editor.document.lineAt(n.line).text.length),
              hoverMessage: toMarkdown(n.hover),
              renderOptions: { after: { contentText: `⟵ ${n.text}` } },
            })),
        );
      }
    }
  }

  private clear(uri: vscode.Uri): void {
    for (const e of vscode.window.visibleTextEditors)
      if (e.document.uri.toString() === uri.toString()) e.setDecorations(this.type, []);
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
    this.type.dispose();
  }
}
