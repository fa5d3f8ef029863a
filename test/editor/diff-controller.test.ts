/**
 * Compare Packet Behaviour's comparisons (src/vscode/diff-controller.ts, against a fake VS Code): one per
 * pair of parses, and a comparison cancelled by a newer one of the same dumps (one side parsed again)
 * answers whoever waited for it with the newer one's answer, not "cancelled" (commit aa06b99: the report
 * panel showed "cancelled: a newer comparison of the same dumps started" on the seed example).
 */
import './fake-vscode/register.ts';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BehaviourDiffs } from '../../src/vscode/diff-controller.ts';
import type { Analysis, DumpStore } from '../../src/vscode/dump-store.ts';
import type { DiffPanel } from '../../src/vscode/diff-panel.ts';
import type { TraceController } from '../../src/vscode/trace-controller.ts';
import { readSettings } from '../../src/editor/settings.ts';
import { type EngineWorker, type SpawnWorker, inProcessPort } from '../../src/worker/client.ts';
import { EngineHost } from '../../src/worker/engine-host.ts';
import type { DumpSummary, EngineRequest } from '../../src/shared/engine-protocol.ts';
import * as vscode from './fake-vscode/vscode.ts';
import { seedText } from './helpers.ts';

/** In-process workers whose `diff` answers only when `release` is called (so a newer comparison can start meanwhile). */
function heldSpawn() {
  const held: (() => void)[] = [];
  const spawn: SpawnWorker = onMessage => {
    const host = new EngineHost();
    return inProcessPort(async (r: EngineRequest) => {
      if (r.method === 'diff') await new Promise<void>(resolve => held.push(resolve));
      return host.handle(r);
    }, onMessage);
  };
  return { spawn, release: () => held.splice(0).forEach(f => f()), held: () => held.length };
}

/** A parsed version of a document: what the dump store hands the controller (the worker parses the text again). */
/** The comparisons of the extension over a fake store, with default settings and no panel or traces. */
function behaviourDiffs(store: { spawn: SpawnWorker; get(doc: vscode.FakeTextDocument): Promise<Analysis> }) {
  const settings = readSettings(() => undefined);
  return new BehaviourDiffs(
    store as unknown as DumpStore,
    () => settings,
    null as unknown as DiffPanel,
    null as unknown as TraceController,
    () => {},
  );
}

function analysis(doc: vscode.FakeTextDocument, text: string): Analysis {
  const summary: DumpSummary = {
    ruleCount: 1,
    tableCount: 1,
    chainCount: 1,
    family: 4,
    errorCount: 0,
    empty: null,
    firstErrors: [],
    bytes: text.length,
    parseMs: 0,
  };
  return {
    uri: doc.uri as never,
    version: doc.version,
    bytes: text.length,
    parseMs: 0,
    source: 'document',
    summary,
    ask: () => Promise.reject(new Error('not used')),
    sendTo: (w: EngineWorker, key: string, maxBytes: number) =>
      w.request('load', { key, file: 'x.rules', maxBytes, source: { text } }),
  };
}

describe('Compare Packet Behaviour', () => {
  it('a comparison cancelled by a newer one of the same dumps answers with the newer one (aa06b99)', async () => {
    const old = seedText();
    // The new side loses one of svc1's two endpoints: the comparison names a change.
    const changed = old.replace(/^-A KUBE-SVC-DLGPAL4ZCYSJ7UPR .*--probability.*\n/m, '');
    assert.notEqual(changed, old);
    const a = new vscode.FakeTextDocument(vscode.Uri.parse('file:///w/old.rules'), old);
    const b = new vscode.FakeTextDocument(vscode.Uri.parse('file:///w/new.rules'), changed);
    const parses = new Map<vscode.FakeTextDocument, Analysis>();
    const parse = (doc: vscode.FakeTextDocument) => {
      let x = parses.get(doc);
      if (!x || x.version !== doc.version) parses.set(doc, (x = analysis(doc, doc.getText())));
      return x;
    };
    const workers = heldSpawn();
    const store = { spawn: workers.spawn, get: (doc: vscode.FakeTextDocument) => Promise.resolve(parse(doc)) };
    vscode.workspace.textDocuments.splice(0, Infinity, a, b);
    const diffs = behaviourDiffs(store);
    try {
      const first = diffs.compare(a.uri as never, b.uri as never);
      while (workers.held() < 1) await new Promise(r => setTimeout(r, 5));
      // The new side is parsed again (another version, the same text): a newer comparison of the same dumps.
      b.edit(changed);
      const second = diffs.compare(a.uri as never, b.uri as never);
      // Both workers reached their comparison (the first one's was stopped when the second started).
      while (workers.held() < 2) await new Promise(r => setTimeout(r, 5));
      workers.release();
      const [r1, r2] = await Promise.all([first, second]);
      assert.equal(r2.ok, true, JSON.stringify(r2));
      assert.match(r2.ok ? r2.report.summary : '', /1 Service affected/);
      assert.deepEqual(r1, r2, "whoever waited for the first comparison gets the newer one's answer");
    } finally {
      vscode.workspace.textDocuments.splice(0, Infinity);
      workers.release();
      diffs.dispose();
    }
  });

  it('a comparison whose worker runs out of memory says so with the limit and is not run again (issue 12)', async () => {
    let spawned = 0;
    const spawn: SpawnWorker = (onMessage, onExit) => {
      spawned++;
      const host = new EngineHost();
      return inProcessPort(async (r: EngineRequest) => {
        if (r.method !== 'diff') return host.handle(r);
        setTimeout(() => onExit('the engine worker ran out of its 64 MB of memory', 64), 0);
        return new Promise<never>(() => {});
      }, onMessage);
    };
    const a = new vscode.FakeTextDocument(vscode.Uri.parse('file:///w/old.rules'), seedText());
    const b = new vscode.FakeTextDocument(vscode.Uri.parse('file:///w/new.rules'), seedText());
    const parses = new Map([a, b].map(d => [d, analysis(d, d.getText())]));
    const store = { spawn, get: (doc: vscode.FakeTextDocument) => Promise.resolve(parses.get(doc)!) };
    vscode.workspace.textDocuments.splice(0, Infinity, a, b);
    const diffs = behaviourDiffs(store);
    try {
      const r = await diffs.compare(a.uri as never, b.uri as never);
      assert.equal(r.ok, false);
      assert.match(
        r.ok ? '' : r.error,
        /^comparing old\.rules → new\.rules needs more than 64 MB of memory .*packetlens\.limits\.engineMemoryMB/,
      );
      // The status item, the CodeLens and the panel ask again: the same answer, no new worker to die.
      assert.deepEqual(await diffs.compare(a.uri as never, b.uri as never), r);
      assert.equal(spawned, 1);
    } finally {
      vscode.workspace.textDocuments.splice(0, Infinity);
      diffs.dispose();
    }
  });
});
