/**
 * What the editor's engine workers cost the extension host process (issue 12: under 1 GB for any input up to
 * 100 MB): the real client and spawner (src/worker/client.ts, src/vscode/spawn-node.ts, dist/worker.js, so
 * run `node esbuild.mjs` first), fed as the extension feeds them, in this one process. It prints each
 * worker's heap and this process's peak RSS (which includes every worker thread and the texts this process
 * holds, as the extension host holds the open documents).
 *   node --import tsx bench/editor-memory.ts [--cap MB] dumps FILE...      one worker per dump, as DumpStore
 *   node --import tsx bench/editor-memory.ts [--cap MB] store FILE...      the dump store (fake VS Code): each
 *     file opened in turn, the one on screen, its diagnostics and a trace asked; the store's budget drops
 *     the parses of the others when the workers hold more than the cap together
 *   node --import tsx bench/editor-memory.ts [--cap MB] diff OLD NEW      a comparison's worker
 *   node --import tsx bench/editor-memory.ts [--cap MB] manifests FILE... one cluster per file, one worker
 *   node --import tsx bench/editor-memory.ts [--cap MB] workspace FILE... the same through ManifestWorkspace
 *     (fake VS Code), whose worker drops the views used least recently past half the cap
 * `--cap` is each worker's heap limit (default: the extension's, packetlens.limits.engineMemoryMB).
 */
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { resourceUsage } from 'node:process';
import { DEFAULT_HEAP_MB } from '../src/editor/settings.ts';
import { workerSpawner } from '../src/vscode/spawn-node.ts';
import { EngineWorker, loadPieces, stringPieces } from '../src/worker/client.ts';

const args = process.argv.slice(2);
let cap = DEFAULT_HEAP_MB;
if (args[0] === '--cap') {
  cap = Number(args[1]);
  args.splice(0, 2);
}
const [mode, ...files] = args;
const spawn = workerSpawner(
  null,
  m => console.log(m),
  join(__dirname, '..', 'dist', 'worker.js'),
  () => cap,
);
const MB = (n: number) => `${(n / 1048576).toFixed(0)} MB`;
const started = performance.now();

function rss(): string {
  return `rss ${MB(process.memoryUsage().rss)}, peak rss ${(resourceUsage().maxRSS / 1024).toFixed(0)} MB`;
}

function say(what: string): void {
  console.log(`${((performance.now() - started) / 1000).toFixed(1).padStart(6)} s  ${what}: ${rss()}`);
}

async function heapOf(w: EngineWorker): Promise<string> {
  return w.alive ? MB((await w.request('memory', {})).heapUsed) : 'dead';
}

const DIAGNOSTICS = { options: { maxRulesForFullCheck: 400000, maxDiagnostics: 5000 } };

/** Opens a dump in its own worker as DumpStore does, then its diagnostics and a trace, as the editor asks. */
async function openDump(file: string): Promise<EngineWorker> {
  const w = new EngineWorker(spawn);
  const text = readFileSync(file, 'utf8');
  try {
    const s = await loadPieces(w, { key: 'd', file, maxBytes: 1 << 30 }, stringPieces(text));
    say(`${basename(file)}: ${s.ruleCount} rules parsed, worker heap ${await heapOf(w)}`);
    await w.request('diagnostics', { key: 'd', ...DIAGNOSTICS });
    say(`${basename(file)}: diagnostics, worker heap ${await heapOf(w)}`);
    const t = await w.request('trace', {
      key: 'd',
      packet: 'tcp 203.0.113.10 -> 10.96.39.15:80',
      node: { addresses: ['192.0.2.1'] },
    });
    say(
      `${basename(file)}: trace ${t.ok ? `${t.trace.outcomes.length} outcomes` : t.error}, worker heap ${await heapOf(w)}`,
    );
  } catch (e) {
    say(`${basename(file)}: ${e instanceof Error ? e.message : String(e)}`);
  }
  return w;
}

async function dumps(): Promise<void> {
  const workers: EngineWorker[] = [];
  for (const f of files) workers.push(await openDump(f));
  const heaps = await Promise.all(workers.map(heapOf));
  say(`all open (${heaps.join(' + ')})`);
  for (const w of workers) w.terminate('done');
}

