/**
 * End-to-end traces from the examples' manifests. Seed 003 (../shared/seeds/003): an outside client at
 * 172.18.0.100 curls the MetalLB address 172.18.255.200; myk8s-worker announces it (as the seed observed)
 * and forwards to webpod1/webpod2 at 50% each, masqueraded to the node address; the chain names are the
 * seed's. Seed 000: NodePort 30042 reaches the nginx pod at 10.100.119.7.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { traceFromManifests } from '../../src/engine/kube/e2e.ts';
import { readManifests } from '../../src/engine/kube/manifest/read.ts';
import { buildClusterModel } from '../../src/engine/kube/model/build.ts';
import { synthesizeIptables } from '../../src/engine/kube/modes/iptables/synth.ts';
import { renderNodeSave } from '../../src/engine/kube/modes/iptables/render.ts';
import { ROOT } from '../helpers/fixtures.ts';

function model(dir: string) {
  const d = join(ROOT, 'examples', dir);
  return buildClusterModel(
    readManifests(
      readdirSync(d)
        .filter(f => f.endsWith('.yaml'))
        .map(f => ({ file: f, text: readFileSync(join(d, f), 'utf8') })),
    ),
  );
}

describe('seed 003 from manifests', () => {
  const m = model('seed-003');

  it('reads the manifests without diagnostics and predicts MetalLB addresses in order', () => {
    assert.deepEqual(m.diagnostics, []);
    assert.deepEqual(
      m.servicePorts.map(sp => [sp.servicePortName, sp.lbIPs[0]]),
      [
        ['default/svc1:svc1-webport', '172.18.255.200'],
        ['default/svc2:svc2-webport', '172.18.255.201'],
        ['default/svc3:svc3-webport', '172.18.255.202'],
      ],
    );
  });

  it('writes the seed chain names and rules for myk8s-worker', () => {
    const text = renderNodeSave(synthesizeIptables(m, { nodeName: 'myk8s-worker' }));
    for (const line of [
      '-A KUBE-SERVICES -d 172.18.255.200/32 -p tcp -m comment --comment "default/svc1:svc1-webport loadbalancer IP" -m tcp --dport 80 -j KUBE-EXT-DLGPAL4ZCYSJ7UPR',
      '-A KUBE-EXT-DLGPAL4ZCYSJ7UPR -m comment --comment "masquerade traffic for default/svc1:svc1-webport external destinations" -j KUBE-MARK-MASQ',
      '-A KUBE-EXT-DLGPAL4ZCYSJ7UPR -j KUBE-SVC-DLGPAL4ZCYSJ7UPR',
      '-A KUBE-SVC-DLGPAL4ZCYSJ7UPR -m comment --comment "default/svc1:svc1-webport -> 10.10.1.11:80" -m statistic --mode random --probability 0.50000000000 -j KUBE-SEP-ZNBEHD3XV5ZTBRAT',
      '-A KUBE-SVC-DLGPAL4ZCYSJ7UPR -m comment --comment "default/svc1:svc1-webport -> 10.10.4.12:80" -j KUBE-SEP-W6APR3NU75YJK7VG',
      '-A KUBE-SEP-ZNBEHD3XV5ZTBRAT -s 10.10.1.11/32 -m comment --comment "default/svc1:svc1-webport" -j KUBE-MARK-MASQ',
      '-A KUBE-SEP-ZNBEHD3XV5ZTBRAT -p tcp -m comment --comment "default/svc1:svc1-webport" -m tcp -j DNAT --to-destination 10.10.1.11:80',
      '-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN',
      '-A KUBE-POSTROUTING -j MARK --set-xmark 0x4000/0x0',
      '-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE --random-fully',
    ]) {
      assert.ok(text.split('\n').includes(line), `missing: ${line}`);
    }
  });

  it('traces 172.18.0.100 → 172.18.255.200:80 via myk8s-worker to webpod1/webpod2 at 50% each, masqueraded', () => {
    const r = traceFromManifests(m, { protocol: 'tcp', src: '172.18.0.100', dst: '172.18.255.200', dport: 80 });
    assert.ok(r.ok, r.ok ? '' : r.error);
    assert.equal(r.value.node, 'myk8s-worker');
    assert.match(
      r.value.hops[1]!.reason,
      /sorted by sha256\(node \+ "#172\.18\.255\.200"\) are myk8s-worker, myk8s-worker2, myk8s-worker3 \(myk8s-control-plane excluded/,
    );
    const rows = r.value.trace.outcomes.map((o, i) => [
      o.probabilityExact,
      o.disposition,
      o.dnat,
      o.snat,
      o.masquerade,
      r.value.destinations[i]!.pod,
      r.value.destinations[i]!.node,
    ]);
    assert.deepEqual(rows, [
      ['1/2', 'forwarded', '10.10.1.11:80', '172.18.0.4', true, 'default/webpod2', 'myk8s-worker2'],
      ['1/2', 'forwarded', '10.10.4.12:80', '172.18.0.4', true, 'default/webpod1', 'myk8s-worker'],
    ]);
  });

  it('keeps the client address for a pod in the cluster pod CIDR and stays on its node', () => {
    const r = traceFromManifests(m, { protocol: 'tcp', src: '10.10.4.12', dst: '172.18.255.201', dport: 80 });
    assert.ok(r.ok, r.ok ? '' : r.error);
    assert.equal(r.value.node, 'myk8s-worker');
    assert.deepEqual(r.value.trace.outcomes.map(o => [o.dnat, o.masquerade]).sort(), [
      ['10.10.1.11:80', true],
      ['10.10.4.12:80', true],
    ]);
  });
});

describe('seed 000 from manifests', () => {
  const m = model('seed-000');
  it('sends NodePort 30042 on node1 to nginx at 10.100.119.7:80', () => {
    assert.deepEqual(m.diagnostics, []);
    const r = traceFromManifests(m, { protocol: 'tcp', src: '192.168.10.99', dst: '192.168.10.11', dport: 30042 });
    assert.ok(r.ok, r.ok ? '' : r.error);
    assert.deepEqual(
      r.value.trace.outcomes.map(o => [o.probabilityExact, o.disposition, o.dnat, o.masquerade]),
      [['1', 'forwarded', '10.100.119.7:80', true]],
    );
    assert.deepEqual(
      r.value.trace.outcomes[0]!.steps.map(s => s.chain)
        .filter(c => c.startsWith('KUBE-'))
        .slice(0, 5)
        .map(c => c.replace(/-[A-Z2-7]{16}$/, '')),
      ['KUBE-SERVICES', 'KUBE-NODEPORTS', 'KUBE-EXT', 'KUBE-MARK-MASQ', 'KUBE-EXT'],
    );
  });
});
