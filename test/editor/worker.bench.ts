/**
 * The extension host's event loop while a 320k-rule dump is opened, hovered, traced and compared through the
 * engine workers — the same client and spawner the extension uses (src/worker/client.ts,
 * src/vscode/spawn-node.ts, dist/worker.js), without VS Code. It reports the longest stall of this thread
 * (perf_hooks.monitorEventLoopDelay and a 5 ms ticker), hover latencies while the dump parses and
 * validates, and memory; then, for comparison, what parsing on this thread (the old way) costs.
 *   npm run build && node --import tsx test/editor/worker.bench.ts [services] [endpoints]
 */
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { generateKubeProxyDump } from '../../bench/generate.ts';
import { analyzeDump } from '../../src/editor/dump-index.ts';
import { workerSpawner } from '../../src/vscode/spawn-node.ts';
import { EngineWorker, loadPieces, stringPieces } from '../../src/worker/client.ts';
import { ROOT } from '../helpers/fixtures.ts';

const services = Number(process.argv[2] ?? 10000);
const endpoints = Number(process.argv[3] ?? 10);
const spawn = workerSpawner(null, m => console.log(m), join(ROOT, 'dist', 'worker.js'));
const MB = (n: number) => `${(n / 1048576).toFixed(0)} MB`;

/** The longest gap between 5 ms ticks, minus the 5 ms: what a keystroke or a hover would have waited. */
class Stalls {
  private last = performance.now();
  max = 0;
  private readonly timer = setInterval(() => {
    const now = performance.now();
    this.max = Math.max(this.max, now - this.last - 5);
    this.last = now;
  }, 5);
  private readonly h = monitorEventLoopDelay({ resolution: 10 });
  constructor() {
    this.h.enable();
  }
  stop(): string {
    clearInterval(this.timer);
    this.max = Math.max(this.max, performance.now() - this.last - 5); // the gap since the last tick counts too
    this.h.disable();
    return `longest stall ${this.max.toFixed(1)} ms (ticker), event-loop delay max ${(this.h.max / 1e6).toFixed(1)} ms, p99 ${(this.h.percentile(99) / 1e6).toFixed(1)} ms`;
  }
}

async function phase<T>(label: string, f: () => Promise<T>): Promise<T> {
  const s = new Stalls();
  const t0 = performance.now();
  const v = await f();
  console.log(`${label.padEnd(44)} ${(performance.now() - t0).toFixed(0).padStart(6)} ms   ${s.stop()}`);
  return v;
}

