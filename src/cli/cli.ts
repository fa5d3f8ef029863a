#!/usr/bin/env node
/** Process entry of the CLI bundle (dist/cli.js): wires `run` to argv, stdout and the exit code. */
import { writeSync, writevSync } from 'node:fs';
import { Worker, isMainThread, workerData } from 'node:worker_threads';
import type { Chunk } from './json.ts';
import type { run as Run } from './main.ts';

/**
 * The command runs in a worker thread whose heap is capped, so no input takes the CLI past about 1 GB
 * (issue 12): V8 on a large machine lets a process grow to several GB before it collects, and a diff whose
 * live data is 300 MB peaked at 1.15 GB. With the cap V8 collects sooner; an input that really needs more
 * ends with a clear message instead of swapping or an abort. PACKETLENS_HEAP_MB changes the cap (0: none,
 * the command runs on the main thread).
 */
const asked = Number(process.env.PACKETLENS_HEAP_MB ?? 768);
// Not a number of megabytes (PACKETLENS_HEAP_MB=lots): the default cap, not none.
const HEAP_MB = Number.isFinite(asked) && asked >= 0 ? asked : 768;
// Run from the TypeScript source (`node --import tsx src/cli/cli.ts`, the tests) the worker could not load
// it (tsx's hooks are the main thread's): the command runs on the main thread, uncapped, as before.
const bundled = typeof __filename === 'string' && __filename.endsWith('.js');
if (isMainThread && HEAP_MB > 0 && bundled) {
  const worker = new Worker(__filename, {
    workerData: { argv: process.argv.slice(2) },
    resourceLimits: { maxOldGenerationSizeMb: HEAP_MB },
    stdout: false,
    stderr: false,
  });
  worker.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'ERR_WORKER_OUT_OF_MEMORY') {
      writeErr(
        `packetlens: stopped: this input needs more than ${HEAP_MB} MB of memory (the CLI's limit, so that no file can exhaust the machine); nothing after the output above was computed. Set PACKETLENS_HEAP_MB to allow more.\n`,
      );
      process.exitCode = 2;
    } else {
      writeErr(`${e.stack ?? String(e)}\n`);
      process.exitCode = 1;
    }
  });
  worker.on('exit', code => {
    if (process.exitCode === undefined) process.exitCode = code;
  });
} else
  // Loaded here, not at the top: the main thread that only starts the worker need not evaluate the engine.
  void import('./main.ts').then(m =>
    main(m.run, isMainThread ? process.argv.slice(2) : (workerData as { argv: string[] }).argv),
  );

// When the reader of our output goes away (`packetlens diff … | head -4`), writing fails with EPIPE.
// That is not an error of ours: stop writing and end quietly with the command's own exit status, as
// `git log | head` does, instead of printing an unhandled-error stack trace into a CI log.
let closed = false;
const quit = (): never => {
  closed = true;
  process.exit(process.exitCode ?? 0);
};
const onStreamError = (e: NodeJS.ErrnoException): void => {
  if (e.code === 'EPIPE' || e.code === 'ERR_STREAM_DESTROYED') quit();
  throw e;
};
const pause = new Int32Array(new SharedArrayBuffer(4));

/** Writes to fd 2 synchronously (also from the worker thread, whose process.stderr is the parent's, later). */
const writeErr = (text: string): void => {
  const buf = Buffer.from(text);
  let off = 0;
  while (off < buf.length) {
    try {
      off += writeSync(2, buf.subarray(off));
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN') Atomics.wait(pause, 0, 0, 2);
      else return; // EPIPE and the like: nobody reads our errors
    }
  }
};

/**
 * Writes to fd 1 synchronously, in order: `trace --why-not --json` prints megabytes per packet, and queued
 * stream writes to a pipe grew without bound until writev failed (ENOBUFS). A full non-blocking pipe
 * (EAGAIN) is waited on.
 */
function writeAll(bufs: Uint8Array[]): void {
  let i = 0;
  let off = 0;
  while (i < bufs.length) {
    const batch = bufs.slice(i, i + 256);
    if (off) batch[0] = batch[0]!.subarray(off);
    let n: number;
    try {
      n = batch.length === 1 ? writeSync(1, batch[0]!) : writevSync(1, batch);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN') {
        Atomics.wait(pause, 0, 0, 2);
        continue;
      }
      if (code === 'EPIPE') quit();
      throw e;
    }
    while (i < bufs.length && n >= bufs[i]!.length - off) {
      n -= bufs[i]!.length - off;
      off = 0;
      i++;
    }
    off += n;
  }
}

// Output is written in chunks of about 1 MB, not one write per line: `trace --packets --json` prints
// ~16 KB per packet and one write(2) each cost a tenth of its time. Text is encoded at once into one reused
// buffer outside the JavaScript heap, so a line's string dies young: kept as strings until the flush, the
// pending megabyte survived the garbage collector's young-generation passes (copied, then promoted) and
// took a third of `trace --packets --json`'s time per packet. Encoded pieces (why-not lists shared by a
// trace's outcomes, json.ts) are written as they are. Pending output is written before anything on stderr,
// so the two streams keep their order.
const OUT_SIZE = 1 << 20;
/** Encoded pieces up to this size are copied into the buffer; larger ones are written as they are. */
const SMALL = 4096;
const outBuf = Buffer.allocUnsafe(OUT_SIZE);
/** Bytes of `outBuf` filled; those from `outFrom` on are not yet in `pending`. */
let outUsed = 0;
let outFrom = 0;
let pending: Uint8Array[] = [];
let pendingBytes = 0;
const cut = (): void => {
  if (outUsed > outFrom) pending.push(outBuf.subarray(outFrom, outUsed));
  outFrom = outUsed;
};
const flush = (): void => {
  cut();
  const bufs = pending;
  pending = [];
  pendingBytes = 0;
  outUsed = outFrom = 0;
  if (bufs.length && !closed) writeAll(bufs);
};
const putText = (text: string): void => {
  // UTF-8 takes at most 3 bytes per UTF-16 code unit.
  if (text.length * 3 > OUT_SIZE - outUsed) {
    flush();
    if (text.length * 3 > OUT_SIZE) {
      pending.push(Buffer.from(text));
      pendingBytes += text.length;
      return;
    }
  }
  const n = outBuf.write(text, outUsed);
  outUsed += n;
  pendingBytes += n;
};
const outChunks = (chunks: readonly Chunk[]): void => {
  for (const c of chunks) {
    if (typeof c === 'string') putText(c);
    else if (c.length <= SMALL && c.length <= OUT_SIZE - outUsed) {
      // A step of the line (json-steps.ts): copied, so the write takes a few large buffers.
      outBuf.set(c, outUsed);
      outUsed += c.length;
      pendingBytes += c.length;
    } else {
      cut();
      pending.push(c);
      pendingBytes += c.length;
    }
  }
  putText('\n');
  if (pendingBytes >= OUT_SIZE) flush();
};
function main(run: typeof Run, argv: string[]): void {
  process.stdout.on('error', onStreamError);
  process.stderr.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE' && e.code !== 'ERR_STREAM_DESTROYED') throw e;
  });
  let code = 1;
  try {
    code = run(argv, {
      out: line => outChunks([line]),
      outChunks,
      err: line => {
        flush();
        writeErr(`${line}\n`);
      },
    });
  } finally {
    flush(); // also when run() throws: what it printed comes before the stack trace
  }
  process.exitCode = code;
  if (!isMainThread) process.exit(code);
}
