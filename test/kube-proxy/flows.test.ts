/**
 * kube-proxy's packet-flow tests (runPacketFlowTests in kubernetes pkg/proxy/iptables/proxier_test.go),
 * run end to end through packetlens: the fixture's Services and EndpointSlices → synthesized node rules
 * (as iptables-save prints them, with kube-proxy's jump rules) → the netfilter engine. kube-proxy's tracer
 * lists every DNAT target reachable through statistic rules and reports `masq` when KUBE-MARK-MASQ was
 * reached on any path; the engine answers per outcome, so we compare the set of DNAT targets, the terminal
 * verdict, and "masqueraded on some path". Packets from a node address or 127.0.0.1 are traced as the
 * node sending them (OUTPUT), which is how the kernel sees them.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseIptables, tracePacket } from '../../src/engine/api.ts';
import { renderNodeSave } from '../../src/engine/kube/modes/iptables/render.ts';
import { type Flow, type KubeFixture, kubeFixtures } from './synth-fixture.ts';

function expectedOf(f: Flow): string {
  return f.output.split(', ').filter(Boolean).sort().join(', ');
}

function trace(fx: KubeFixture, f: Flow) {
  const rs = parseIptables(renderNodeSave(fx.synth()), { file: `${fx.name}.rules` });
  const errors = rs.diagnostics.filter(d => d.severity === 'error');
  assert.deepEqual(
    errors.map(d => d.message),
    [],
  );
  const v6 = f.destIP.includes(':');
  const nodeIPs = fx.proxier.packetFlow.nodeIPs.filter(ip => ip.includes(':') === v6);
  const local = nodeIPs.includes(f.sourceIP) || f.sourceIP === '127.0.0.1' || f.sourceIP === '::1';
  const r = tracePacket(
    rs,
    {
      protocol: (f.protocol || 'tcp').toLowerCase(),
      src: f.sourceIP,
      dst: f.destIP,
      dport: f.destPort,
      from: local ? 'local' : 'outside',
    },
    // kube-proxy sets route_localnet=1 when localhost NodePorts are enabled.
    { node: { addresses: nodeIPs, routeLocalnet: fx.proxier.localhostNodePorts }, explain: false },
  );
  assert.ok(r.ok, r.ok ? '' : r.error);
  return r.trace;
}

function verdict(t: ReturnType<typeof trace>): string {
  const dnats = t.outcomes.map(o => o.dnat).filter((d): d is string => d !== null);
  if (dnats.length) return [...new Set(dnats)].sort().join(', ');
  if (t.outcomes.every(o => o.disposition === 'dropped' && o.steps.length > 0)) return 'DROP';
  if (t.outcomes.every(o => o.disposition === 'rejected')) return 'REJECT';
  if (
    t.outcomes.every(
      o => o.disposition === 'local' && o.steps.some(s => s.verdict === 'ACCEPT' && s.chain === 'KUBE-NODEPORTS'),
    )
  )
    return 'ACCEPT';
  return '';
}

for (const fx of kubeFixtures().filter(x => x.flows.length > 0 && x.expected === null)) {
  describe(`kube-proxy ${fx.name}`, () => {
    for (const f of fx.flows) {
      it(f.name, () => {
        const t = trace(fx, f);
        assert.equal(
          verdict(t),
          expectedOf(f),
          `outcomes: ${t.outcomes.map(o => `${o.disposition} ${o.dnat ?? ''} ${o.reason ?? ''}`).join(' | ')}`,
        );
        assert.equal(
          t.outcomes.some(o => o.masquerade || o.steps.some(s => s.chain === 'KUBE-MARK-MASQ')),
          f.masq,
          'masquerade on some path',
        );
      });
    }
  });
}
