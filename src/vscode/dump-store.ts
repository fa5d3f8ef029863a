/**
 * Parsed dumps, one engine worker per open dump (src/worker): the worker holds the parse, every feature
 * asks it (hover, CodeLens, outline, trace, …) and the extension host only sends text and receives small
 * answers, so its event loop never waits for a parse. Parsing waits until the document has been quiet for
 * a moment (typing never parses on every keystroke); every feature asking meanwhile shares the one parse
 * that follows. An edit or a closed editor cancels the stale work: a worker still busy with an old
 * version is stopped at once and a fresh one parses the new text. Files VS Code does not hand to
 * extensions (above 50 MB) are read through `workspace.fs` and decoded in the worker.
 */
import * as vscode from 'vscode';
import {
  Cancelled,
  type EngineWorker,
  PIECE_CHARS,
  type SpawnWorker,
  isCancelled,
  loadPieces,
} from '../worker/client.ts';
import { EngineWorker as Worker } from '../worker/client.ts';
import type { DumpSummary, DumpText, Method, Params, Result } from '../shared/engine-protocol.ts';
import { wholeLines } from './convert.ts';
import { timing, timingOn } from './timing.ts';

/** The key of the one parse a dump's worker holds. */
const KEY = 'dump';

type Ask = <M extends Method>(method: M, params: Omit<Params<M>, 'key'>) => Promise<Result<M>>;

export interface Analysis {
  readonly uri: vscode.Uri;
  /** The document version parsed, or -1 for a file read from disk. */
  readonly version: number;
  readonly bytes: number;
  readonly parseMs: number;
  readonly source: 'document' | 'disk';
  readonly summary: DumpSummary;
  /** Asks the worker holding this parse; fails with `Cancelled` once a newer version replaced it. */
  readonly ask: Ask;
  /** Parses the same text again in another worker, under `key` (a comparison's worker). */
  sendTo(worker: EngineWorker, key: string, maxBytes: number): Promise<DumpSummary>;
}

interface Waiter {
  resolve(a: Analysis): void;
  reject(e: unknown): void;
}

interface Entry {
  doc: vscode.TextDocument;
  analysis: Analysis | null;
  worker: EngineWorker | null;
  /** The version being parsed, or null. */
  parsing: number | null;
  timer: ReturnType<typeof setTimeout> | null;
  waiters: Waiter[];
}

/** How long a document must be quiet before it is parsed again (first parse: at once), longer for bigger ones. */
function quietMs(previous: Analysis | null): number {
  if (!previous) return 0;
  const length = previous.bytes;
  return length < 1 << 20 ? 250 : length < 16 << 20 ? 600 : 1500;
}

function askOf(worker: EngineWorker): Ask {
  return (method, params) => worker.request(method, { ...params, key: KEY } as never);
}

export class DumpStore implements vscode.Disposable {
  private readonly entries = new Map<string, Entry>();
  private disk: { uri: string; key: string; analysis: Analysis; worker: EngineWorker } | null = null;
  private readonly emitter = new vscode.EventEmitter<Analysis>();
  readonly onDidAnalyze = this.emitter.event;

  constructor(
    private readonly maxBytes: () => number,
    /** Starts an engine worker (spawn-node.ts / spawn-web.ts). */
    readonly spawn: SpawnWorker,
    private readonly log: (message: string) => void = () => {},
    /** Shows that a parse runs (the status bar's spinner) until the returned function is called. */
    private readonly progress: (label: string, cancel: () => void) => () => void = () => () => {},
  ) {}

  /** The analysis of the document's current version (or the next one, if it changes meanwhile). */
  get(doc: vscode.TextDocument): Promise<Analysis> {
    const key = doc.uri.toString();
    let entry = this.entries.get(key);
    if (entry?.analysis && entry.analysis.version === doc.version) return Promise.resolve(entry.analysis);
    if (!entry)
      this.entries.set(key, (entry = { doc, analysis: null, worker: null, parsing: null, timer: null, waiters: [] }));
    entry.doc = doc;
    const e = entry;
    const promise = new Promise<Analysis>((resolve, reject) => e.waiters.push({ resolve, reject }));
    if (e.timer === null && e.parsing !== doc.version)
      e.timer = setTimeout(() => this.parse(doc, e), quietMs(e.analysis));
    return promise;
  }

