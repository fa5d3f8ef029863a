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
  isOutOfMemory,
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
  /** A version whose worker died on it (out of memory): not read again until it changes (no crash loop). */
  failed: { version: number; error: CannotRead } | null;
  /** How many workers died unasked holding this version. */
  deaths: { version: number; count: number } | null;
  /** The heap of the worker holding the parse (bytes, as last measured), and when a feature last asked. */
  heap: number;
  used: number;
  /** The heap its last parse was measured at: a parse of it again makes that much room first. */
  lastHeap: number;
}

/**
 * How much memory the dumps' workers may hold together, and which dumps are on screen: the parses of dumps
 * not visible are dropped, least recently used first, while the workers' heaps add up past the budget,
 * and read again when next asked for.
 */
export interface MemoryBudget {
  /** Bytes all the dumps' workers may hold together. */
  budget(): number;
  visible(uri: vscode.Uri): boolean;
}

const NO_BUDGET: MemoryBudget = { budget: () => Infinity, visible: () => true };

/** How long a document must be quiet before it is parsed again (first parse: at once), longer for bigger ones. */
function quietMs(previous: Analysis | null): number {
  if (!previous) return 0;
  const length = previous.bytes;
  return length < 1 << 20 ? 250 : length < 16 << 20 ? 600 : 1500;
}

/** `done`: after each answer (the budget is checked again once the worker's heap may have grown). */
function askOf(worker: EngineWorker, done: () => void = () => {}): Ask {
  return (method, params) => {
    const r = worker.request(method, { ...params, key: KEY } as never);
    void r.finally(done).catch(() => {});
    return r;
  };
}

/** How long after an answer the workers' heaps are measured again (once for a burst of answers). */
const BUDGET_CHECK_MS = 1000;

