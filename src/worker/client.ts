/**
 * The extension side of the worker protocol: one worker (or the in-process fallback) and its pending
 * requests. Cancelling is terminating: a worker busy with work nobody wants any more (a document changed,
 * an editor closed, a comparison superseded) is stopped at once, whatever it was doing, and its pending
 * requests fail with `Cancelled`; the caller starts a fresh worker for the new work. No `vscode` here, so
 * the bench and the tests drive exactly this code.
 */
import {
  type DumpSummary,
  type EngineRequest,
  type EngineResponse,
  type Method,
  type Params,
  type Result,
  isEngineResponse,
} from '../shared/engine-protocol.ts';

/** The transport: a worker_threads Worker, a Web Worker, or the in-process fallback. */
export interface WorkerPort {
  post(message: EngineRequest, transfer: readonly ArrayBuffer[]): void;
  terminate(): void;
}

/**
 * Starts a worker; `onMessage` gets its responses, `onExit` a reason when it dies unasked — with the heap
 * limit it had (MB) when it ran out of memory.
 */
export type SpawnWorker = (
  onMessage: (m: unknown) => void,
  onExit: (reason: string, outOfMemoryMb?: number) => void,
) => WorkerPort;

/**
 * A worker ran out of the heap it may use (`limitMb`, packetlens.limits.engineMemoryMB): the work it held
 * needs more memory than the editor lets one input take (issue 12). Its requests fail with this.
 */
export class OutOfMemory extends Error {
  constructor(readonly limitMb: number) {
    super(`needs more than ${limitMb} MB of memory (the engine's limit, packetlens.limits.engineMemoryMB)`);
    this.name = 'OutOfMemory';
  }
}

export function isOutOfMemory(e: unknown): e is OutOfMemory {
  return e instanceof OutOfMemory;
}

export class Cancelled extends Error {
  constructor(reason: string) {
    super(`cancelled: ${reason}`);
    this.name = 'Cancelled';
  }
}

export function isCancelled(e: unknown): e is Cancelled {
  return e instanceof Cancelled;
}

interface Pending {
  resolve(v: unknown): void;
  reject(e: unknown): void;
}

export class EngineWorker {
  private readonly port: WorkerPort;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private deadReason: string | null = null;
  /** Why the worker died unasked (out of memory, a crash), or null. */
  private died: Error | null = null;

  /** `onDied`: told (before its pending requests fail) when the worker dies unasked, e.g. `OutOfMemory`. */
  constructor(
    spawn: SpawnWorker,
    private readonly onDied: (error: Error) => void = () => {},
  ) {
    this.port = spawn(
      m => this.receive(m),
      (reason, outOfMemoryMb) =>
        this.stop(reason, false, outOfMemoryMb === undefined ? new Error(reason) : new OutOfMemory(outOfMemoryMb)),
    );
  }

  /** Some request is unanswered: the worker is (or will be) working. */
  get busy(): boolean {
    return this.pending.size > 0;
  }

  get alive(): boolean {
    return this.deadReason === null;
  }

  request<M extends Method>(method: M, params: Params<M>, transfer: readonly ArrayBuffer[] = []): Promise<Result<M>> {
    if (this.deadReason !== null) return Promise.reject(this.died ?? new Cancelled(this.deadReason));
    const id = this.nextId++;
    return new Promise<Result<M>>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      try {
        this.port.post({ id, method, params }, transfer);
      } catch (e) {
        this.pending.delete(id);
        reject(e);
      }
    });
  }

  /** Stops the worker; every pending request fails with `Cancelled(reason)`. */
  terminate(reason: string): void {
    this.stop(reason, true);
  }

  private stop(reason: string, kill: boolean, died: Error | null = null): void {
    if (this.deadReason !== null) return;
    this.deadReason = reason;
    this.died = died;
    if (kill) this.port.terminate();
    const pending = [...this.pending.values()];
    this.pending.clear();
    if (died) this.onDied(died);
    for (const p of pending) p.reject(died ?? new Cancelled(reason));
  }

  private receive(m: unknown): void {
    if (!isEngineResponse(m)) return;
    const p = this.pending.get(m.id);
    if (!p) return;
    this.pending.delete(m.id);
    if (m.ok) p.resolve(m.result);
    else p.reject(new Error(m.error));
  }
}

