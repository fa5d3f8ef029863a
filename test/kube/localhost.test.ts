/**
 * Issue 12, deliverable 6: a packet from 127.0.0.1 in `trace --manifests` is the node itself, with
 * kube-proxy's localhost-NodePort behaviour. Truth: kube-proxy's TestNodePorts packet-flow cases
 * (pkg/proxy/iptables/proxier_test.go, copied in test/fixtures/kube-proxy/TestNodePorts-*): "localhost to
 * nodePort gets masqueraded" (127.0.0.1 → 127.0.0.1:NodePort reaches the endpoints, masqueraded) with
 * localhostNodePorts on; "localhost to nodePort is ignored" (no DNAT) with it off. kube-proxy sets
 * route_localnet=1 only when it is on, so the kernel lets the 127.0.0.1 source leave by another interface.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readManifests } from '../../src/engine/kube/manifest/read.ts';
import { buildClusterModel } from '../../src/engine/kube/model/build.ts';
import { traceFromManifests } from '../../src/engine/kube/e2e.ts';
import type { PacketInput } from '../../src/engine/api.ts';
import { ROOT } from '../helpers/fixtures.ts';

const DIR = join(ROOT, 'examples', 'app-no-nodes');
const app = ['deployment.yaml', 'services.yaml'].map(f => ({ file: f, text: readFileSync(join(DIR, f), 'utf8') }));
const kpc = (on: boolean) => ({
  file: 'kpc.yaml',
  text: [
    'apiVersion: kubeproxy.config.k8s.io/v1alpha1',
    'kind: KubeProxyConfiguration',
    'mode: iptables',
    'iptables:',
    `  localhostNodePorts: ${on}`,
  ].join('\n'),
});
const PODS = ['10.244.0.2:8080', '10.244.0.3:8080', '10.244.0.4:8080'];

function trace(on: boolean, input: PacketInput) {
  const model = buildClusterModel(readManifests([...app, kpc(on)]));
  const r = traceFromManifests(model, input);
  assert.ok(r.ok, r.ok ? '' : r.error);
  return r.value;
}

describe('trace --manifests: 127.0.0.1 is the node itself', () => {
  it('localhostNodePorts on: 127.0.0.1 → 127.0.0.1:NodePort reaches the endpoints, masqueraded (kube-proxy "localhost to nodePort gets masqueraded")', () => {
    const v = trace(true, { protocol: 'tcp', src: '127.0.0.1', dst: '127.0.0.1', dport: 30000 });
    assert.equal(v.trace.from, 'local');
    assert.equal(v.hops[0]!.name, 'node node-1');
    assert.deepEqual(
      v.trace.outcomes.map(o => [o.dnat, o.masquerade]),
      PODS.map(p => [p, true]),
    );
    assert.ok(!v.trace.outcomes.some(o => o.disposition === 'dropped'));
  });

  it('localhostNodePorts off: the NodePort is not served on localhost (kube-proxy "localhost to nodePort is ignored")', () => {
    const v = trace(false, { protocol: 'tcp', src: '127.0.0.1', dst: '127.0.0.1', dport: 30000 });
    assert.equal(v.trace.from, 'local');
    assert.deepEqual(
      v.trace.outcomes.map(o => [o.disposition, o.dnat, o.masquerade]),
      [['local', null, false]],
    );
  });

  it('127.0.0.1 → the node address: a process on that node, not a martian from eth0', () => {
    const v = trace(false, { protocol: 'tcp', src: '127.0.0.1', dst: '172.18.0.2', dport: 30000 });
    assert.equal(v.trace.from, 'local');
    assert.deepEqual(
      v.trace.outcomes.map(o => o.dnat),
      PODS,
    );
    assert.ok(!v.trace.outcomes.some(o => /martian/.test(o.reason ?? '')));
  });
});
