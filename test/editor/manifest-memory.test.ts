/**
 * The manifests' worker within its memory (issue 12): one worker holds every cluster's view, so a cluster it
 * runs out of memory on is said once (naming the cluster and the limit) and not read again in a crash loop,
 * the other clusters are read again in a fresh worker, and the views used least recently are dropped before
 * one more cluster fills the worker (src/vscode/manifest-memory.ts, src/vscode/manifest-workspace.ts).
 */
import './fake-vscode/register.ts';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readSettings } from '../../src/editor/settings.ts';
import { MemoryLedger, ViewFailures } from '../../src/vscode/manifest-memory.ts';
import { ManifestWorkspace } from '../../src/vscode/manifest-workspace.ts';
import { OutOfMemory, type SpawnWorker, inProcessPort } from '../../src/worker/client.ts';
import { EngineHost } from '../../src/worker/engine-host.ts';
import type { EngineRequest } from '../../src/shared/engine-protocol.ts';
import * as vscode from './fake-vscode/vscode.ts';

const SERVICE = `apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector:
    app: web
  ports:
    - port: 80
`;

describe('ViewFailures', () => {
  it('fails a cluster the worker died on while reading it, and one it died on twice while asked', async () => {
    const f = new ViewFailures();
    const never = new Promise<never>(() => {});
    void f.track('a', 'a/', true, never);
    void f.track('b', 'b/', false, never);
    const oom = new OutOfMemory(64);
    assert.deepEqual(
      f.died(oom).map(e => e.message),
      [
        "the manifests of a/ need more than 64 MB of memory (the engine's limit, packetlens.limits.engineMemoryMB): Packet Lens stopped reading them until they change or the limit is raised",
      ],
    );
    assert.ok(f.failed('a'));
    assert.equal(f.failed('b'), undefined, 'one death while asked: read again');
    void f.track('b', 'b/', false, never);
    assert.equal(f.died(oom).length, 1, 'b again: failed');
    assert.ok(f.failed('b'));
    f.clear();
    assert.equal(f.failed('a'), undefined);
  });
});

describe('MemoryLedger', () => {
  it('drops the views used least recently, never the one kept, until the heap is within the budget', () => {
    const l = new MemoryLedger();
    l.held('k1', 'r1', 100);
    l.held('k2', 'r2', 100);
    l.held('k3', 'r3', 100);
    l.used('k1');
    assert.deepEqual(l.toDrop(250, 200, 'k3'), [{ key: 'k2', root: 'r2' }]);
    assert.deepEqual(l.toDrop(500, 200, 'k3'), [{ key: 'k1', root: 'r1' }]);
    assert.deepEqual(l.toDrop(500, 200, 'k3'), [], 'the kept view stays even above the budget');
  });
});

describe('ManifestWorkspace out of memory', () => {
  it('says so once for the cluster, does not read it again, and reads the others in a fresh worker', async () => {
    let spawned = 0;
    const loads: string[] = [];
    const spawn: SpawnWorker = (onMessage, onExit) => {
      spawned++;
      const host = new EngineHost();
      return inProcessPort(async (r: EngineRequest) => {
        if (r.method === 'kubeLoad') {
          const label = (r.params as { label: string }).label;
          loads.push(label);
          if (label === 'big.yaml') {
            setTimeout(() => onExit('the engine worker ran out of its 64 MB of memory', 64), 0);
            return new Promise<never>(() => {});
          }
        }
        return host.handle(r);
      }, onMessage);
    };
    const big = new vscode.FakeTextDocument(vscode.Uri.file('/elsewhere/big.yaml'), SERVICE);
    const small = new vscode.FakeTextDocument(vscode.Uri.file('/elsewhere/small.yaml'), SERVICE);
    vscode.workspace.textDocuments.splice(0, Infinity, big, small);
    const settings = readSettings(() => undefined);
    const ws = new ManifestWorkspace(
      () => settings,
      () => {},
      spawn,
    );
    const check = (e: unknown) =>
      e instanceof Error &&
      /^the manifests of big\.yaml need more than 64 MB .*packetlens\.limits\.engineMemoryMB/.test(e.message);
    try {
      await assert.rejects(ws.viewFor(big as never), check);
      await assert.rejects(ws.viewFor(big as never), check);
      assert.deepEqual(loads, ['big.yaml'], 'not read again');
      const view = await ws.viewFor(small as never);
      assert.equal(view.summary.services, 1);
      assert.equal(spawned, 2, 'the other cluster is read in a fresh worker');
      assert.deepEqual(vscode.shownMessages.filter(m => /big\.yaml/.test(m)).length, 1, 'told once');
    } finally {
      vscode.workspace.textDocuments.splice(0, Infinity);
      ws.dispose();
    }
  });
});
