/**
 * Which dump a command works on: the active editor's document, a document or file named by the command's
 * argument, or the active tab's file when VS Code did not hand the document to extensions (above 50 MB),
 * which is then read through `workspace.fs`.
 */
import * as vscode from 'vscode';
import { RULESET_LANGUAGES } from './commands.ts';
import { firstLines } from './convert.ts';
import { type Analysis, type DumpStore, FileTooLarge, fileName } from './dump-store.ts';

export type DumpSource =
  | { readonly kind: 'document'; readonly doc: vscode.TextDocument }
  | { readonly kind: 'file'; readonly uri: vscode.Uri };

const TABLE_LINE = /^\*(filter|nat|mangle|raw|security)\s*$/m;

function isDump(doc: vscode.TextDocument): boolean {
  if (RULESET_LANGUAGES.includes(doc.languageId)) return true;
  // A dump saved under another name: look for a table header near the top.
  const head = doc.getText(firstLines(Math.min(doc.lineCount, 2000)));
  return TABLE_LINE.test(head);
}

export function sourceForUri(uri: vscode.Uri): DumpSource {
  const doc = vscode.workspace.textDocuments.find(d => d.uri.toString() === uri.toString());
  return doc ? { kind: 'document', doc } : { kind: 'file', uri };
}

export type SourceLookup = { ok: true; source: DumpSource } | { ok: false; message: string };

export function activeDumpSource(): SourceLookup {
  const editor = vscode.window.activeTextEditor;
  if (editor) {
    if (isDump(editor.document)) return { ok: true, source: { kind: 'document', doc: editor.document } };
    return {
      ok: false,
      message: `${fileName(editor.document.uri)} is not a ruleset. Packet Lens traces iptables-save / ip6tables-save output and nftables rulesets: open one (*.rules, rules.v4, *.nft, nft list ruleset output, …) or set the file's language to "iptables-save" or "nftables".`,
    };
  }
  const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
  if (tab?.input instanceof vscode.TabInputText) return { ok: true, source: sourceForUri(tab.input.uri) };
  return {
    ok: false,
    message: 'Nothing to trace: open an iptables-save dump (*.rules, rules.v4, iptables-save output) first.',
  };
}

export function sourceUri(s: DumpSource): vscode.Uri {
  return s.kind === 'document' ? s.doc.uri : s.uri;
}

export type Loaded = { ok: true; analysis: Analysis } | { ok: false; message: string };

/** Parses the source (from the document, or from disk with a progress notification). */
export async function loadSource(store: DumpStore, s: DumpSource, maxMB: number): Promise<Loaded> {
  if (s.kind === 'document') return { ok: true, analysis: await store.get(s.doc) };
  try {
    const analysis = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Packet Lens: reading ${fileName(s.uri)} from disk…` },
      () => store.readFile(s.uri),
    );
    return { ok: true, analysis };
  } catch (e) {
    if (e instanceof FileTooLarge)
      return {
        ok: false,
        message: `${fileName(s.uri)} is ${(e.bytes / 1048576).toFixed(0)} MB, above packetlens.limits.maxFileSizeMB (${maxMB} MB): raise the limit to trace it.`,
      };
    return { ok: false, message: `Cannot read ${fileName(s.uri)}: ${e instanceof Error ? e.message : String(e)}` };
  }
}
