/**
 * Publishes the diagnostics of every open dump after each parse. The dump's engine worker computes them
 * (validating a 300k-rule dump takes seconds there, in slices, so it still answers hovers meanwhile); a
 * newer parse supersedes an older one's answer. Code actions ask the worker for the quick fixes.
 */
import * as vscode from 'vscode';
import type { Settings } from '../editor/settings.ts';
import { isCancelled } from '../worker/client.ts';
import { fromRange, toDiagnostic, toWorkspaceEdit } from './convert.ts';
import type { Analysis, DumpStore } from './dump-store.ts';

export class DiagnosticsController implements vscode.Disposable {
  private readonly collection = vscode.languages.createDiagnosticCollection('packetlens');
  private readonly emitter = new vscode.EventEmitter<vscode.Uri>();
  private readonly notes = new Map<string, readonly string[]>();
  /** The analysis whose diagnostics are being computed (or were published last), per document. */
  private readonly latest = new Map<string, Analysis>();

  constructor(
    private readonly store: DumpStore,
    private readonly settings: () => Settings,
    private readonly log: (message: string) => void = () => {},
  ) {}

  /** Called after every parse of an open document. */
  analyzed(a: Analysis): void {
    if (a.source !== 'document') return;
    const key = a.uri.toString();
    this.latest.set(key, a);
    const limits = this.settings().limits;
    a.ask('diagnostics', {
      options: { maxRulesForFullCheck: limits.fullCheckMaxRules, maxDiagnostics: limits.maxDiagnostics },
    }).then(
      r => {
        if (this.latest.get(key) !== a) return;
        this.collection.set(
          a.uri,
          r.diagnostics.map(d => toDiagnostic(a.uri, d)),
        );
        this.notes.set(key, r.notes);
        this.emitter.fire(a.uri);
      },
      (e: unknown) => {
        if (!isCancelled(e)) this.log(`diagnostics of ${key} failed: ${e instanceof Error ? e.message : String(e)}`);
      },
    );
  }

  /** Fires when a document's diagnostics (and notes) are published. */
  get onDidPublish(): vscode.Event<vscode.Uri> {
    return this.emitter.event;
  }

  /** What the diagnostics leave out for this document, and why. */
  notesFor(uri: vscode.Uri): readonly string[] {
    return this.notes.get(uri.toString()) ?? [];
  }

  /**
   * The document could not be read (its worker ran out of memory): the reason, naming the file and the
   * limit, is its one problem until a parse succeeds, so the Problems panel says why nothing else shows.
   */
  failed(uri: vscode.Uri, message: string): void {
    this.latest.delete(uri.toString());
    this.notes.delete(uri.toString());
    this.collection.set(uri, [
      toDiagnostic(uri, {
        code: 'input-too-large',
        severity: 'error',
        message,
        range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
        unnecessary: false,
        related: [],
      }),
    ]);
    this.emitter.fire(uri);
  }

  closed(uri: vscode.Uri): void {
    this.latest.delete(uri.toString());
    this.collection.delete(uri);
    this.notes.delete(uri.toString());
  }

  dispose(): void {
    this.latest.clear();
    this.collection.dispose();
    this.emitter.dispose();
  }
}

export class DumpCodeActions implements vscode.CodeActionProvider {
  static readonly kinds = [vscode.CodeActionKind.QuickFix];

  constructor(private readonly store: DumpStore) {}

  async provideCodeActions(
    doc: vscode.TextDocument,
    _range: vscode.Range,
    ctx: vscode.CodeActionContext,
    token: vscode.CancellationToken,
  ): Promise<vscode.CodeAction[]> {
    const a = this.store.peek(doc);
    if (!a) return [];
    const out: vscode.CodeAction[] = [];
    for (const d of ctx.diagnostics) {
      if (d.source !== 'packetlens' || typeof d.code !== 'string') continue;
      let fixes;
      try {
        fixes = await a.ask('quickFixes', { code: d.code, range: fromRange(d.range) });
      } catch {
        return out; // a newer version is being parsed
      }
      if (token.isCancellationRequested) return [];
      for (const fix of fixes) {
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