  /** The analysis of exactly this version, if it exists already. */
  peek(doc: vscode.TextDocument): Analysis | undefined {
    const a = this.entries.get(doc.uri.toString())?.analysis;
    return a && a.version === doc.version ? a : undefined;
  }

  /**
   * A document changed: work for the old version is cancelled (a busy worker is stopped), the quiet
   * period restarts, and whoever waits gets the parse that follows it.
   */
  changed(doc: vscode.TextDocument): void {
    const e = this.entries.get(doc.uri.toString());
    if (!e) return;
    if (e.worker?.busy) {
      e.worker.terminate(`${fileName(doc.uri)} changed`);
      e.worker = null;
      e.parsing = null;
    }
    if (e.timer) clearTimeout(e.timer);
    e.timer = e.waiters.length || e.analysis ? setTimeout(() => this.parse(doc, e), quietMs(e.analysis)) : null;
  }

  /**
   * Stops the worker that holds `a` (a request on it ran past its deadline: a hostile file); whatever it
   * was doing fails with `Cancelled`, and the next request parses the document again in a fresh worker.
   */
  abandon(a: Analysis, reason: string): void {
    if (this.disk?.analysis === a) {
      this.disk.worker.terminate(reason);
      this.disk = null;
      return;
    }
    const e = this.entries.get(a.uri.toString());
    if (!e || e.analysis !== a) return;
    e.worker?.terminate(reason);
    e.worker = null;
    e.analysis = null;
    e.parsing = null;
    if (e.waiters.length && !e.timer) e.timer = setTimeout(() => this.parse(e.doc, e), 0);
  }

  /** The editor closed: its worker (and the memory of its parse) goes. */
  forget(uri: vscode.Uri): void {
    const key = uri.toString();
    const e = this.entries.get(key);
    if (!e) return;
    if (e.timer) clearTimeout(e.timer);
    e.worker?.terminate(`${fileName(uri)} was closed`);
    this.entries.delete(key);
    for (const w of e.waiters) w.reject(new Error(`${fileName(uri)} was closed`));
  }

  /** Reads and parses a file from disk (for files VS Code does not give to extensions). */
  async readFile(uri: vscode.Uri): Promise<Analysis> {
    const stat = await vscode.workspace.fs.stat(uri);
    const key = `${stat.mtime}:${stat.size}`;
    if (this.disk && this.disk.uri === uri.toString() && this.disk.key === key && this.disk.worker.alive)
      return this.disk.analysis;
    if (stat.size > this.maxBytes()) throw new FileTooLarge(stat.size);
    const read = async (): Promise<DumpText> => ({ bytes: await vscode.workspace.fs.readFile(uri) });
    const sendTo = async (w: EngineWorker, k: string, max: number) => {
      const again = await read();
      return w.request('load', { key: k, file: fileName(uri), maxBytes: max, source: again }, transferable(again));
    };
    const source = await read();
    // One file from disk at a time: its worker holds the only parse.
    this.disk?.worker.terminate('another file was read from disk');
    this.disk = null;
    const worker = new Worker(this.spawn);
    const summary = await worker.request(
      'load',
      { key: KEY, file: fileName(uri), maxBytes: this.maxBytes(), source },
      transferable(source),
    );
    const analysis: Analysis = {
      uri,
      version: -1,
      bytes: stat.size,
      parseMs: summary.parseMs,
      source: 'disk',
      summary,
      ask: askOf(worker),
      sendTo,
    };
    this.disk = { uri: uri.toString(), key, analysis, worker };
    return analysis;
  }

