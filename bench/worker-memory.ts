/**
 * What a file costs the editor's engine worker to hold: the worker's own handlers (src/worker/engine-host.ts)
 * in this process, fed the text in 1 MB pieces as the extension sends it, then asked for the file's
 * diagnostics; prints the heap after each step (after a full GC) and the peak RSS (issue 12: ≤ 1 GB for
 * any input up to 100 MB). Run with a heap limit to check the bound:
 *   node --max-old-space-size=1000 --expose-gc --import tsx bench/worker-memory.ts FILE
 * With `--diff NEW`: also loads NEW and compares FILE → NEW as the editor's Compare Packet Behaviour asks the
 * worker to (its `diff` method), the report structured-cloned as a message crossing to the extension.
 */
import { readFileSync } from 'node:fs';
import { resourceUsage } from 'node:process';
import type { EngineRequest } from '../src/shared/engine-protocol.ts';
import { EngineHost } from '../src/worker/engine-host.ts';

const file = process.argv[2] ?? '';
const other = process.argv[3] === '--diff' ? (process.argv[4] ?? '') : null;
if (!file || other === '') throw new Error('usage: bench/worker-memory.ts FILE [--diff NEW]');
const host = new EngineHost();
let id = 1;
async function ask(method: string, params: object): Promise<unknown> {
  const r = await host.handle({ id: id++, method, params } as unknown as EngineRequest);
  if (!r.ok) throw new Error(r.error);
  return r.result;
}
const gc = (globalThis as { gc?: () => void }).gc;
function heap(): string {
  gc?.();
  const m = process.memoryUsage();
  return `heap ${(m.heapUsed / 1048576).toFixed(0)} MB, rss ${(m.rss / 1048576).toFixed(0)} MB`;
}

/** Sends the file in 1 MB pieces; the bench keeps no copy of it (the worker's is what is measured). */
async function send(path = file, key = 'd'): Promise<void> {
  const text = readFileSync(path, 'utf8');
  // Flat copies of the pieces, as a message delivers them, not slices that would keep the file alive.
  for (let i = 0; i < text.length; i += 1 << 20)
    await ask('append', { key, text: structuredClone(text.slice(i, i + (1 << 20))) });
}

/** The comparison FILE → NEW through the worker's `diff`, its report cloned as the message to the host. */
async function compare(path: string): Promise<void> {
  await send(path, 'n');
  await ask('load', { key: 'n', file: path, maxBytes: 1 << 30, source: { appended: true } });
  const t0 = performance.now();
  const r = structuredClone(await ask('diff', { oldKey: 'd', newKey: 'n', node: { addresses: ['172.18.0.4'] } })) as {
    ok: boolean;
    error?: string;
    report?: { summary: string; classesTraced: number; approximate: boolean };
  };
  const what = r.ok
    ? `${r.report!.summary}, ${r.report!.classesTraced} classes traced${r.report!.approximate ? ', approximate' : ''}`
    : r.error;
  console.log(`diff in ${(performance.now() - t0).toFixed(0)} ms (${what}): ${heap()}`);
}

async function main(): Promise<void> {
  await send();
  let t0 = performance.now();
  const summary = (await ask('load', { key: 'd', file, maxBytes: 1 << 30, source: { appended: true } })) as {
    ruleCount: number;
  };
  console.log(`read ${summary.ruleCount} rules in ${(performance.now() - t0).toFixed(0)} ms: ${heap()}`);
  t0 = performance.now();
  await ask('diagnostics', { key: 'd', options: { maxRulesForFullCheck: 400000, maxDiagnostics: 5000 } });
  console.log(`diagnostics in ${(performance.now() - t0).toFixed(0)} ms: ${heap()}`);
  if (other) await compare(other);
  console.log(
    `peak rss ${(resourceUsage().maxRSS / 1024).toFixed(0)} MB${gc ? '' : ' (run with --expose-gc for heap figures after a full GC)'}`,
  );
}

void main();
