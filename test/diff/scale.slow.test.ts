/**
 * The benchmark's scenario at test size: a kube-proxy dump from bench/generate.ts and the same dump after 10
 * of its Services lost their last endpoint (bench/diff-measure.ts derives it). The report must name exactly
 * those 10 Services, and only the Services' own chains may differ.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { diffRulesets, parseIptables } from '../../src/engine/api.ts';
import { dropLastEndpoint } from '../../bench/diff-measure.ts';
import { generateKubeProxyDump, serviceAt } from '../../bench/generate.ts';

describe('diff at benchmark shape (300 Services × 4 endpoints, 10 changed)', () => {
  it('names exactly the changed Services', () => {
    const chosen = [0, 17, 42, 99, 150, 151, 200, 233, 298, 299];
    const oldText = generateKubeProxyDump(300, 4);
    const newText = dropLastEndpoint(oldText, chosen, 4);
    const r = diffRulesets(
      parseIptables(oldText, { file: 'old', lazy: true }),
      parseIptables(newText, { file: 'new', lazy: true }),
      { node: { addresses: ['172.18.0.4'] } },
    );
    assert.ok(r.ok);
    const report = r.report;
    assert.deepEqual(report.services, chosen.map(i => serviceAt(i, 4).name).sort());
    // Per Service: its KUBE-SVC chain is rewritten and one KUBE-SEP chain is gone.
    assert.deepEqual(report.changedChains.map(c => c.change).sort(), [
      ...Array(10).fill('removed'),
      ...Array(10).fill('rules'),
    ]);
    for (const c of report.changes) {
      const s = serviceAt(
        chosen.find(i => serviceAt(i, 4).name === (c.group as { name: string }).name)!,
        4,
      );
      assert.equal(c.class.extent.dst, s.clusterIP);
      assert.deepEqual(
        c.new
          .filter(f => f.dnat)
          .map(f => f.dnat)
          .sort(),
        s.endpoints
          .slice(0, 3)
          .map(e => `${e}:8080`)
          .sort(),
      );
    }
  });
});
