/**
 * The editor's engine workers within their memory (issue 12): a worker that runs out of its heap fails its
 * requests with `OutOfMemory` naming the limit (spawn-node.ts with a real, tiny cap), the dump store says so
 * on that file and does not read the same version again (no crash loop) while the other dumps keep their
 * workers, and the parses of dumps not on screen are dropped, least recently used first, while the dumps'
 * workers hold more than the budget together.
 */
import './fake-vscode/register.ts';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { generateKubeProxyDump } from '../../bench/generate.ts';
import { type Analysis, CannotRead, DumpStore } from '../../src/vscode/dump-store.ts';

type DumpAsk = Analysis['ask'];
import { workerSpawner } from '../../src/vscode/spawn-node.ts';
import {
  EngineWorker,
  OutOfMemory,
  type SpawnWorker,
  inProcessPort,
  isOutOfMemory,
  loadPieces,
  stringPieces,
} from '../../src/worker/client.ts';
import { EngineHost } from '../../src/worker/engine-host.ts';
import type { EngineRequest } from '../../src/shared/engine-protocol.ts';
import * as vscode from './fake-vscode/vscode.ts';
import { seedText } from './helpers.ts';

const MB = 1 << 20;
const doc = (text: string, name: string) => new vscode.FakeTextDocument(vscode.Uri.file(`/w/${name}`), text);

/**
 * In-process workers that report `heapMb` as their heap, and run out of memory (`onExit` with a 64 MB
 * limit, as spawn-node.ts reports ERR_WORKER_OUT_OF_MEMORY) on `method` for a file named `dies`.
 */
function fakeSpawn(opts: { heapMb?: number; dies?: string; method?: string } = {}) {
  const stats = { spawned: 0, terminated: 0, loads: [] as string[] };
  const spawn: SpawnWorker = (onMessage, onExit) => {
    stats.spawned++;
    const host = new EngineHost(undefined, () => (opts.heapMb ?? 10) * MB);
    let file = '';
    let dead = false;
    const port = inProcessPort(async (r: EngineRequest) => {
      if (r.method === 'load') {
        file = (r.params as { file: string }).file;
        stats.loads.push(file);
      }
      if (file === opts.dies && r.method === (opts.method ?? 'load')) {
        dead = true;
        setTimeout(() => onExit('the engine worker ran out of its 64 MB of memory', 64), 0);
        return new Promise<never>(() => {});
      }
      return host.handle(r);
    }, onMessage);
    return {
      post: (m, t) => !dead && port.post(m, t),
      terminate: () => {
        stats.terminated++;
        port.terminate();
      },
    };
  };
  return { spawn, stats };
}