/**
 * The fallback when no worker can be started: the same handlers, run on this thread after the current task
 * (the editor then behaves as before the worker existed: correct, but a big dump blocks while it parses).
 */
export function inProcessPort(
  handle: (req: EngineRequest) => Promise<EngineResponse>,
  onMessage: (m: unknown) => void,
): WorkerPort {
  let stopped = false;
  return {
    post(message) {
      setTimeout(() => {
        if (stopped) return;
        void handle(message).then(r => {
          if (!stopped) onMessage(r);
        });
      }, 0);
    },
    terminate() {
      stopped = true;
    },
  };
}

/**
 * A port that starts on `primary` and, if that worker fails before it ever answered (its script could not
 * load: a virtual file system, a CSP), moves to `fallback` and re-sends what it had been sent.
 */
export function portWithFallback(
  /**
   * `onFail(reason, startup, outOfMemoryMb)`: `startup` when the worker could not start at all (never when it
   * ran out of memory: then `outOfMemoryMb` is its heap limit).
   */
  primary: (
    onMessage: (m: unknown) => void,
    onFail: (reason: string, startup: boolean, outOfMemoryMb?: number) => void,
  ) => WorkerPort,
  fallback: (onMessage: (m: unknown) => void) => WorkerPort,
  onMessage: (m: unknown) => void,
  onExit: (reason: string, outOfMemoryMb?: number) => void,
  log: (m: string) => void,
): WorkerPort {
  let answered = false;
  let sent: [EngineRequest, readonly ArrayBuffer[]][] = [];
  let current: WorkerPort;
  const receive = (m: unknown) => {
    answered = true;
    sent = [];
    onMessage(m);
  };
  const fail = (reason: string, startup: boolean, outOfMemoryMb?: number) => {
    if (answered || !startup) {
      onExit(reason, outOfMemoryMb);
      return;
    }
    log(`the engine worker did not start (${reason}): running the engine in-process`);
    current.terminate();
    current = fallback(onMessage);
    for (const [m, t] of sent) current.post(m, t);
    sent = [];
  };
  try {
    current = primary(receive, fail);
  } catch (e) {
    log(
      `cannot start the engine worker (${e instanceof Error ? e.message : String(e)}): running the engine in-process`,
    );
    current = fallback(onMessage);
    answered = true;
  }
  return {
    post(m, t) {
      if (!answered) sent.push([m, t]);
      current.post(m, t);
    },
    terminate() {
      current.terminate();
    },
  };
}

/** What `loadPieces` sends in one message at most (about a millisecond to copy). */
export const PIECE_CHARS = 1 << 20;

/**
 * Sends a text to `worker` in pieces, one task each, then parses it under `key`. `pieces` may throw
 * `Cancelled` (the document changed between two pieces); so does a worker stopped meanwhile.
 */
export async function loadPieces(
  worker: EngineWorker,
  params: { key: string; file: string; maxBytes: number; encoding?: string },
  pieces: Iterable<string>,
): Promise<DumpSummary> {
  for (const text of pieces) {
    worker.request('append', { key: params.key, text }).catch(() => {});
    await new Promise(r => setTimeout(r, 0));
    if (!worker.alive) throw new Cancelled('the worker was stopped');
  }
  return worker.request('load', { ...params, source: { appended: true } });
}

/** A string's pieces of at most PIECE_CHARS characters. */
export function* stringPieces(text: string): Generator<string> {
  for (let i = 0; i < text.length; i += PIECE_CHARS) yield text.slice(i, i + PIECE_CHARS);
}
