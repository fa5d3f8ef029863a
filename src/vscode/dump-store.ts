/**
 * Parsed dumps, cached by document version. Parsing waits until the document has been quiet for a moment
 * (typing never parses on every keystroke); every feature asking meanwhile shares the one parse that
 * follows. Files VS Code does not hand to extensions (above 50 MB) are read through `workspace.fs`.
 */
import * as vscode from 'vscode';
import { chainLenses } from '../editor/chain-lens.ts';
import { type DumpIndex, analyzeDump } from '../editor/dump-index.ts';

export interface Analysis {
  readonly index: DumpIndex;
  readonly uri: vscode.Uri;
  /** The document version parsed, or -1 for a file read from disk. */
  readonly version: number;
  readonly bytes: number;
  readonly parseMs: number;
  readonly source: 'document' | 'disk';
}

interface Waiter {
  resolve(a: Analysis): void;
  reject(e: unknown): void;
}

interface Entry {
  analysis: Analysis | null;
  timer: ReturnType<typeof setTimeout> | null;
  waiters: Waiter[];
}

/** How long a document must be quiet before it is parsed again (first parse: at once), longer for bigger ones. */
function quietMs(previous: Analysis | null): number {
  if (!previous) return 0;
  const length = previous.bytes;
  return length < 1 << 20 ? 250 : length < 16 << 20 ? 600 : 1500;
}

export class DumpStore implements vscode.Disposable {
  private readonly entries = new Map<string, Entry>();
  private readonly disk = new Map<string, { key: string; analysis: Analysis }>();
  private readonly emitter = new vscode.EventEmitter<Analysis>();
  readonly onDidAnalyze = this.emitter.event;

  constructor(private readonly maxBytes: () => number) {}

  /** The analysis of the document's current version (or the next one, if it changes meanwhile). */
  get(doc: vscode.TextDocument): Promise<Analysis> {
    const key = doc.uri.toString();
    let entry = this.entries.get(key);
    if (entry?.analysis && entry.analysis.version === doc.version) return Promise.resolve(entry.analysis);
    if (!entry) this.entries.set(key, (entry = { analysis: null, timer: null, waiters: [] }));
    const e = entry;
    const promise = new Promise<Analysis>((resolve, reject) => e.waiters.push({ resolve, reject }));
    if (e.timer === null) e.timer = setTimeout(() => this.parse(doc, e), quietMs(e.analysis));
    return promise;
  }

  /** The analysis of exactly this version, if it exists already. */
  peek(doc: vscode.TextDocument): Analysis | undefined {
    const a = this.entries.get(doc.uri.toString())?.analysis;
    return a && a.version === doc.version ? a : undefined;
  }

  /** A document changed: drop nothing yet (hovers may use the last parse), restart the quiet period. */
  changed(doc: vscode.TextDocument): void {
    const e = this.entries.get(doc.uri.toString());
    if (e?.timer) {
      clearTimeout(e.timer);
      e.timer = setTimeout(() => this.parse(doc, e), quietMs(e.analysis));
    }
  }

  forget(uri: vscode.Uri): void {
    const e = this.entries.get(uri.toString());
    if (e?.timer) clearTimeout(e.timer);
    this.entries.delete(uri.toString());
  }

  /** Reads and parses a file from disk (for files VS Code does not give to extensions). */
  async readFile(uri: vscode.Uri): Promise<Analysis> {
    const stat = await vscode.workspace.fs.stat(uri);
    const key = `${stat.mtime}:${stat.size}`;
    const cached = this.disk.get(uri.toString());
    if (cached && cached.key === key) return cached.analysis;
    if (stat.size > this.maxBytes()) throw new FileTooLarge(stat.size);
    const bytes = await vscode.workspace.fs.readFile(uri);
    const text = new TextDecoder('utf-8').decode(bytes);
    const t0 = performance.now();
    const index = analyzeDump(text, { file: fileName(uri), maxBytes: this.maxBytes() });
    const analysis: Analysis = { index, uri, version: -1, bytes: stat.size, parseMs: performance.now() - t0, source: 'disk' };
    this.disk.clear();
    this.disk.set(uri.toString(), { key, analysis });
    return analysis;
  }

  private parse(doc: vscode.TextDocument, e: Entry): void {
    e.timer = null;
    const waiters = e.waiters;
    e.waiters = [];
    try {
      const text = doc.getText();
      const t0 = performance.now();
      const index = analyzeDump(text, { file: fileName(doc.uri), maxBytes: this.maxBytes() });
      // The chain graph and the chain lenses belong to the parse: CodeLens and hovers after it read them.
      index.references();
      chainLenses(index);
      e.analysis = { index, uri: doc.uri, version: doc.version, bytes: text.length, parseMs: performance.now() - t0, source: 'document' };
      for (const w of waiters) w.resolve(e.analysis);
      this.emitter.fire(e.analysis);
    } catch (err) {
      for (const w of waiters) w.reject(err);
    }
  }

  dispose(): void {
    for (const e of this.entries.values()) if (e.timer) clearTimeout(e.timer);
    this.entries.clear();
    this.disk.clear();
    this.emitter.dispose();
  }
}

export class FileTooLarge extends Error {
  constructor(readonly bytes: number) {
    super(`file of ${bytes} bytes is above the size limit`);
  }
}

export function fileName(uri: vscode.Uri): string {
  const path = uri.path;
  return path.slice(path.lastIndexOf('/') + 1) || path;
}