describe('engine worker out of memory', () => {
  it('fails every pending and later request with OutOfMemory naming the limit, and says so once', async () => {
    let exit: ((reason: string, mb?: number) => void) | null = null;
    const died: Error[] = [];
    const w = new EngineWorker(
      (_m, onExit) => {
        exit = onExit;
        return { post: () => {}, terminate: () => {} };
      },
      e => died.push(e),
    );
    const pending = w.request('memory', {});
    exit!('the engine worker ran out of its 768 MB of memory', 768);
    await assert.rejects(pending, (e: unknown) => isOutOfMemory(e) && e.limitMb === 768);
    await assert.rejects(w.request('memory', {}), (e: unknown) => e instanceof OutOfMemory);
    assert.match(died[0]!.message, /768 MB.*packetlens\.limits\.engineMemoryMB/);
    assert.equal(died.length, 1);
    assert.equal(w.alive, false);
  });

  it('a real worker past a tiny heap cap stops with OutOfMemory, not the process', async () => {
    // A worker_threads entry running the engine worker from its TypeScript source through tsx, so that
    // spawn-node.ts starts it with its heap cap (no unit test may build dist/worker.js).
    const dir = mkdtempSync(join(tmpdir(), 'packetlens-oom-'));
    const file = join(dir, 'worker.cjs');
    const main = join(__dirname, '..', '..', 'src', 'worker', 'node-main.ts');
    writeFileSync(file, `require(${JSON.stringify(require.resolve('tsx/cjs'))});\nrequire(${JSON.stringify(main)});\n`);
    const spawn = workerSpawner(
      null,
      () => {},
      file,
      () => 48,
    );
    const w = new EngineWorker(spawn);
    try {
      const text = generateKubeProxyDump(3000, 10);
      await assert.rejects(
        (async () => {
          await loadPieces(w, { key: 'd', file: 'big.rules', maxBytes: 256 * MB }, stringPieces(text));
          await w.request('diagnostics', { key: 'd', options: { maxRulesForFullCheck: 1e6, maxDiagnostics: 10 } });
        })(),
        (e: unknown) => isOutOfMemory(e) && e.limitMb === 48,
      );
    } finally {
      w.terminate('done');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('DumpStore within memory', () => {
  it('a dump whose worker runs out of memory gets the message once and is not read again until it changes', async () => {
    const { spawn, stats } = fakeSpawn({ dies: 'big.rules' });
    const logged: string[] = [];
    const store = new DumpStore(
      () => 64 * MB,
      spawn,
      m => logged.push(m),
    );
    const failures: { uri: string; message: string }[] = [];
    store.onDidFail(f => failures.push({ uri: f.uri.toString(), message: f.error.message }));
    const big = doc(seedText(), 'big.rules');
    const small = doc(seedText(), 'small.rules');
    const check = (e: unknown) =>
      e instanceof CannotRead &&
      /big\.rules needs more than 64 MB .*packetlens\.limits\.engineMemoryMB/.test(e.message);
    await assert.rejects(store.get(big as never), check);
    // Every feature asks again (hover, CodeLens, the status bar): none reads it again.
    for (let i = 0; i < 3; i++) await assert.rejects(store.get(big as never), check);
    assert.deepEqual(stats.loads, ['big.rules'], 'read once, not in a crash loop');
    assert.equal(failures.length, 1, 'told once');
    assert.equal(failures[0]!.uri, big.uri.toString());
    // The other dump has its own worker, unaffected.
    const a = await store.get(small as never);
    assert.ok(a.summary.ruleCount > 0);
    // An edit is a new version: it is tried again (and fails again, told again).
    big.edit(`${seedText()}\n# edited\n`);
    store.changed(big as never);
    await assert.rejects(store.get(big as never), check);
    assert.deepEqual(stats.loads, ['big.rules', 'small.rules', 'big.rules']);
    assert.equal(failures.length, 2);
    // The limit raised: tried again.
    assert.deepEqual(
      store.retryFailed().map(u => u.toString()),
      [big.uri.toString()],
    );
    await assert.rejects(store.get(big as never), check);
    assert.equal(stats.loads.length, 4);
    store.dispose();
  });

  it('a worker that dies after the parse (diagnostics) is read again once; dying again fails that version', async () => {
    const { spawn, stats } = fakeSpawn({ dies: 'big.rules', method: 'diagnostics' });
    const store = new DumpStore(() => 64 * MB, spawn);
    let failures = 0;
    store.onDidFail(() => failures++);
    const big = doc(seedText(), 'big.rules');
    const diagnose = (a: { ask: DumpAsk }) =>
      a.ask('diagnostics', { options: { maxRulesForFullCheck: 10, maxDiagnostics: 10 } });
    const a = await store.get(big as never);
    await assert.rejects(diagnose(a), (e: unknown) => isOutOfMemory(e));
    await assert.rejects(a.ask('hover', { line: 0, character: 0 }), (e: unknown) => isOutOfMemory(e));
    assert.equal(failures, 0, 'one hostile request does not end the file');
    const again = await store.get(big as never);
    assert.equal(stats.spawned, 2, 'read again in a fresh worker');
    await assert.rejects(diagnose(again), (e: unknown) => isOutOfMemory(e));
    await assert.rejects(store.get(big as never), (e: unknown) => e instanceof CannotRead);
    await assert.rejects(store.get(big as never), (e: unknown) => e instanceof CannotRead);
    assert.equal(stats.spawned, 2, 'not read a third time');
    assert.equal(failures, 1);
    store.dispose();
  });

  it('drops the least recently used parses not on screen while the workers hold more than the budget', async () => {
    const { spawn, stats } = fakeSpawn({ heapMb: 300 });
    const visible = new Set<string>();
    const logged: string[] = [];
    const store = new DumpStore(
      () => 64 * MB,
      spawn,
      m => logged.push(m),
      undefined,
      { budget: () => 700 * MB, visible: uri => visible.has(uri.toString()) },
    );
    const [a, b, c, d] = ['a.rules', 'b.rules', 'c.rules', 'd.rules'].map(n => doc(seedText(), n));
    visible.add(c!.uri.toString());
    visible.add(d!.uri.toString());
    await store.get(a as never);
    await store.get(b as never);
    await store.get(a as never); // a used after b
    await store.get(c as never);
    await new Promise(r => setTimeout(r, 20)); // the heaps measured
    // 900 MB > 700 MB: b, the least recently used off screen, is dropped; a stays.
    assert.equal(store.peek(b as never), undefined);
    assert.ok(store.peek(a as never));
    assert.equal(stats.terminated, 1);
    assert.match(logged.join('\n'), /dropped the parse of .*b\.rules \(300 MB\) .*within 700 MB .*900 MB with it/);
    // Visible dumps stay even above the budget; a goes (c and d are on screen).
    await store.get(d as never);
    await new Promise(r => setTimeout(r, 20));
    assert.equal(store.peek(a as never), undefined);
    assert.ok(store.peek(c as never) && store.peek(d as never));
    // A dropped dump is read again when asked for, after making room for what it held: c, now off screen
    // and used before d, is dropped before b is read (600 + 300 > 700).
    visible.delete(c!.uri.toString());
    visible.add(b!.uri.toString());
    const terminatedBefore = stats.terminated;
    const reading = store.get(b as never);
    await new Promise(r => setTimeout(r, 5)); // the parse starts
    assert.equal(stats.terminated, terminatedBefore + 1, 'room made when the parse started');
    assert.equal(store.peek(c as never), undefined);
    const again = await reading;
    assert.ok(again.summary.ruleCount > 0);
    assert.equal(stats.loads.filter(f => f === 'b.rules').length, 2);
    store.dispose();
  });
});
