/**
 * The worker's request order (src/worker/request-queue.ts): what someone waits for on screen (a hover, the
 * visible lines' CodeLens, a trace) is served before queued whole-dump work (outline, folds, diagnostics,
 * node hints); everything else, and anything that changes a parse, stays in arrival order.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EngineRequest, EngineResponse, Method } from '../../src/shared/engine-protocol.ts';
import { requestQueue } from '../../src/worker/request-queue.ts';

/** Delivers `methods` as one batch (as a worker gets messages that queued while it was busy); returns the order served. */
async function served(methods: Method[]): Promise<string[]> {
  const order: string[] = [];
  const replies: number[] = [];
  let pending: (() => void)[] = [];
  const receive = requestQueue(
    req => {
      order.push(req.method);
      return Promise.resolve({ id: req.id, ok: true, result: null } as EngineResponse);
    },
    r => replies.push(r.id),
    f => pending.push(f),
  );
  methods.forEach((method, id) => receive({ id, method, params: {} } as EngineRequest));
  while (pending.length) {
    const run = pending;
    pending = [];
    for (const f of run) f();
    await Promise.resolve();
  }
  await new Promise(r => setTimeout(r, 0));
  assert.equal(replies.length, methods.length, 'every request is answered');
  return order;
}

describe('worker request order', () => {
  it('serves a hover and the visible CodeLens before the outline, folds and diagnostics queued ahead of them', async () => {
    assert.deepEqual(await served(['folding', 'outline', 'diagnostics', 'chainLenses', 'nodeHints', 'hover']), [
      'chainLenses',
      'hover',
      'folding',
      'outline',
      'diagnostics',
      'nodeHints',
    ]);
  });

  it('keeps arrival order otherwise', async () => {
    const batch: Method[] = ['hover', 'trace', 'folding', 'outline', 'suggest'];
    assert.deepEqual(await served(['hover', 'trace', 'folding', 'outline']), ['hover', 'trace', 'folding', 'outline']);
    assert.deepEqual(await served(batch), ['hover', 'trace', 'suggest', 'folding', 'outline']);
  });

  it('never moves a request past a load, an appended piece or a drop', async () => {
    assert.deepEqual(await served(['outline', 'append', 'load', 'hover']), ['outline', 'append', 'load', 'hover']);
    assert.deepEqual(await served(['diagnostics', 'load', 'chainLenses']), ['diagnostics', 'load', 'chainLenses']);
    assert.deepEqual(await served(['folding', 'drop', 'hover']), ['folding', 'drop', 'hover']);
  });
});