async function main(): Promise<void> {
  const text = generateKubeProxyDump(services, endpoints);
  const linesBefore = (end: number) => {
    let n = 0;
    for (let i = text.indexOf('\n'); i >= 0 && i < end; i = text.indexOf('\n', i + 1)) n++;
    return n;
  };
  const lineCount = linesBefore(text.length) + 1;
  const svcLine = linesBefore(text.lastIndexOf('\n:KUBE-SVC-') + 1);
  const changed = text.replace(/--probability 0\.5000000000/, '--probability 0.2500000000');
  console.log(
    `dump: ${services} Services × ${endpoints} endpoints, ${MB(text.length)}, ${lineCount.toLocaleString('en-US')} lines; Node ${process.version}; load average ${loadavg()
      .map(l => l.toFixed(1))
      .join(' ')}`,
  );
  await phase("idle (the machine's own noise)", () => new Promise(r => setTimeout(r, 2000)));

  const doc = new EngineWorker(spawn);
  /** [start, latency] of each hover. */
  const hovers: [number, number][] = [];
  let hovering = true;
  /** A hover every 100 ms from the start, as a user moving the mouse while the dump opens. */
  const hoverLoop = (async () => {
    while (hovering) {
      const t0 = performance.now();
      await doc.request('hover', { key: 'd', line: svcLine, character: 2 }).catch(() => null);
      hovers.push([t0, performance.now() - t0]);
      await new Promise(r => setTimeout(r, 100));
    }
  })();
  const summary = await phase('open: parse (worker)', () =>
    loadPieces(doc, { key: 'd', file: 'kube.rules', maxBytes: 256 << 20 }, stringPieces(text)),
  );
  console.log(
    `  ${summary.ruleCount.toLocaleString('en-US')} rules, ${summary.chainCount.toLocaleString('en-US')} chains, parsed in ${summary.parseMs.toFixed(0)} ms in the worker`,
  );
  const parsed = performance.now();
  await phase('open: diagnostics + CodeLens + outline + folding', () =>
    Promise.all([
      doc.request('diagnostics', { key: 'd', options: { maxRulesForFullCheck: 400000, maxDiagnostics: 5000 } }),
      doc.request('chainLenses', { key: 'd', fromLine: 0, toLine: 1000, max: 3000 }),
      (async () => {
        for (let offset = 0, total = 1; offset < total; offset += 1000)
          total = (await doc.request('outline', { key: 'd', offset, limit: 1000, max: 5000 })).total;
      })(),
      doc.request('folding', { key: 'd', max: 5000 }),
    ]),
  );
  hovering = false;
  await hoverLoop;
  const during = hovers.filter(([t0]) => t0 >= parsed).map(([, ms]) => ms);
  const whileParsing = hovers.filter(([t0]) => t0 < parsed).map(([, ms]) => ms);
  console.log(
    `  hovers asked while the dump parsed: ${whileParsing.length}, answered after the parse, the slowest in ${Math.max(0, ...whileParsing).toFixed(0)} ms`,
  );
  console.log(
    `  hovers while diagnostics ran: ${during.length}, slowest ${Math.max(0, ...during).toFixed(0)} ms, median ${(during.sort((a, b) => a - b)[Math.floor(during.length / 2)] ?? 0).toFixed(0)} ms`,
  );
  const t = await phase('trace (worker)', () =>
    doc.request('trace', {
      key: 'd',
      packet: 'tcp 203.0.113.10 -> 10.96.39.15:80',
      node: { addresses: ['192.0.2.1'] },
    }),
  );
  console.log(`  ${t.ok ? `${t.trace.outcomes.length} outcomes` : t.error}`);
  await phase('edit: cancel a running re-parse, parse again', async () => {
    const stale = loadPieces(doc, { key: 'd', file: 'kube.rules', maxBytes: 256 << 20 }, stringPieces(changed));
    await new Promise(r => setTimeout(r, 300));
    doc.terminate('the document changed');
    await stale.catch(() => null);
    const fresh = new EngineWorker(spawn);
    await loadPieces(fresh, { key: 'd', file: 'kube.rules', maxBytes: 256 << 20 }, stringPieces(text));
    const heap = await fresh.request('memory', {});
    console.log(`  document worker heap after parse: ${MB(heap.heapUsed)}`);
    fresh.terminate('done');
  });
  const diff = await phase('compare two dumps (diff worker)', async () => {
    const job = new EngineWorker(spawn);
    await loadPieces(job, { key: 'old', file: 'old.rules', maxBytes: 256 << 20 }, stringPieces(text));
    await loadPieces(job, { key: 'new', file: 'new.rules', maxBytes: 256 << 20 }, stringPieces(changed));
    const r = await job.request('diff', { oldKey: 'old', newKey: 'new', node: { addresses: ['192.0.2.1'] } });
    const heap = await job.request('memory', {});
    console.log(`  diff worker heap with both dumps: ${MB(heap.heapUsed)}`);
    job.terminate('done');
    return r;
  });
  console.log(`  ${diff.ok ? `${diff.report.summary} (${diff.ms.toFixed(0)} ms in the worker)` : diff.error}`);
  const mem = process.memoryUsage();
  console.log(
    `extension-host thread heap used ${MB(mem.heapUsed)}, process rss ${MB(mem.rss)} (rss includes the workers')`,
  );

  // The old way, for comparison: the parse on this thread is one stall of its whole length.
  const s = new Stalls();
  const t0 = performance.now();
  analyzeDump(text, { file: 'kube.rules' }).references();
  await new Promise(r => setTimeout(r, 20));
  console.log(
    `before the worker: parse on the extension host thread ${(performance.now() - t0).toFixed(0)} ms — ${s.stop()}`,
  );
}

void main().then(() => process.exit(0));
