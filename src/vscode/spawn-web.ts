/**
 * Starting the engine worker in the browser (vscode.dev, github.dev, the web-worker extension host): a Web
 * Worker running dist/web/worker.js. esbuild.mjs puts this module in place of spawn-node.ts in the web
 * bundle. Where no worker can start, the engine runs in-process (src/worker/client.ts).
 */
import { type SpawnWorker, portWithFallback } from '../worker/client.ts';
import { inProcessEngine } from '../worker/engine-host.ts';

interface WebWorker {
  onmessage: ((e: { data: unknown }) => void) | null;
  onerror: ((e: { message?: string }) => void) | null;
  postMessage(m: unknown, transfer: ArrayBuffer[]): void;
  terminate(): void;
}

type WorkerConstructor = new (url: string, options?: { name?: string }) => WebWorker;

/**
 * A browser gives a Web Worker no heap limit to set: `_heapMb` (packetlens.limits.engineMemoryMB) bounds
 * only the desktop's workers; here a worker that exhausts memory is the browser's to stop.
 */
export function workerSpawner(
  extensionUri: { toString(skipEncoding?: boolean): string },
  log: (m: string) => void,
  _file?: string,
  _heapMb?: () => number,
): SpawnWorker {
  const url = `${extensionUri.toString(true).replace(/\/$/, '')}/dist/web/worker.js`;
  return (onMessage, onExit) =>
    portWithFallback(
      (receive, fail) => {
        const Ctor = (globalThis as { Worker?: WorkerConstructor }).Worker;
        if (!Ctor) throw new Error('no Web Worker in this extension host');
        const w = new Ctor(url, { name: 'packetlens-engine' });
        w.onmessage = e => receive(e.data);
        w.onerror = e => fail(e.message ?? 'the worker script failed', true);
        return { post: (m, transfer) => w.postMessage(m, transfer as ArrayBuffer[]), terminate: () => w.terminate() };
      },
      inProcessEngine,
      onMessage,
      onExit,
      log,
    );
}

/** The browser has no environment to turn the timing log on with (see spawn-node.ts). */
export function timingLog(_log: (m: string) => void): ((m: string) => void) | null {
  return null;
}

/** The browser has no environment to turn the stall log on with: nothing to do (see spawn-node.ts). */
export function stallMonitor(_log: (m: string) => void, _thresholdMs = 50): { dispose(): void } {
  return { dispose() {} };
}