/** The editor's DumpStore over fake documents: several big dumps opened one after the other, as in a review. */
async function store(): Promise<void> {
  await import('../test/editor/fake-vscode/register.ts');
  const vscode = await import('../test/editor/fake-vscode/vscode.ts');
  const { DumpStore } = await import('../src/vscode/dump-store.ts');
  let onScreen = '';
  const s = new DumpStore(
    () => 1 << 30,
    spawn,
    m => console.log(`        store: ${m}`),
    undefined,
    { budget: () => cap * 1048576, visible: uri => uri.toString() === onScreen },
  );
  for (const f of files) {
    const doc = new vscode.FakeTextDocument(vscode.Uri.file(f), readFileSync(f, 'utf8'));
    onScreen = doc.uri.toString();
    try {
      const a = await s.get(doc as never);
      say(`${basename(f)}: ${a.summary.ruleCount} rules parsed`);
      await a.ask('diagnostics', DIAGNOSTICS);
      const t = await a.ask('trace', {
        packet: 'tcp 203.0.113.10 -> 10.96.39.15:80',
        node: { addresses: ['192.0.2.1'] },
      });
      say(`${basename(f)}: diagnostics, trace ${t.ok ? `${t.trace.outcomes.length} outcomes` : t.error}`);
      await new Promise(r => setTimeout(r, 2000)); // the store's budget check after answers
      say(`${basename(f)}: settled`);
    } catch (e) {
      say(`${basename(f)}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  s.dispose();
}

async function diff(): Promise<void> {
  const [a, b] = files as [string, string];
  const w = new EngineWorker(spawn);
  try {
    await loadPieces(w, { key: 'old', file: a, maxBytes: 1 << 30 }, stringPieces(readFileSync(a, 'utf8')));
    await loadPieces(w, { key: 'new', file: b, maxBytes: 1 << 30 }, stringPieces(readFileSync(b, 'utf8')));
    say(`both sides parsed, worker heap ${await heapOf(w)}`);
    const r = await w.request('diff', { oldKey: 'old', newKey: 'new', node: { addresses: ['172.18.0.4'] } });
    say(`${r.ok ? `${r.report.summary}, ${r.report.classesTraced} classes` : r.error}, worker heap ${await heapOf(w)}`);
  } catch (e) {
    say(e instanceof Error ? e.message : String(e));
  }
  w.terminate('done');
}

async function manifests(): Promise<void> {
  const w = new EngineWorker(spawn);
  let n = 0;
  for (const f of files) {
    const key = `cluster-${++n}`;
    try {
      for (const piece of stringPieces(readFileSync(f, 'utf8')))
        await w.request('append', { key: `${key}\n${f}`, text: piece });
      const s = await w.request('kubeLoad', {
        key,
        label: basename(f),
        mode: 'auto',
        files: [{ file: f, source: { appended: true } }],
        maxPerFile: 5000,
      });
      say(`${basename(f)}: ${s.services} Services read, worker heap ${await heapOf(w)}`);
      const picks = await w.request('kubeNodePicks', { key });
      const node = picks[0]?.node;
      if (node) {
        const d = await w.request('kubeDump', { key, node, traced: false, offset: 0, limit: 1 << 20 });
        say(
          `${basename(f)}: node ${node}'s rules synthesized (${d?.total ?? 0} chars), worker heap ${await heapOf(w)}`,
        );
      }
    } catch (e) {
      say(`${basename(f)}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  w.terminate('done');
}

/** The editor's ManifestWorkspace over fake documents: each file its own cluster, read and a node's rules made. */
async function workspace(): Promise<void> {
  await import('../test/editor/fake-vscode/register.ts');
  const vscode = await import('../test/editor/fake-vscode/vscode.ts');
  const { ManifestWorkspace } = await import('../src/vscode/manifest-workspace.ts');
  const { readSettings } = await import('../src/editor/settings.ts');
  const settings = readSettings(key => (key === 'limits.engineMemoryMB' ? cap : undefined));
  const ws = new ManifestWorkspace(
    () => settings,
    m => /dropped|stopped|memory/.test(m) && console.log(`        workspace: ${m}`),
    spawn,
  );
  for (const f of files) {
    const doc = new vscode.FakeTextDocument(vscode.Uri.file(f), readFileSync(f, 'utf8'));
    vscode.workspace.textDocuments.push(doc);
    try {
      const view = await ws.viewFor(doc as never);
      say(`${basename(f)}: ${view.summary.services} Services read`);
      const node = (await view.ask('kubeNodePicks', {}))[0]?.node;
      if (node) {
        const d = await view.ask('kubeDump', { node, traced: false, offset: 0, limit: 1 << 20 });
        say(`${basename(f)}: node ${node}'s rules synthesized (${d?.total ?? 0} chars)`);
      }
    } catch (e) {
      say(`${basename(f)}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  ws.dispose();
}

async function main(): Promise<void> {
  console.log(`mode ${mode}, heap cap ${cap} MB per worker, Node ${process.version}`);
  say('start');
  if (mode === 'dumps') await dumps();
  else if (mode === 'diff') await diff();
  else if (mode === 'store') await store();
  else if (mode === 'workspace') await workspace();
  else if (mode === 'manifests') await manifests();
  else throw new Error('usage: bench/editor-memory.ts [--cap MB] dumps|store|diff|manifests|workspace FILE...');
  say('end');
}

void main().then(() => process.exit(0));
