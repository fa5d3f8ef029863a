/**
 * Starting the engine worker on the desktop: a worker_threads Worker running dist/worker.js (next to this
 * bundle), with a heap limit so a hostile file ends the worker — reported on that file — instead of the
 * extension host. Where no worker can start, the engine runs in-process (src/worker/client.ts).
 * The web bundle replaces this module with spawn-web.ts (esbuild.mjs).
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { type SpawnWorker, portWithFallback } from '../worker/client.ts';
import { inProcessEngine } from '../worker/engine-host.ts';
import { DEFAULT_HEAP_MB } from '../editor/settings.ts';

/**
 * `file`: the worker bundle, dist/worker.js beside dist/extension.js (the bench passes its own path);
 * `heapMb`: each worker's old-generation heap limit, read when it starts (packetlens.limits.engineMemoryMB).
 */
export function workerSpawner(
  _extensionUri: unknown,
  log: (m: string) => void,
  file = join(__dirname, 'worker.js'),
  heapMb: () => number = () => DEFAULT_HEAP_MB,
): SpawnWorker {
  return (onMessage, onExit) =>
    portWithFallback(
      (receive, fail) => {
        const limitMb = heapMb();
        const w = new Worker(file, { resourceLimits: { maxOldGenerationSizeMb: limitMb } });
        let terminated = false;
        w.on('message', receive);
        w.on('error', e => {
          const code = (e as { code?: string }).code;
          if (code === 'ERR_WORKER_OUT_OF_MEMORY')
            fail(`the engine worker ran out of its ${limitMb} MB of memory`, false, limitMb);
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
 * With PACKETLENS_STALL_LOG=1 in the environment (the e2e sets it), the extension also logs when each
 * step of a hover, a CodeLens request and a trace happened (`timing …` lines, wall-clock milliseconds since
 * the epoch, so the e2e can hold them against what the browser drew): issue 18's editor figures, split
 * into VS Code's part and ours. Off by default (a hover would log a line).
 */
export function timingLog(log: (m: string) => void): ((m: string) => void) | null {
  return process.env['PACKETLENS_STALL_LOG'] ? m => log(`timing ${m}`) : null;
}

/**
 * With PACKETLENS_STALL_LOG=1 in the environment (the e2e sets it), every stall of the extension host's
 * event loop above `thresholdMs` is logged as `event loop stalled N ms` — the e2e reads it back to show
 * the host stayed responsive. Off by default: a 10 ms ticker is not free.
 */
export function stallMonitor(log: (m: string) => void, thresholdMs = 50): { dispose(): void } {
  if (!process.env['PACKETLENS_STALL_LOG']) return { dispose() {} };
  log(`event loop monitor on: stalls above ${thresholdMs} ms are logged`);
  // This thread's own CPU time (Node 23.9+): a stall in which the thread barely ran was the machine's
  // scheduler (the engine workers, the renderer, other processes on 2 cores), not work on this thread.
  const threadCpu = (process as { threadCpuUsage?: () => { user: number; system: number } }).threadCpuUsage;
  const cpuMs = threadCpu
    ? () => {
        const u = threadCpu.call(process);
        return (u.user + u.system) / 1000;
      }
    : null;
  let last = performance.now();
  let lastCpu = cpuMs?.() ?? 0;
  const timer = setInterval(() => {
    const now = performance.now();
    const cpu = cpuMs?.() ?? 0;
    const stall = now - last - 10;
    if (stall > thresholdMs)
      log(
        `event loop stalled ${stall.toFixed(0)} ms${cpuMs ? ` (this thread ran ${(cpu - lastCpu).toFixed(0)} ms of it)` : ''}`,
      );
    last = now;
    lastCpu = cpu;
  }, 10);
  const profiler = cpuProfiler(process.env['PACKETLENS_CPU_PROFILE'], log);
  return {
    dispose: () => {
      clearInterval(timer);
      profiler?.dispose();
    },
  };
}

/**
 * With PACKETLENS_CPU_PROFILE=<folder> as well, the extension host's thread is sampled (1 ms) and a
 * `.cpuprofile` is written to the folder every 15 s — to find what a logged stall was made of. Diagnostic
 * only: writing a profile is a stall of its own, logged as such.
 */
function cpuProfiler(dir: string | undefined, log: (m: string) => void): { dispose(): void } | null {
  if (!dir) return null;
  const session = new Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) =>
      session.post(method, params ?? {}, (err, res) => (err ? reject(err) : resolve(res))),
    );
  let n = 0;
  const start = async () => {
    await post('Profiler.enable');
    await post('Profiler.setSamplingInterval', { interval: 1000 });
    await post('Profiler.start');
  };
  const save = async () => {
    const { profile } = (await post('Profiler.stop')) as { profile: unknown };
    const t0 = performance.now();
    const file = join(dir, `ext-host-${String(n++).padStart(3, '0')}.cpuprofile`);
    writeFileSync(file, JSON.stringify(profile));
    log(`cpu profile written to ${file} in ${(performance.now() - t0).toFixed(0)} ms`);
    await post('Profiler.start');
  };
  void start();
  const timer = setInterval(
    () => void save().catch((e: unknown) => log(`cpu profile not written: ${String(e)}`)),
    15_000,
  );
  return {
    dispose: () => {
      clearInterval(timer);
      void save().finally(() => session.disconnect());
    },
  };
}
