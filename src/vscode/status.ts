/**
 * The status bar item of the active dump: its size in rules and what is degraded on big files (VS Code's
 * own limits for tokenizing and for handing documents to extensions, and the full-check limit).
 */
import * as vscode from 'vscode';
import { info } from './notify.ts';
import { tokenizationNote } from '../editor/large-file.ts';
import { WEB_LARGE_FILE_NOTE } from './busy.ts';
import { COMMANDS, RULESET_LANGUAGES } from './commands.ts';
import { toMarkdown } from './convert.ts';
import type { Analysis } from './dump-store.ts';

export class DumpStatus implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('packetlens.status', vscode.StatusBarAlignment.Right, 100);
  private readonly warned = new Set<string>();

  constructor(private readonly notesFor: (uri: vscode.Uri) => readonly string[]) {
    this.item.name = 'Packet Lens';
    this.item.command = COMMANDS.tracePacket;
  }

  update(a: Analysis | undefined): void {
    const editor = vscode.window.activeTextEditor;
    if (
      !a ||
      !editor ||
      !RULESET_LANGUAGES.includes(editor.document.languageId) ||
      editor.document.uri.toString() !== a.uri.toString()
    ) {
      if (!editor || !RULESET_LANGUAGES.includes(editor.document.languageId)) this.item.hide();
      return;
    }
    const rs = a.summary;
    const notes = [...this.notesFor(a.uri)];
    const tokens = tokenizationNote({ bytes: a.bytes, lines: editor.document.lineCount });
    if (tokens) notes.unshift(tokens);
    this.item.text = `$(pulse) ${rs.ruleCount.toLocaleString('en-US')} rules${notes.length ? ' $(info)' : ''}`;
    this.item.tooltip = toMarkdown(
      [
        `Packet Lens: ${rs.tableCount} table${rs.tableCount === 1 ? '' : 's'}, ${rs.ruleCount.toLocaleString('en-US')} rules (IPv${rs.family}), parsed in ${a.parseMs.toFixed(0)} ms. Click to trace a packet.`,
        ...notes.map(n => `- ${n}`),
        WEB_LARGE_FILE_NOTE,
      ].join('\n\n'),
    );
    this.item.show();
    const key = a.uri.toString();
    if (tokens && !this.warned.has(key)) {
      this.warned.add(key);
      void info(tokens);
    }
  }

  dispose(): void {
    this.item.dispose();
  }
}
