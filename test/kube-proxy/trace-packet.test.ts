/**
 * kube-proxy's own TestTracePacket cases (kubernetes pkg/proxy/iptables/proxier_test.go; fixtures in
 * test/fixtures/kube-proxy/TestTracePacket with their provenance). kube-proxy's test tracer is a
 * simplification (see the fixture README): it lists every DNAT target reachable through statistic rules
 * and reports `masq` when KUBE-MARK-MASQ was reached on any path. The engine gives the kernel's answer per
 * outcome, so we compare the set of DNAT targets, the terminal verdict and "masquerade on some path".
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { tracePacket } from '../../src/engine/api.ts';
import { parseClean, readFixture } from '../helpers/fixtures.ts';
import type { Flow } from './synth-fixture.ts';

const dir = 'TestTracePacket';
const proxier = JSON.parse(readFixture('kube-proxy', dir, 'proxier.json')) as { packetFlow: { nodeIPs: string[] } };
const flows = JSON.parse(readFixture('kube-proxy', dir, 'flows.json')) as Flow[];
// kube-proxy's fake writes multi-word comments unquoted; iptables-restore would reject those words, and the
// parser says so, but the rules themselves read the same.
const rs = parseClean(readFixture('kube-proxy', dir, 'expected.rules'), `${dir}/expected.rules`, ['unknown-option']);
const nodeIPs = proxier.packetFlow.nodeIPs.filter(ip => !ip.includes(':'));

describe('kube-proxy TestTracePacket', () => {
  for (const f of flows) {
    it(f.name, () => {
      const r = tracePacket(
        rs,
        { protocol: (f.protocol || 'tcp').toLowerCase(), src: f.sourceIP, dst: f.destIP, dport: f.destPort },
        { node: { addresses: nodeIPs } },
      );
      assert.ok(r.ok, r.ok ? '' : r.error);
      const outcomes = r.trace.outcomes;
      const dnats = outcomes.map(o => o.dnat).filter((d): d is string => d !== null);
      let got: string;
      if (dnats.length) got = [...new Set(dnats)].sort().join(', ');
      else if (outcomes.every(o => o.disposition === 'dropped')) got = 'DROP';
      else if (outcomes.every(o => o.disposition === 'rejected')) got = 'REJECT';
      else if (
        outcomes.every(
          o => o.disposition === 'local' && o.steps.some(s => s.verdict === 'ACCEPT' && s.chain === 'KUBE-NODEPORTS'),
        )
      )
        got = 'ACCEPT';
      else got = '';
      assert.equal(got, f.output.split(', ').sort().join(', '));
      assert.equal(
        outcomes.some(o => o.masquerade),
        f.masq,
        'masquerade on some path',
      );
    });
  }
});
