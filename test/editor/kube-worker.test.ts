/**
 * The manifests in the engine worker (src/worker/kube-host.ts, issue 12 item 3): a cluster's view is read,
 * kept and asked in the worker, and every answer — CodeLens, hovers, suggestions, end-to-end traces, the
 * synthesized dumps — is the one the editor logic gives on the same manifests in process (the answers
 * themselves are checked against the seeds in kube-manifests.test.ts). One round trip goes through a real
 * worker_threads worker, so every answer survives the structured clone.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ClusterView, type ManifestFile } from '../../src/editor/kube/cluster.ts';
import { manifestHoverAt } from '../../src/editor/kube/manifest-hover.ts';
import { manifestSuggestions, nothingToTrace, runManifestTrace } from '../../src/editor/kube/manifest-trace.ts';
import { nodeDump, nodePicks } from '../../src/editor/kube/node-rules.ts';
import { portLens } from '../../src/editor/kube/service-lens.ts';
import { TextLines } from '../../src/editor/text-lines.ts';
import type { EngineRequest, Method, Params, Result } from '../../src/shared/engine-protocol.ts';
import { EngineWorker, stringPieces } from '../../src/worker/client.ts';
import { realWorker } from './helpers.ts';
import { EngineHost } from '../../src/worker/engine-host.ts';
import { ROOT } from '../helpers/fixtures.ts';

function folderFiles(folder: string): ManifestFile[] {
  const dir = join(ROOT, 'examples', folder);
  return readdirSync(dir)
    .filter(f => /\.ya?ml$/.test(f))
    .sort()
    .map(f => ({ file: `file:///ws/${folder}/${f}`, text: readFileSync(join(dir, f), 'utf8') }));
}

type Ask = <M extends Method>(method: M, params: Params<M>) => Promise<Result<M>>;

function inProcess(): Ask {
  const host = new EngineHost();
  let id = 0;
  return async (method, params) => {
    const r = await host.handle({ id: ++id, method, params } as EngineRequest);
    if (!r.ok) throw new Error(r.error);
    return r.result as never;
  };
}

/** Sends a folder's files as the extension does: small ones inline, one of them in pieces (appended). */
async function load(ask: Ask, key: string, folder: string, files: ManifestFile[]) {
  const [first, ...rest] = files;
  for (const piece of stringPieces(first!.text.slice(0, 40)))
    await ask('append', { key: `${key}\n${first!.file}`, text: piece });
  await ask('append', { key: `${key}\n${first!.file}`, text: first!.text.slice(40) });
  return ask('kubeLoad', {
    key,
    label: `examples/${folder}`,
    mode: 'auto',
    files: [
      { file: first!.file, source: { appended: true } },
      ...rest.map(f => ({ file: f.file, source: { text: f.text } })),
      // Not Kubernetes: sent, not kept.
      { file: 'file:///ws/other.yaml', source: { text: 'name: ci\non: push\n' } },
    ],
    maxPerFile: 100,
  });
}

