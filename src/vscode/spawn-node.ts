/**
 * Starting the engine worker on the desktop: a worker_threads Worker running dist/worker.js (next to this
 * bundle), with a heap limit so a hostile file ends the worker — reported on that file — instead of the
 * extension host. Where no worker can start, the engine runs in-process (src/worker/client.ts).
 * The web bundle replaces this module with spawn-web.ts (esbuild.mjs).
 */
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { type SpawnWorker, portWithFallback } from '../worker/client.ts';
import { inProcessEngine } from '../worker/engine-host.ts';

/** The worker's heap limit: above what a 128 MB dump (packetlens.limits.maxFileSizeMB) needs. */
const MAX_HEAP_MB = 3072;

/** `file`: the worker bundle, dist/worker.js beside dist/extension.js (the bench passes its own path). */
export function workerSpawner(
  _extensionUri: unknown,
  log: (m: string) => void,
  file = join(__dirname, 'worker.js'),
): SpawnWorker {
  return (onMessage, onExit) =>
    portWithFallback(
      (receive, fail) => {
        const w = new Worker(file, { resourceLimits: { maxOldGenerationSizeMb: MAX_HEAP_MB } });
        let terminated = false;
        w.on('message', receive);
        w.on('error', e => {
          const code = (e as { code?: string }).code;
          if (code === 'ERR_WORKER_OUT_OF_MEMORY')
            fail('the file needs more memory than the engine worker may use', false);
          else
            fail(
              `the engine worker failed: ${e.message}`,
              code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND',
            );
        });
        w.on('exit', code => {
          if (!terminated) fail(`the engine worker stopped (exit code ${code})`, false);
        });
        return {
          post: (m, transfer) => w.postMessage(m, transfer as ArrayBuffer[]),
          terminate: () => {
            terminated = true;
            void w.terminate();
          },
        };
      },
      inProcessEngine,
      onMessage,
      onExit,
      log,
    );
}

/**
 * With PACKETLENS_STALL_LOG=1 in the environment (the e2e sets it), every stall of the extension host's
 * event loop above `thresholdMs` is logged as `event loop stalled N ms` — the e2e reads it back to show
 * the host stayed responsive. Off by default: a 10 ms ticker is not free.
 */
export function stallMonitor(log: (m: string) => void, thresholdMs = 50): { dispose(): void } {
  if (!process.env['PACKETLENS_STALL_LOG']) return { dispose() {} };
  log(`event loop monitor on: stalls above ${thresholdMs} ms are logged`);
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    const stall = now - last - 10;
    if (stall > thresholdMs) log(`event loop stalled ${stall.toFixed(0)} ms`);
    last = now;
  }, 10);
  return { dispose: () => clearInterval(timer) };
}