  private parse(doc: vscode.TextDocument, e: Entry): void {
    e.timer = null;
    if (doc.isClosed || this.entries.get(doc.uri.toString()) !== e) return;
    if (e.worker?.busy) {
      e.worker.terminate(`a newer version of ${fileName(doc.uri)} is parsed`);
      e.worker = null;
    }
    const worker = (e.worker ??= new Worker(this.spawn));
    const version = doc.version;
    e.parsing = version;
    const sendTo = (w: EngineWorker, k: string, max: number) =>
      loadPieces(w, { key: k, file: fileName(doc.uri), maxBytes: max }, documentPieces(doc));
    const end = this.progress(`reading ${fileName(doc.uri)} (${doc.lineCount.toLocaleString('en-US')} lines)…`, () =>
      this.stopParse(e, worker),
    );
    const started = timingOn() ? Date.now() : 0;
    let sent = 0;
    const pieces = function* () {
      yield* documentPieces(doc);
      if (started) sent = Date.now();
    };
    loadPieces(worker, { key: KEY, file: fileName(doc.uri), maxBytes: this.maxBytes() }, pieces()).then(
      summary => {
        end();
        timing(() => {
          const now = Date.now();
          return `parse of ${fileName(doc.uri)} v${version} started at ${started}: done after ${now - started} ms (the text sent in ${sent - started} ms, then the worker's load ${now - sent} ms, of which the parse ${summary.parseMs.toFixed(0)} ms)`;
        });
        if (e.worker !== worker) return;
        e.parsing = null;
        const a: Analysis = {
          uri: doc.uri,
          version,
          bytes: summary.bytes,
          parseMs: summary.parseMs,
          source: 'document',
          summary,
          ask: askOf(worker),
          sendTo,
        };
        e.analysis = a;
        const waiters = e.waiters;
        e.waiters = [];
        for (const w of waiters) w.resolve(a);
        this.emitter.fire(a);
      },
      (err: unknown) => {
        end();
        // Cancelled: the waiters stay for the parse of the newer version.
        if (isCancelled(err) || e.worker !== worker) return;
        e.parsing = null;
        e.worker = null;
        this.log(`parsing ${doc.uri.toString()} failed: ${err instanceof Error ? err.message : String(err)}`);
        const waiters = e.waiters;
        e.waiters = [];
        for (const w of waiters) w.reject(err);
      },
    );
  }

  /** The user stopped a parse (the spinner's click): whoever waits for it is told it was cancelled. */
  private stopParse(e: Entry, worker: EngineWorker): void {
    if (e.worker !== worker || e.parsing === null) return;
    worker.terminate(`reading ${fileName(e.doc.uri)} was stopped`);
    e.worker = null;
    e.parsing = null;
    const waiters = e.waiters;
    e.waiters = [];
    for (const w of waiters) w.reject(new Cancelled(`reading ${fileName(e.doc.uri)} was stopped`));
    this.log(`reading ${e.doc.uri.toString()} was stopped from the status bar`);
  }

  dispose(): void {
    for (const e of this.entries.values()) {
      if (e.timer) clearTimeout(e.timer);
      e.worker?.terminate('the extension stopped');
    }
    this.entries.clear();
    this.disk?.worker.terminate('the extension stopped');
    this.disk = null;
    this.emitter.dispose();
  }
}

/** The buffer to move (not copy) to the worker, when the bytes own all of it. */
function transferable(source: DumpText): ArrayBuffer[] {
  if (!('bytes' in source)) return [];
  const b = source.bytes;
  return b.byteOffset === 0 && b.byteLength === b.buffer.byteLength && b.buffer instanceof ArrayBuffer
    ? [b.buffer]
    : [];
}

/**
 * The document's text in pieces of about PIECE_CHARS characters (whole lines), read one task at a time:
 * neither reading a 45 MB document nor copying it to the worker holds the extension host for long.
 */
export function* documentPieces(doc: vscode.TextDocument): Generator<string> {
  const version = doc.version;
  const lines = doc.lineCount;
  // Lines per piece follow the length of the lines read so far.
  let step = 2000;
  for (let l = 0; l < lines;) {
    if (doc.version !== version || doc.isClosed) throw new Cancelled(`${fileName(doc.uri)} changed`);
    const end = Math.min(l + step, lines);
    const piece = doc.getText(wholeLines(l, end));
    l = end;
    step = Math.max(1, Math.min(step * 4, Math.floor((step * PIECE_CHARS) / Math.max(1, piece.length))));
    yield piece;
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