describe('manifests in the engine worker', () => {
  for (const folder of ['seed-000', 'seed-002', 'seed-003', 'app-no-nodes']) {
    it(`answers as the editor logic does in process: examples/${folder}`, async () => {
      const files = folderFiles(folder);
      const view = new ClusterView(`examples/${folder}`, files);
      const ask = inProcess();
      const summary = await load(ask, 'c1', folder, files);
      assert.deepEqual(summary.files, files.map(f => f.file).sort());
      assert.equal(summary.services, view.model.services.length);
      assert.deepEqual(
        summary.nodes.map(n => n.name),
        view.model.nodes.map(n => n.name),
      );
      assert.equal(summary.empty, nothingToTrace(view));
      assert.equal(summary.mode, view.mode);
      assert.deepEqual(summary.diagnostics, view.model.diagnostics);

      // CodeLens: one row per Service port line; each port's lens is the one computed in process.
      let hovered = 0;
      for (const f of files) {
        const rows = await ask('kubeLenses', { key: 'c1', file: f.file });
        const services = view.servicesIn(f.file);
        assert.equal(rows.filter(r => r.title === null).length, services.flatMap(s => view.portsOf(s)).length);
        for (const r of rows.filter(x => x.title === null)) {
          const sp = view.model.servicePorts[r.port]!;
          assert.equal(r.line, sp.loc.range.start.line);
          assert.deepEqual(await ask('kubePortLens', { key: 'c1', port: r.port }), portLens(view, sp));
        }
        // Hovers on every line's first word.
        const lines = new TextLines(f.text);
        const split = f.text.split('\n');
        for (let line = 0; line < split.length; line++) {
          const character = Math.max(0, split[line]!.search(/\S/)) + 1;
          const h = await ask('kubeHover', { key: 'c1', file: f.file, line, character });
          assert.deepEqual(h, manifestHoverAt(view, f.file, lines, line, character), `${f.file}:${line + 1}`);
          if (h) hovered++;
        }
      }
      assert.ok(hovered > 0 || view.model.services.length === 0, 'some line has a hover');
      assert.deepEqual(await ask('kubeSuggest', { key: 'c1', query: '', limit: 40 }), manifestSuggestions(view));
      assert.deepEqual(await ask('kubeNodePicks', { key: 'c1' }), nodePicks(view));

      // Traces of every suggested packet: the diagram is the one the editor draws in process.
      for (const s of manifestSuggestions(view)) {
        const mine = runManifestTrace(view, s.text, null);
        const r = await ask('kubeTrace', { key: 'c1', packet: s.text, node: null });
        assert.equal(r.ok, mine.ok, s.text);
        if (!r.ok || !mine.ok) {
          assert.equal(!r.ok && r.error, !mine.ok && mine.error);
          continue;
        }
        assert.deepEqual(r.diagram, mine.diagram);
        assert.equal(r.node, mine.value.node);
        // The traced dump, read in pieces, is the document the diagram's lines point into.
        let text = '';
        for (let offset = 0; ;) {
          const d = await ask('kubeDump', { key: 'c1', node: r.node, traced: true, offset, limit: 1000 });
          assert.ok(d);
          text += d.text;
          offset += d.text.length;
          if (offset >= d.total) break;
        }
        assert.equal(text, mine.dump.text);
      }
      for (const n of view.model.nodes) {
        const d = await ask('kubeDump', { key: 'c1', node: n.name, traced: false, offset: 0, limit: 1e9 });
        assert.equal(d?.text, nodeDump(view, n.name).text);
      }
      assert.equal(
        await ask('kubeDump', { key: 'c1', node: 'no-such-node', traced: false, offset: 0, limit: 10 }),
        null,
      );
      await ask('drop', { key: 'c1' });
      await assert.rejects(ask('kubeLenses', { key: 'c1', file: files[0]!.file }), /no manifests read/);
    });
  }

  it('answers through a real worker thread (every answer crosses as plain data)', async () => {
    const worker = new EngineWorker(realWorker);
    try {
      const ask: Ask = (method, params) => worker.request(method, params);
      const files = folderFiles('seed-003');
      const summary = await load(ask, 'k', 'seed-003', files);
      assert.ok(summary.services > 0 && summary.nodes.length > 0);
      const services = files.find(f => f.file.endsWith('/services.yaml'))!;
      const rows = await ask('kubeLenses', { key: 'k', file: services.file });
      const lens = await ask('kubePortLens', { key: 'k', port: rows.find(r => r.title === null)!.port });
      assert.match(lens!.title, /→ .*50%/);
      const [first] = await ask('kubeSuggest', { key: 'k', query: '', limit: 1 });
      const r = await ask('kubeTrace', { key: 'k', packet: first!.text, node: null });
      assert.ok(r.ok && r.diagram.outcomes.length > 0, JSON.stringify(r).slice(0, 300));
      const line = services.text.split('\n').findIndex(l => /^\s*name:/.test(l));
      const hover = await ask('kubeHover', { key: 'k', file: services.file, line, character: 4 });
      assert.ok(hover === null || typeof hover.markdown === 'string');
    } finally {
      worker.terminate('the test ended');
    }
  });
});
