/**
 * Highlights the lines a trace went through: rules that matched, rules evaluated and missed, and rules
 * the engine could not decide. Colours are theme colours (contributed in package.json with defaults
 * taken from the active theme's diff and warning colours); the gutter shows an icon per kind.
 */
import * as vscode from 'vscode';
import { toLineRanges } from './convert.ts';
import type { TraceSessions } from './trace-sessions.ts';

export class TraceDecorations implements vscode.Disposable {
  private readonly matched: vscode.TextEditorDecorationType;
  private readonly missed: vscode.TextEditorDecorationType;
  private readonly assumed: vscode.TextEditorDecorationType;

  constructor(
    extensionUri: vscode.Uri,
    private readonly sessions: TraceSessions,
  ) {
    const icon = (name: string) => vscode.Uri.joinPath(extensionUri, 'dist', 'icons', `${name}.svg`);
    this.matched = vscode.window.createTextEditorDecorationType({
      isWholeLine: true,
      backgroundColor: new vscode.ThemeColor('packetlens.matchedRuleBackground'),
      overviewRulerColor: new vscode.ThemeColor('packetlens.matchedRuleOverviewRuler'),
      overviewRulerLane: vscode.OverviewRulerLane.Left,
      gutterIconPath: icon('matched'),
      gutterIconSize: 'contain',
    });
    this.missed = vscode.window.createTextEditorDecorationType({
      isWholeLine: true,
      backgroundColor: new vscode.ThemeColor('packetlens.missedRuleBackground'),
      gutterIconPath: icon('missed'),
      gutterIconSize: 'contain',
    });
    this.assumed = vscode.window.createTextEditorDecorationType({
      isWholeLine: true,
      backgroundColor: new vscode.ThemeColor('packetlens.assumedRuleBackground'),
      overviewRulerColor: new vscode.ThemeColor('packetlens.assumedRuleOverviewRuler'),
      overviewRulerLane: vscode.OverviewRulerLane.Left,
      gutterIconPath: icon('assumed'),
      gutterIconSize: 'contain',
    });
  }

  /** Re-applies the decorations of every visible editor (after a trace, a clear or an editor switch). */
  refresh(): void {
    for (const editor of vscode.window.visibleTextEditors) this.apply(editor);
  }

  private apply(editor: vscode.TextEditor): void {
    const s = this.sessions.get(editor.document.uri);
    const current = s && s.version === editor.document.version;
    editor.setDecorations(this.matched, current ? toLineRanges(s.marks.matched) : []);
    editor.setDecorations(this.missed, current ? toLineRanges(s.marks.missed) : []);
    editor.setDecorations(this.assumed, current ? toLineRanges(s.marks.assumed) : []);
  }

  dispose(): void {
    this.matched.dispose();
    this.missed.dispose();
    this.assumed.dispose();
  }
}
