/**
 * Publishes the diagnostics of every open dump after each parse. They are computed in slices of a few
 * milliseconds (validating a 300k-rule dump takes seconds), so hovers and CodeLens keep answering
 * meanwhile; a newer parse cancels the work for an older one. Code actions offer the quick fixes.
 */
import * as vscode from 'vscode';
import { dumpDiagnosticSteps } from '../editor/diagnostics.ts';
import { quickFixes } from '../editor/quick-fixes.ts';
import type { Settings } from '../editor/settings.ts';
import { fromRange, toDiagnostic, toWorkspaceEdit } from './convert.ts';
import type { Analysis, DumpStore } from './dump-store.ts';

export class DiagnosticsController implements vscode.Disposable {
  private readonly collection = vscode.languages.createDiagnosticCollection('packetlens');
  private readonly emitter = new vscode.EventEmitter<vscode.Uri>();
  private readonly notes = new Map<string, readonly string[]>();
  private readonly pending = new Map<string, ReturnType<typeof setTimeout>>();
  /** The slice budget: work this long, then let other tasks run. */
  private static readonly SLICE_MS = 25;

  constructor(
    private readonly store: DumpStore,
    private readonly settings: () => Settings,
  ) {}

  /** Called after every parse of an open document. */
  analyzed(a: Analysis): void {
    if (a.source !== 'document') return;
    const key = a.uri.toString();
    const t = this.pending.get(key);
    if (t) clearTimeout(t);
    const limits = this.settings().limits;
    const steps = dumpDiagnosticSteps(a.index, { maxRulesForFullCheck: limits.fullCheckMaxRules, maxDiagnostics: limits.maxDiagnostics });
    const slice = () => {
      const end = performance.now() + DiagnosticsController.SLICE_MS;
      let r = steps.next();
      while (!r.done && performance.now() < end) r = steps.next();
      if (!r.done) {
        this.pending.set(key, setTimeout(slice, 0));
        return;
      }
      this.pending.delete(key);
      this.collection.set(a.uri, r.value.diagnostics.map((d) => toDiagnostic(a.uri, d)));
      this.notes.set(key, r.value.notes);
      this.emitter.fire(a.uri);
    };
    // Start after the features waiting for this parse have answered.
    this.pending.set(key, setTimeout(slice, 50));
  }

  /** Fires when a document's diagnostics (and notes) are published. */
  get onDidPublish(): vscode.Event<vscode.Uri> {
    return this.emitter.event;
  }

  /** What the diagnostics leave out for this document, and why. */
  notesFor(uri: vscode.Uri): readonly string[] {
    return this.notes.get(uri.toString()) ?? [];
  }

  closed(uri: vscode.Uri): void {
    const t = this.pending.get(uri.toString());
    if (t) clearTimeout(t);
    this.pending.delete(uri.toString());
    this.collection.delete(uri);
    this.notes.delete(uri.toString());
  }

  dispose(): void {
    for (const t of this.pending.values()) clearTimeout(t);
    this.collection.dispose();
    this.emitter.dispose();
  }
}

export class DumpCodeActions implements vscode.CodeActionProvider {
  static readonly kinds = [vscode.CodeActionKind.QuickFix];

  constructor(private readonly store: DumpStore) {}

  provideCodeActions(doc: vscode.TextDocument, _range: vscode.Range, ctx: vscode.CodeActionContext): vscode.CodeAction[] {
    const a = this.store.peek(doc);
    if (!a) return [];
    const out: vscode.CodeAction[] = [];
    for (const d of ctx.diagnostics) {
      if (d.source !== 'packetlens' || typeof d.code !== 'string') continue;
      for (const fix of quickFixes(a.index, { code: d.code, range: fromRange(d.range) })) {
        const action = new vscode.CodeAction(fix.title, vscode.CodeActionKind.QuickFix);
        action.diagnostics = [d];
        action.isPreferred = fix.preferred;
        action.edit = toWorkspaceEdit(doc.uri, fix.edits);
        out.push(action);
      }
    }
    return out;
  }
}
