/**
 * seed-003 (examples/seed-003, /work/shared/seeds) traced end to end in kube-proxy's nftables mode: the same
 * endpoints and shares as iptables mode (the seed's own answer: webpod1 10.10.4.12 and webpod2 10.10.1.11 at
 * 50 % each), reached through kube-proxy's nft chains and maps.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { buildClusterModel, proxyMode, readManifests, traceFromManifests } from '../../src/engine/api.ts';
import { readFixture } from '../helpers/fixtures.ts';

function model(dir: string) {
  const root = join('examples', dir);
  const files = readdirSync(root)
    .filter(f => /\.ya?ml$/.test(f))
    .map(f => ({ file: join(root, f), text: readFileSync(join(root, f), 'utf8') }));
  return buildClusterModel(readManifests(files));
}

describe('seed 003 in nftables mode', () => {
  const m = model('seed-003');
  it('is the ruleset the kernel loaded in test/fixtures/kernel-nft/kube-proxy-synth (nft -f accepted it)', () => {
    // That fixture's ruleset.nft was written by this synthesizer and loaded with the real nft -f; its probes'
    // kernel results are checked against the engine by test/nftables/kernel-nft.test.ts.
    const rules = proxyMode('nftables')!.synthesize(m, { nodeName: 'myk8s-worker' }).rules;
    assert.equal(rules, readFixture('kernel-nft', 'kube-proxy-synth', 'ruleset.nft'));
  });

  it("--format list is the kernel's own nft list ruleset of it, up to element order and wrapping", () => {
    // Each `elements = { … }` block becomes its sorted element list: the kernel lists hash sets in hash order.
    const norm = (text: string) =>
      text
        .replace(/elements = \{([^}]*)\}/g, (_m, body: string) => {
          const items = body
            .split(/,\s*\n?\s*/)
            .map(x => x.trim())
            .filter(Boolean)
            .sort();
          return `elements = { ${items.join(', ')} }`;
        })
        .trimEnd();
    const out = proxyMode('nftables')!.synthesize(m, { nodeName: 'myk8s-worker' }).render('list', '');
    assert.equal(norm(out), norm(readFixture('kernel-nft', 'kube-proxy-synth', 'ruleset.txt')));
  });

  it('LoadBalancer 172.18.255.200:80 → webpod1/webpod2 at 50 % each, through service-ips and numgen', () => {
    const r = traceFromManifests(
      m,
      { protocol: 'tcp', src: '172.18.0.100', dst: '172.18.255.200', dport: 80 },
      { mode: 'nftables' },
    );
    assert.ok(r.ok, r.ok ? '' : r.error);
    assert.equal(r.value.mode, 'nftables');
    assert.equal(r.value.node, 'myk8s-worker');
    assert.deepEqual(
      r.value.trace.outcomes.map((o, i) => [
        o.probabilityExact,
        o.disposition,
        o.dnat,
        o.masquerade,
        r.value.destinations[i]!.pod,
      ]),
      [
        ['1/2', 'forwarded', '10.10.1.11:80', true, 'default/webpod2'],
        ['1/2', 'forwarded', '10.10.4.12:80', true, 'default/webpod1'],
      ],
    );
    const chains = new Set(r.value.trace.outcomes.flatMap(o => o.steps.map(s => s.chain)));
    for (const c of ['nat-prerouting', 'services', 'mark-for-masquerade', 'masquerading'])
      assert.ok(chains.has(c), `${c} in ${[...chains].join(', ')}`);
    assert.ok(
      [...chains].some(c => /^external-[A-Z2-7]{8}-default\/svc1\/tcp\/svc1-webport$/.test(c)),
      [...chains].join(', '),
    );
    assert.ok(
      [...chains].some(c => /^endpoint-[A-Z2-7]{8}-default\/svc1\/tcp\/svc1-webport__10\.10\.1\.11\/80$/.test(c)),
    );
    assert.match(r.value.rules, /add map ip kube-proxy service-ips/);
  });

  it('ClusterIP from a pod: the same two endpoints at 50 % each', () => {
    const r = traceFromManifests(
      m,
      { protocol: 'tcp', src: '10.10.4.12', dst: '10.200.1.11', dport: 80 },
      { mode: 'nftables' },
    );
    assert.ok(r.ok, r.ok ? '' : r.error);
    assert.deepEqual(r.value.trace.outcomes.map(o => [o.probabilityExact, o.dnat]).sort(), [
      ['1/2', '10.10.1.11:80'],
      ['1/2', '10.10.4.12:80'],
    ]);
  });
});

describe('manifests that configure nftables mode', () => {
  const root = join('examples', 'seed-003');
  const seed = readdirSync(root)
    .filter(f => /\.ya?ml$/.test(f))
    .map(f => ({ file: join(root, f), text: readFileSync(join(root, f), 'utf8') }));
  const kpc = `apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: nftables
iptables:
  masqueradeBit: 14
nftables:
  masqueradeBit: 15
  masqueradeAll: true
`;
  const cidr = `apiVersion: networking.k8s.io/v1
kind: ServiceCIDR
metadata:
  name: kubernetes
spec:
  cidrs:
  - 10.200.0.0/16
`;
  const m = buildClusterModel(
    readManifests([{ file: 'kpc.yaml', text: kpc }, { file: 'cidr.yaml', text: cidr }, ...seed]),
  );

  it('KubeProxyConfiguration mode: nftables selects it, with its nftables: masqueradeBit and masqueradeAll', () => {
    assert.equal(m.kubeProxy.mode, 'nftables');
    assert.equal(m.kubeProxy.masqueradeBit, 15);
    assert.equal(m.kubeProxy.masqueradeAll, true);
    // The ClusterIP is predicted from the ServiceCIDR below.
    const cip = m.servicePorts[0]!.clusterIP!;
    const r = traceFromManifests(m, { protocol: 'tcp', src: '10.10.4.12', dst: cip, dport: 80 });
    assert.ok(r.ok, r.ok ? '' : r.error);
    assert.equal(r.value.mode, 'nftables');
    assert.match(r.value.rules, /mark set mark or 0x008000/);
    // masqueradeAll: every ClusterIP connection is marked, the pod's own included.
    assert.ok(r.value.rules.includes(`ip daddr ${cip} jump mark-for-masquerade`));
    assert.equal(r.value.trace.outcomes.length, 2);
    assert.ok(r.value.trace.outcomes.every(o => o.masquerade));
  });

  it('ServiceCIDR objects give the ranges cluster-ips-check drops unallocated addresses of', () => {
    assert.deepEqual(m.serviceCIDRs, ['10.200.0.0/16']);
    const rules = proxyMode('nftables')!.synthesize(m, { nodeName: 'myk8s-worker' }).rules;
    assert.match(rules, /cluster-ips-check ip daddr \{ 10\.200\.0\.0\/16 \} drop/);
    const r = traceFromManifests(m, { protocol: 'tcp', src: '10.10.4.12', dst: '10.200.7.7', dport: 80 });
    assert.ok(r.ok, r.ok ? '' : r.error);
    assert.deepEqual(
      r.value.trace.outcomes.map(o => o.disposition),
      ['dropped'],
    );
  });
});
