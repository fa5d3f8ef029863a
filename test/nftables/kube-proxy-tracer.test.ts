/**
 * kube-proxy's own nftables tracer tests (kubernetes/kubernetes pkg/proxy/nftables/helpers_test.go,
 * TestTracePacketV4 / TestTracePacketV6), fixtures in test/fixtures/kube-proxy-nft (see its README for how
 * kube-proxy's tracer outputs map onto packetlens outcomes).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type TraceOutcome, parseRuleset, tracePacket } from '../../src/engine/api.ts';
import { readFixture } from '../helpers/fixtures.ts';

interface Case {
  name: string;
  sourceIP: string;
  destIP: string;
  destPort: number;
  output: string;
  masq: boolean;
}

const cases = JSON.parse(readFixture('kube-proxy-nft', 'cases.json')) as { nodeIPs: string[]; v4: Case[]; v6: Case[] };

function outputOf(o: TraceOutcome): string {
  if (o.disposition === 'rejected') return 'REJECT';
  if (o.disposition === 'dropped' && o.steps.at(-1)?.verdict === 'drop') return 'DROP';
  return o.dnat ?? '';
}

for (const [family, file] of [
  ['v4', 'trace-packet-v4.nft'],
  ['v6', 'trace-packet-v6.nft'],
] as const) {
  describe(`kube-proxy TestTracePacket${family.toUpperCase()}`, () => {
    const parsed = parseRuleset(readFixture('kube-proxy-nft', file), { file });
    it('reads the rules without errors', () => {
      assert.equal(parsed.format, 'nft-script');
      assert.deepEqual(
        parsed.diagnostics.filter(d => d.severity === 'error').map(d => d.message),
        [],
      );
    });
    for (const c of cases[family]) {
      it(c.name, () => {
        const r = tracePacket(
          parsed.ruleset,
          { protocol: 'tcp', src: c.sourceIP, dst: c.destIP, dport: c.destPort, from: 'outside', in: 'eth0' },
          { node: { addresses: cases.nodeIPs, uplink: 'eth0' } },
        );
        assert.ok(r.ok, r.ok ? '' : r.error);
        const outputs = [...new Set(r.trace.outcomes.map(outputOf))].sort();
        assert.equal(outputs.join(', '), c.output);
        const masq = r.trace.outcomes.some(o => o.masquerade || (Number(o.packet.mark) & 0x4000) !== 0);
        assert.equal(masq, c.masq);
      });
    }
  });
}
