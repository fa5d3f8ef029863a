/**
 * Golden tests against the Linux kernel: every probe the oracle sent (test/fixtures/kernel/<name>/oracle.json,
 * each folder's README says how it was made) must be explained by the engine. Deterministic probes must give
 * exactly one outcome equal to the kernel's (verdict, destination after DNAT, source after SNAT, the ordered
 * rule hits); probes through `-m statistic` must have every packet the kernel sent match one of the
 * engine's outcomes, and every such outcome must carry positive probability.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NodeModel, parseIptables, tracePacket } from '../../src/engine/api.ts';
import {
  differences,
  kernelFixtures,
  neverReachedNode,
  nodeFor,
  packetFor,
  type OracleResult,
} from './oracle-harness.ts';

const fixtures = kernelFixtures();

describe('kernel oracle fixtures', () => {
  it('has at least 8 rulesets and 150 probes', () => {
    const probes = new Set(fixtures.flatMap(f => f.run.results.map(r => `${f.name}/${r.probe.name}`)));
    assert.ok(fixtures.length >= 8, `${fixtures.length} rulesets`);
    assert.ok(probes.size >= 150, `${probes.size} probes`);
  });
});

for (const f of fixtures) {
  describe(`kernel: ${f.name} (${f.run.backend}, ${f.run.kernel})`, () => {
    const rs = parseIptables(f.rules, { file: `${f.name}/rules` });
    const node = new NodeModel(nodeFor(f.run));
    const byName = new Map<string, OracleResult[]>();
    for (const r of f.run.results) byName.set(r.probe.name, [...(byName.get(r.probe.name) ?? []), r]);

    it('parses without errors', () => {
      assert.deepEqual(
        rs.diagnostics.filter(d => d.severity === 'error').map(d => `${d.range.start.line + 1}: ${d.message}`),
        [],
      );
    });

    for (const [name, results] of byName) {
      const first = results[0]!;
      if (neverReachedNode(first)) continue;
      it(name, () => {
        const t = tracePacket(rs, packetFor(f.run, first.probe), { node });
        assert.ok(t.ok, t.ok ? '' : t.error);
        const outcomes = t.trace.outcomes;
        for (const r of results) {
          const candidates = outcomes.map(o => ({ o, d: differences(r, o) }));
          const hit = candidates.find(c => c.d.length === 0);
          if (!hit) {
            const best = candidates.sort((a, b) => a.d.length - b.d.length)[0];
            assert.fail(
              `kernel: ${r.verdict} ${r.delivered_to ?? ''} (src seen ${r.src_seen ?? '-'})\n  no engine outcome agrees; closest:\n    ${best ? best.d.join('\n    ') : '(no outcomes)'}`,
            );
          }
          assert.ok(hit.o.probability > 0);
        }
        const statistic = outcomes.length > 1 && outcomes.every(o => o.assumptions.length === 0);
        if (!statistic && results.length === 1)
          assert.equal(outcomes.length, 1, `deterministic probe, ${outcomes.length} engine outcomes`);
      });
    }
  });
}