export class DumpStore implements vscode.Disposable {
  private readonly entries = new Map<string, Entry>();
  private disk: { uri: string; key: string; analysis: Analysis; worker: EngineWorker } | null = null;
  private readonly emitter = new vscode.EventEmitter<Analysis>();
  readonly onDidAnalyze = this.emitter.event;
  private readonly failEmitter = new vscode.EventEmitter<{ uri: vscode.Uri; error: CannotRead }>();
  /** Fires when a document cannot be read (its worker ran out of memory): what to tell the user, once. */
  readonly onDidFail = this.failEmitter.event;
  private clock = 0;
  private budgetTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly maxBytes: () => number,
    /** Starts an engine worker (spawn-node.ts / spawn-web.ts). */
    readonly spawn: SpawnWorker,
    private readonly log: (message: string) => void = () => {},
    /** Shows that a parse runs (the status bar's spinner) until the returned function is called. */
    private readonly progress: (label: string, cancel: () => void) => () => void = () => () => {},
    private readonly memory: MemoryBudget = NO_BUDGET,
  ) {}

  /** The analysis of the document's current version (or the next one, if it changes meanwhile). */
  get(doc: vscode.TextDocument): Promise<Analysis> {
    const key = doc.uri.toString();
    let entry = this.entries.get(key);
    if (entry) entry.used = ++this.clock;
    if (entry?.analysis && entry.analysis.version === doc.version) return Promise.resolve(entry.analysis);
    if (entry?.failed?.version === doc.version) return Promise.reject(entry.failed.error);
    if (!entry)
      this.entries.set(
        key,
        (entry = {
          doc,
          analysis: null,
          worker: null,
          parsing: null,
          timer: null,
          waiters: [],
          failed: null,
          deaths: null,
          heap: 0,
          used: ++this.clock,
          lastHeap: 0,
        }),
      );
    entry.doc = doc;
    const e = entry;
    const promise = new Promise<Analysis>((resolve, reject) => e.waiters.push({ resolve, reject }));
    if (e.timer === null && e.parsing !== doc.version)
      e.timer = setTimeout(() => this.parse(doc, e), quietMs(e.analysis));
    return promise;
  }

  /** The analysis of exactly this version, if it exists already. */
  peek(doc: vscode.TextDocument): Analysis | undefined {
    const e = this.entries.get(doc.uri.toString());
    const a = e?.analysis;
    if (!a || a.version !== doc.version) return undefined;
    e.used = ++this.clock;
    return a;
  }

  /**
   * Documents that could not be read are read again when next asked for (the memory limit was raised).
   * Returns their URIs.
   */
  retryFailed(): vscode.Uri[] {
    const uris: vscode.Uri[] = [];
    for (const e of this.entries.values())
      if (e.failed) {
        e.failed = null;
        e.deaths = null;
        uris.push(e.doc.uri);
      }
    return uris;
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
    const summary = await worker
      .request('load', { key: KEY, file: fileName(uri), maxBytes: this.maxBytes(), source }, transferable(source))
      .catch((e: unknown) => {
        throw isOutOfMemory(e) ? new CannotRead(fileName(uri), e) : e;
      });
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
    if (e.failed?.version === doc.version) return this.failWaiters(e, e.failed.error);
    if (e.worker?.busy) {
      e.worker.terminate(`a newer version of ${fileName(doc.uri)} is parsed`);
      e.worker = null;
    }
    // A dump read before (dropped to save memory, or edited) will need about what it held: room first.
    if (e.lastHeap && !e.worker) this.dropUntil(this.heldBytes() + e.lastHeap, this.memory.budget(), e);
    const worker = (e.worker ??= this.startWorker(e));
    const version = doc.version;
    e.parsing = version;
    // VS Code ≥ 1.100 says what it decoded the document from: a UTF-16 file or a UTF-8 byte-order mark no
    // longer shows in the text, but iptables-restore, which reads bytes, refuses them.
    const encoding = (doc as { encoding?: unknown }).encoding;
    const decoded = typeof encoding === 'string' ? { encoding } : {};
    const sendTo = (w: EngineWorker, k: string, max: number) =>
      loadPieces(w, { key: k, file: fileName(doc.uri), maxBytes: max, ...decoded }, documentPieces(doc));
    const end = this.progress(`reading ${fileName(doc.uri)} (${doc.lineCount.toLocaleString('en-US')} lines)…`, () =>
      this.stopParse(e, worker),
    );
    const started = timingOn() ? Date.now() : 0;
    let sent = 0;
    const pieces = function* () {
      yield* documentPieces(doc);
      if (started) sent = Date.now();
    };
    loadPieces(worker, { key: KEY, file: fileName(doc.uri), maxBytes: this.maxBytes(), ...decoded }, pieces()).then(
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
          ask: askOf(worker, () => this.checkBudgetSoon(e)),
          sendTo,
        };
        e.analysis = a;
        e.failed = null;
        const waiters = e.waiters;
        e.waiters = [];
        for (const w of waiters) w.resolve(a);
        this.emitter.fire(a);
        void this.keepWithinBudget(e);
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

  /**
   * A dump's worker, which tells the store when it dies unasked (out of memory, a crash). Dying while it
   * reads a version, or a second time on the same version (the work after the parse: diagnostics, a trace),
   * marks that version failed: its waiters and later requests get the reason, naming the file and the
   * limit, and it is not read again until it changes — an input the worker cannot hold would otherwise be
   * read again by the next hover and die again, forever. After a first death past the parse (one hostile
   * trace) the version is read again when next asked for; the request that died fails with the reason.
   * The other dumps keep their own workers.
   */
  private startWorker(e: Entry): EngineWorker {
    const worker: EngineWorker = new Worker(this.spawn, err => {
      if (e.worker !== worker) return;
      const reading = e.parsing !== null;
      const version = e.parsing ?? e.analysis?.version ?? e.doc.version;
      const deaths = e.deaths?.version === version ? e.deaths.count + 1 : 1;
      e.deaths = { version, count: deaths };
      e.worker = null;
      e.analysis = null;
      e.parsing = null;
      e.heap = 0;
      if (!reading && deaths < 2) {
        this.log(
          `the worker holding ${e.doc.uri.toString()} v${version} stopped (${err.message}); it is read again when next asked for`,
        );
        return;
      }
      const error = new CannotRead(fileName(e.doc.uri), err);
      e.failed = { version, error };
      this.log(`${e.doc.uri.toString()} v${version}: ${error.message}`);
      this.failWaiters(e, error);
      if (this.entries.get(e.doc.uri.toString()) === e) this.failEmitter.fire({ uri: e.doc.uri, error });
    });
    return worker;
  }

  private failWaiters(e: Entry, error: Error): void {
    const waiters = e.waiters;
    e.waiters = [];
    for (const w of waiters) w.reject(error);
  }

  /** After answers (a trace, the diagnostics grow a worker's heap): the budget checked once things settle. */
  private checkBudgetSoon(e: Entry): void {
    if (this.budgetTimer || !Number.isFinite(this.memory.budget())) return;
    this.budgetTimer = setTimeout(() => {
      this.budgetTimer = null;
      void this.keepWithinBudget(e);
    }, BUDGET_CHECK_MS);
  }

  /**
   * After a parse and after answers: the workers' heaps, measured; while they add up past the budget, the parse of the dump
   * used least recently that is not on screen and not working for someone is dropped (its worker stopped;
   * the next request reads it again). Visible dumps and `just` stay.
   */
  private async keepWithinBudget(just: Entry): Promise<void> {
    const budget = this.memory.budget();
    if (!Number.isFinite(budget)) return;
    const held = [...this.entries.values()].filter(x => x.analysis && x.worker?.alive);
    await Promise.all(
      held.map(async x => {
        const w = x.worker!;
        try {
          const { heapUsed } = await w.request('memory', {});
          if (x.worker === w) x.heap = x.lastHeap = heapUsed;
        } catch {
          // Stopped meanwhile: it holds nothing any more.
        }
      }),
    );
    this.dropUntil(this.heldBytes(), budget, just);
  }

  /** What the parses held add up to, as last measured. */
  private heldBytes(): number {
    let total = 0;
    for (const x of this.entries.values()) if (x.analysis && x.worker?.alive) total += x.heap;
    return total;
  }

  /** Drops parses not on screen, least recently used first (never `just`'s), while `total` is above `budget`. */
  private dropUntil(total: number, budget: number, just: Entry): void {
    const candidates = [...this.entries.values()]
      .filter(x => x !== just && x.analysis && x.worker?.alive && !x.worker.busy && !this.memory.visible(x.doc.uri))
      .sort((a, b) => a.used - b.used);
    for (const x of candidates) {
      if (total <= budget) break;
      total -= x.heap;
      const mb = (n: number) => `${(n / 1048576).toFixed(0)} MB`;
      this.log(
        `dropped the parse of ${x.doc.uri.toString()} (${mb(x.heap)}) to keep the open dumps' workers within ${mb(budget)} (packetlens.limits.engineMemoryMB; ${mb(total + x.heap)} with it); it is read again when needed`,
      );
      x.worker!.terminate(`${fileName(x.doc.uri)} was put aside to save memory`);
      x.worker = null;
      x.analysis = null;
      x.heap = 0;
    }
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
    if (this.budgetTimer) clearTimeout(this.budgetTimer);
    for (const e of this.entries.values()) {
      if (e.timer) clearTimeout(e.timer);
      e.worker?.terminate('the extension stopped');
    }
    this.entries.clear();
    this.disk?.worker.terminate('the extension stopped');
    this.disk = null;
    this.emitter.dispose();
    this.failEmitter.dispose();
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

/**
 * A dump its worker could not hold: it ran out of the memory it may use (`cause` is `OutOfMemory`, with the
 * limit) or crashed. The message names the file and the limit, for the notification and the Problems panel.
 */
export class CannotRead extends Error {
  constructor(
    readonly file: string,
    override readonly cause: Error,
  ) {
    super(
      isOutOfMemory(cause)
        ? `${file} ${cause.message}: Packet Lens stopped reading it and shows nothing for it until it changes or the limit is raised`
        : `the engine worker reading ${file} stopped (${cause.message}); it is not read again until it changes`,
    );
    this.name = 'CannotRead';
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
