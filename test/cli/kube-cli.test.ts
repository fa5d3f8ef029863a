import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ROOT, budgetSpendingManifests, productManifests, tempFile } from '../helpers/fixtures.ts';
import { cli } from '../helpers/cli.ts';

const SEED3 = join(ROOT, 'examples', 'seed-003');

describe('packetlens synth', () => {
  it('writes the node iptables-save view with predictions labelled in its header', () => {
    const r = cli('synth', SEED3, '--node', 'myk8s-worker');
    assert.equal(r.code, 0, r.err.join('\n'));
    const text = r.out.join('\n');
    assert.match(text, /^# predicted: Service default\/svc1 loadBalancer IP = 172\.18\.255\.200/m);
    assert.match(
      text,
      /^-A KUBE-SVC-DLGPAL4ZCYSJ7UPR -m comment --comment "default\/svc1:svc1-webport -> 10\.10\.1\.11:80" -m statistic --mode random --probability 0\.50000000000 -j KUBE-SEP-ZNBEHD3XV5ZTBRAT$/m,
    );
    assert.match(text, /^\*nat$/m);
  });

  it('writes kube-proxy restore input with --format restore', () => {
    const r = cli('synth', SEED3, '--node', 'myk8s-worker', '--format', 'restore');
    assert.equal(r.code, 0);
    assert.equal(r.out[0], '*filter');
    assert.ok(r.out.includes('-A KUBE-MARK-MASQ -j MARK --or-mark 0x004000'));
  });

  it('names the nodes when --node is missing or wrong', () => {
    const r = cli('synth', SEED3);
    assert.equal(r.code, 2);
    assert.match(
      r.err[0]!,
      /synth needs --node \(one of: myk8s-control-plane, myk8s-worker, myk8s-worker2, myk8s-worker3\)/,
    );
    assert.match(cli('synth', SEED3, '--node', 'nope').err[0]!, /no node named nope/);
  });
});

describe('packetlens trace --manifests', () => {
  it('--json adds the receiving node, hops, predictions and the pod of each outcome', () => {
    const r = cli('trace', '--manifests', SEED3, '--packet', 'tcp 172.18.0.100 -> 172.18.255.200:80', '--json');
    assert.equal(r.code, 0, r.err.join('\n'));
    const j = JSON.parse(r.out[0]!);
    assert.equal(j.node, 'myk8s-worker');
    assert.deepEqual(
      j.hops.map((h: { kind: string; name: string }) => `${h.kind}:${h.name}`),
      ['client:outside client', 'node:myk8s-worker'],
    );
    assert.deepEqual(
      j.outcomes.map((o: Record<string, unknown>) => [o.probability, o.dnat, o.snat, o.pod, o.podNode]),
      [
        [0.5, '10.10.1.11:80', '172.18.0.4', 'default/webpod2', 'myk8s-worker2'],
        [0.5, '10.10.4.12:80', '172.18.0.4', 'default/webpod1', 'myk8s-worker'],
      ],
    );
    assert.ok(
      j.predictions.some(
        (p: { field: string; value: string }) => p.field === 'loadBalancer IP' && p.value === '172.18.255.200',
      ),
    );
  });

  it('explains when it cannot tell which node receives the packet', () => {
    const r = cli('trace', '--manifests', SEED3, '--packet', 'tcp 172.18.0.100 -> 10.200.1.11:80');
    assert.equal(r.code, 2);
    assert.match(r.err.join('\n'), /cannot tell which node receives a packet to 10\.200\.1\.11 .*give --node/);
  });
});

describe('partial manifests (the reader stopped at its budget)', () => {
  // Deployments asking for 100,000 replicas each spend the reader's budget (an entry per replica): the
  // second is not read, nor what follows it.
  const text = budgetSpendingManifests(['a', 'b', 'c']);
  const file = tempFile('partial.yaml', text);

  it('synth says so in its header', () => {
    const r = cli('synth', file);
    assert.equal(r.code, 0, r.err.join('\n'));
    assert.match(
      r.out.join('\n'),
      /^# ⚠ partial manifests: .*partial\.yaml: the manifests hold more than the reader's budget of 160000 entries .*; 2 objects were read and the rest, from line 11, was not read: the answer is partial; objects past that line are missing/m,
    );
    assert.ok(
      r.err.some(l => /input-too-large|was not read/.test(l)),
      r.err.join('\n'),
    );
  });

  it('trace --manifests says so before its answer, in text and JSON, for a Service past the cut too', () => {
    const r = cli('trace', '--manifests', file, '--packet', 'tcp 10.0.0.5 -> 10.96.0.30:80');
    assert.equal(r.code, 0, r.err.join('\n'));
    assert.match(r.out[0]!, /^⚠ partial manifests: .*from line 11, was not read: the answer is partial/);
    const j = cli('trace', '--manifests', file, '--packet', 'tcp 10.0.0.5 -> 10.96.0.20:80', '--json');
    assert.match((JSON.parse(j.out[0]!) as { partial: string }).partial, /from line 11, was not read/);
  });

  it('diff --node refuses to compare a side read in part, saying why', () => {
    const r = cli('diff', file, file, '--node', 'node-1');
    assert.equal(r.code, 2);
    assert.match(
      r.err.join('\n'),
      /from line 11, was not read: the answer is partial; a comparison needs each side whole, so nothing was compared/,
    );
  });
});

describe('partial manifests (the cluster model stopped at its budget on products)', () => {
  // 80 KB: Service big's 1,000 ports × its EndpointSlice's 1,000 endpoints (before: synth ran out of memory).
  const file = tempFile('product.yaml', productManifests());

  it('synth says so in its header, with a ranged error naming the Service and the product', () => {
    const r = cli('synth', file);
    assert.equal(r.code, 0, r.err.join('\n'));
    assert.match(
      r.out.join('\n'),
      /^# ⚠ partial manifests: .*product\.yaml: Service default\/big \(line 13\) has 1000 ports × 1000 endpoints = 1000000 endpoint-port pairs .*from line 13, were left out: the answer is partial; objects past that line are missing/m,
    );
    assert.match(
      r.err.join('\n'),
      /product\.yaml:13:1: error: .*Service default\/big \(line 13\) has 1000 ports × 1000 endpoints/,
    );
    // early, before the cut, keeps its rules.
    assert.match(r.out.join('\n'), /default\/early:web cluster IP/);
    assert.doesNotMatch(r.out.join('\n'), /default\/big:p0/);
  });

  it('trace --manifests says so in text and JSON, and --mode ipvs counts IPVS real servers', () => {
    const r = cli('trace', '--manifests', file, '--packet', 'tcp 10.0.0.5 -> 10.96.0.20:80');
    assert.equal(r.code, 0, r.err.join('\n'));
    assert.match(r.out[0]!, /^⚠ partial manifests: .*Service default\/big \(line 13\)/);
    const j = cli(
      'trace',
      '--manifests',
      file,
      '--packet',
      'tcp 10.0.0.5 -> 10.96.0.30:80',
      '--json',
      '--mode',
      'ipvs',
    );
    assert.match((JSON.parse(j.out[0]!) as { partial: string }).partial, /= 1000000 IPVS real servers .*left out/);
  });

  it('diff --node refuses a side the model cut', () => {
    const r = cli('diff', file, file, '--node', 'node-1');
    assert.equal(r.code, 2);
    assert.match(
      r.err.join('\n'),
      /were left out: the answer is partial; a comparison needs each side whole, so nothing was compared/,
    );
  });
});
