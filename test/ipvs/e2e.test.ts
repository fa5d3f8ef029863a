/**
 * End-to-end traces in IPVS mode from the seed-002 example (kind, kubeProxyMode ipvs; two app=X pods,
 * one per worker): PREROUTING (nat KUBE-SERVICES) → filter INPUT (KUBE-IPVS-FILTER) → IPVS at LOCAL_IN →
 * LOCAL_OUT → POSTROUTING, with the scheduler's decision on every outcome. The rr split is 1/2 each; the
 * sh choice for a client follows from hash_32 of its address (bucket values hand-computed in
 * schedulers.test.ts: 10.244.1.2 → 77, 172.18.0.100 → 87, both odd → the second real server).
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { probabilitySums } from '../../src/engine/eval/trace.ts';
import { type ManifestTrace, traceFromManifests } from '../../src/engine/kube/e2e.ts';
import { readManifests } from '../../src/engine/kube/manifest/read.ts';
import { buildClusterModel } from '../../src/engine/kube/model/build.ts';
import type { PacketInput } from '../../src/engine/eval/packet-spec.ts';
import { ROOT } from '../helpers/fixtures.ts';

function model(extra = '') {
  const d = join(ROOT, 'examples', 'seed-002');
  const files = readdirSync(d)
    .filter(f => f.endsWith('.yaml'))
    .map(f => ({ file: f, text: readFileSync(join(d, f), 'utf8') }));
  return buildClusterModel(readManifests(extra ? [...files, { file: 'extra.yaml', text: extra }] : files));
}

function trace(
  m: ReturnType<typeof model>,
  input: PacketInput,
  opts: Parameters<typeof traceFromManifests>[2] = {},
): ManifestTrace {
  const r = traceFromManifests(m, input, opts);
  assert.ok(r.ok, r.ok ? '' : r.error);
  return r.value;
}

const rows = (v: ManifestTrace) =>
  v.trace.outcomes.map((o, i) => [o.probabilityExact, o.disposition, o.dnat, o.snat, v.destinations[i]!.pod]);
const SH = 'kind: KubeProxyConfiguration\napiVersion: kubeproxy.config.k8s.io/v1alpha1\nipvs:\n  scheduler: sh\n';

describe('IPVS mode end to end (seed 002)', () => {
  const m = model();

  it('pod → ClusterIP with rr: each pod 1/2; the pod reaching itself is hairpin-masqueraded (KUBE-LOOP-BACK)', () => {
    const v = trace(m, { protocol: 'tcp', src: '10.244.1.2', dst: '10.96.0.11', dport: 80 });
    assert.equal(v.mode, 'ipvs');
    assert.equal(v.node, 'ipvs-worker');
    assert.deepEqual(rows(v), [
      ['1/2', 'forwarded', '10.244.1.2:80', '172.18.0.3', 'default/app-x-1'],
      ['1/2', 'forwarded', '10.244.2.2:80', null, 'default/app-x-2'],
    ]);
    const [self, other] = v.trace.outcomes;
    assert.ok(
      self!.steps.some(s => s.chain === 'KUBE-POSTROUTING' && s.verdict.startsWith('MASQUERADE')),
      'hairpin masquerade',
    );
    assert.deepEqual(
      other!.steps.map(s => `${s.hook} ${s.table} ${s.chain} ${s.verdict}`),
      [
        'PREROUTING nat PREROUTING jump KUBE-SERVICES',
        'PREROUTING nat KUBE-SERVICES jump KUBE-NODE-PORT',
        'PREROUTING nat KUBE-SERVICES ACCEPT',
        'INPUT filter INPUT jump KUBE-IPVS-FILTER',
        'INPUT filter KUBE-IPVS-FILTER RETURN',
        'INPUT filter INPUT jump KUBE-PROXY-FIREWALL',
        'INPUT filter INPUT jump KUBE-NODE-PORT',
        'OUTPUT filter OUTPUT jump KUBE-IPVS-OUT-FILTER',
        'POSTROUTING nat POSTROUTING jump KUBE-POSTROUTING',
        'POSTROUTING nat KUBE-POSTROUTING RETURN',
      ],
    );
    for (const o of v.trace.outcomes) {
      assert.ok(
        o.notes.some(n => n.startsWith('IPVS TCP 10.96.0.11:80 (LOCAL_IN, priority 99): rr (ip_vs_rr.c)')),
        'the scheduler is explained',
      );
      assert.ok(o.notes.some(n => /→ 10\.244\.\d\.2:80 \(probability 1\/2\)$/.test(n)));
      assert.ok(
        o.events.some(
          e => e.kind === 'routing' && /IPVS sends the packet on to 10\.244\.\d\.2 through LOCAL_OUT/.test(e.reason),
        ),
      );
    }
    assert.deepEqual(probabilitySums(v.trace), ['1']);
    assert.match(v.ipvsadm ?? '', /^TCP {2}10\.96\.0\.11:80 rr$/m);
  });

  it('outside client → NodePort: 1/2 each, masqueraded to the node (KUBE-NODE-PORT-TCP marks)', () => {
    const v = trace(m, { protocol: 'tcp', src: '172.18.0.100', dst: '172.18.0.3', dport: 30080 });
    assert.deepEqual(rows(v), [
      ['1/2', 'forwarded', '10.244.1.2:80', '172.18.0.3', 'default/app-x-1'],
      ['1/2', 'forwarded', '10.244.2.2:80', '172.18.0.3', 'default/app-x-2'],
    ]);
    assert.ok(
      v.trace.outcomes[0]!.steps.some(s => s.chain === 'KUBE-NODE-PORT' && s.verdict === 'jump KUBE-MARK-MASQ'),
    );
  });

  it('the node itself → ClusterIP is scheduled at LOCAL_OUT', () => {
    const v = trace(m, { protocol: 'tcp', src: '172.18.0.3', dst: '10.96.0.11', dport: 80 });
    assert.equal(v.trace.from, 'local');
    assert.deepEqual(
      rows(v).map(r => [r[0], r[1], r[2]]),
      [
        ['1/2', 'output', '10.244.1.2:80'],
        ['1/2', 'output', '10.244.2.2:80'],
      ],
    );
    assert.ok(v.trace.outcomes[0]!.notes.some(n => n.includes('(LOCAL_OUT, priority -98)')));
  });

  it('a port the Service does not have is refused by KUBE-IPVS-FILTER before IPVS', () => {
    const v = trace(m, { protocol: 'tcp', src: '10.244.1.2', dst: '10.96.0.11', dport: 81 });
    assert.deepEqual(
      v.trace.outcomes.map(o => [o.disposition, o.rejectWith, o.steps.at(-1)!.chain]),
      [['rejected', 'icmp-port-unreachable', 'KUBE-IPVS-FILTER']],
    );
  });

  it('packets that do not start a connection are not scheduled', () => {
    const ack = trace(m, { protocol: 'tcp', src: '10.244.1.2', dst: '10.96.0.11', dport: 80, tcpFlags: 'ACK' });
    assert.deepEqual(
      ack.trace.outcomes.map(o => o.disposition),
      ['local'],
    );
    assert.ok(ack.trace.outcomes[0]!.events.some(e => e.kind === 'note' && /on its SYN only/.test(e.text)));
    const est = trace(m, { protocol: 'tcp', src: '10.244.1.2', dst: '10.96.0.11', dport: 80, ctstate: 'ESTABLISHED' });
    assert.deepEqual(
      est.trace.outcomes.map(o => o.disposition),
      ['unknown'],
    );
    assert.match(est.trace.outcomes[0]!.reason ?? '', /IPVS connection entry/);
  });

  it('a Service without endpoints: IPVS answers ICMP port unreachable (ip_vs_leave)', () => {
    const empty = model(
      'apiVersion: v1\nkind: Service\nmetadata: {name: nobody, namespace: default}\nspec:\n  clusterIP: 10.96.0.50\n  selector: {app: Y}\n  ports: [{port: 80}]\n',
    );
    const v = trace(empty, { protocol: 'tcp', src: '10.244.1.2', dst: '10.96.0.50', dport: 80 });
    assert.deepEqual(
      v.trace.outcomes.map(o => [o.disposition, o.rejectWith]),
      [['rejected', 'icmp-port-unreachable']],
    );
    assert.match(
      v.trace.outcomes[0]!.reason ?? '',
      /the virtual service has no real servers: IPVS answers ICMP port unreachable \(ip_vs_core\.c ip_vs_leave\)/,
    );
  });

  it('the model mode can be overridden: the same manifests traced in iptables mode', () => {
    const v = trace(m, { protocol: 'tcp', src: '10.244.1.2', dst: '10.96.0.11', dport: 80 }, { mode: 'iptables' });
    assert.equal(v.mode, 'iptables');
    assert.equal(v.ipvsadm, null);
    assert.ok(v.trace.outcomes[0]!.steps.some(s => s.chain.startsWith('KUBE-SVC-')));
  });
});

describe('IPVS mode with the sh scheduler', () => {
  const m = model(SH);

  it('takes the scheduler from the KubeProxyConfiguration', () => {
    assert.equal(m.kubeProxy.ipvsScheduler, 'sh');
    assert.equal(m.kubeProxy.mode, 'ipvs');
  });

  it('names the exact pod for a client when the listed real-server order is taken as the kernel order', () => {
    // 10.244.1.2 hashes to bucket 77; the weight-1 table alternates [10.244.1.2, 10.244.2.2], so 77 → the second.
    const v = trace(
      m,
      { protocol: 'tcp', src: '10.244.1.2', dst: '10.96.0.11', dport: 80 },
      { ipvs: { order: 'kernel' } },
    );
    assert.deepEqual(rows(v), [['1', 'forwarded', '10.244.2.2:80', null, 'default/app-x-2']]);
    assert.ok(
      v.trace.outcomes[0]!.notes.some(n =>
        /sh: source 10\.244\.1\.2 hashes to bucket 77, which holds 10\.244\.2\.2:80 \(list position 2\)/.test(n),
      ),
    );
    // 172.18.0.100 → bucket 87 → odd → the second as well; a NodePort from outside is masqueraded.
    const out = trace(
      m,
      { protocol: 'tcp', src: '172.18.0.100', dst: '172.18.0.3', dport: 30080 },
      { ipvs: { order: 'kernel' } },
    );
    assert.deepEqual(rows(out), [['1', 'forwarded', '10.244.2.2:80', '172.18.0.3', 'default/app-x-2']]);
  });

  it('without the kernel order, each pod is an outcome under a stated assumption, and the outcomes of each assumption sum to 1', () => {
    const v = trace(m, { protocol: 'tcp', src: '10.244.1.2', dst: '10.96.0.11', dport: 80 });
    assert.deepEqual(
      rows(v).map(r => [r[0], r[2]]),
      [
        ['1', '10.244.1.2:80'],
        ['1', '10.244.2.2:80'],
      ],
    );
    assert.deepEqual(
      v.trace.outcomes.map(o => o.assumptions.map(a => `${a.table} ${a.chain} #${a.rule} ${a.assumed}`)),
      [['ipvs TCP 10.96.0.11:80 #1 matches'], ['ipvs TCP 10.96.0.11:80 #1 does not match']],
    );
    assert.match(v.trace.outcomes[0]!.assumptions[0]!.reason, /Go map order/);
    assert.equal(v.trace.unknown, true);
    assert.deepEqual(probabilitySums(v.trace), ['1', '1']);
  });
});
