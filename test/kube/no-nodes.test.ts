/**
 * Issue 11, "Manifests without nodes": an app repo without Node objects or a kind config is a default
 * single-node cluster, predicted and marked so. Expected values come from how Kubernetes places pods
 * (kube-scheduler: an eligible node for each pod; node selectors against the labels the kubelet sets,
 * kubernetes.io/os=linux, kubernetes.io/arch, kubernetes.io/hostname and their beta. forms; the
 * control-plane taint, which kind removes from a one-node cluster — kind
 * pkg/cluster/internal/create/actions/kubeadminit/init.go), from the endpoint controller (every ready pod
 * whose labels match the selector) and from kube-proxy's equal-probability KUBE-SVC rules (1/3 each).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readManifests } from '../../src/engine/kube/manifest/read.ts';
import { buildClusterModel } from '../../src/engine/kube/model/build.ts';
import { cli } from '../helpers/cli.ts';
import { ROOT } from '../helpers/fixtures.ts';

const APP = join(ROOT, 'examples', 'app-no-nodes');
const model = (...texts: string[]) =>
  buildClusterModel(readManifests(texts.map((text, i) => ({ file: `m${i}.yaml`, text }))));

const deployment = (extra: string[] = [], kind = 'Deployment', api = 'apps/v1') =>
  [
    `apiVersion: ${api}`,
    `kind: ${kind}`,
    'metadata: {name: web}',
    'spec:',
    '  replicas: 3',
    '  template:',
    '    metadata: {labels: {app: web}}',
    '    spec:',
    ...extra,
    '      containers:',
    '      - name: web',
    '        ports: [{containerPort: 8080}]',
  ].join('\n');
const service = [
  'apiVersion: v1',
  'kind: Service',
  'metadata: {name: web}',
  'spec:',
  '  selector: {app: web}',
  '  ports: [{port: 80, targetPort: 8080}]',
].join('\n');
const oneNodeKind = ['apiVersion: kind.x-k8s.io/v1alpha4', 'kind: Cluster', 'nodes:', '- role: control-plane'].join(
  '\n',
);
const kindWorkers = [
  'apiVersion: kind.x-k8s.io/v1alpha4',
  'kind: Cluster',
  'nodes:',
  '- role: control-plane',
  '- role: worker',
  '- role: worker',
].join('\n');
const linuxOnly = ['      nodeSelector:', '        kubernetes.io/os: linux'];

describe('manifests without nodes: a predicted default single-node cluster', () => {
  it('a Deployment of 3 replicas and a Service: three predicted endpoints on one predicted node', () => {
    const m = model(deployment(), service);
    assert.deepEqual(
      m.nodes.map(n => [n.name, n.predicted, n.controlPlane]),
      [['node-1', true, false]],
    );
    const sp = m.servicePorts[0]!;
    assert.equal(sp.clusterIP, '10.96.0.11');
    assert.deepEqual(
      sp.endpoints.map(e => [e.podName, e.nodeName, e.predicted]),
      [
        ['web-1', 'node-1', true],
        ['web-2', 'node-1', true],
        ['web-3', 'node-1', true],
      ],
    );
    assert.ok(m.predictions.some(p => p.subject === 'Node node-1' && /default single-node cluster/.test(p.reason)));
  });

  it('nodes the pods name are the predicted nodes', () => {
    const pod = (name: string, node: string) =>
      [
        'apiVersion: v1',
        'kind: Pod',
        `metadata: {name: ${name}, labels: {app: web}}`,
        'spec:',
        `  nodeName: ${node}`,
        '  containers: [{name: c}]',
      ].join('\n');
    const m = model(pod('a', 'n1'), pod('b', 'n2'), service);
    assert.deepEqual(
      m.nodes.map(n => n.name),
      ['n1', 'n2'],
    );
    assert.deepEqual(
      m.servicePorts[0]!.endpoints.map(e => e.nodeName),
      ['n1', 'n2'],
    );
  });

  it('predicted nodes carry the well-known labels: nodeSelector kubernetes.io/os: linux is placed (default and kind nodes)', () => {
    for (const m of [model(deployment(linuxOnly), service), model(kindWorkers, deployment(linuxOnly), service)]) {
      assert.equal(m.servicePorts[0]!.endpoints.length, 3, m.diagnostics.map(d => d.message).join('\n'));
      for (const n of m.nodes) {
        assert.equal(n.labels['kubernetes.io/os'], 'linux');
        assert.equal(n.labels['beta.kubernetes.io/os'], 'linux');
        assert.equal(n.labels['kubernetes.io/arch'], 'amd64');
        assert.equal(n.labels['beta.kubernetes.io/arch'], 'amd64');
        assert.equal(n.labels['kubernetes.io/hostname'], n.name);
      }
    }
    const hostnamed = model(
      kindWorkers,
      deployment(['      nodeSelector:', '        kubernetes.io/hostname: kind-worker2']),
      service,
    );
    assert.deepEqual([...new Set(hostnamed.servicePorts[0]!.endpoints.map(e => e.nodeName))], ['kind-worker2']);
  });

  it('a one-node kind cluster has no control-plane taint: its pods run on the control plane', () => {
    const m = model(oneNodeKind, deployment(), service);
    assert.deepEqual(
      m.nodes.map(n => [n.name, n.controlPlane]),
      [['kind-control-plane', true]],
    );
    assert.deepEqual(
      m.servicePorts[0]!.endpoints.map(e => e.nodeName),
      ['kind-control-plane', 'kind-control-plane', 'kind-control-plane'],
    );
    // With workers the control plane keeps its taint.
    const multi = model(kindWorkers, deployment(), service);
    assert.ok(!multi.servicePorts[0]!.endpoints.some(e => e.nodeName === 'kind-control-plane'));
  });

  it('ReplicationControllers are workloads', () => {
    const m = model(deployment([], 'ReplicationController', 'v1'), service);
    assert.deepEqual(
      m.servicePorts[0]!.endpoints.map(e => e.podName),
      ['web-1', 'web-2', 'web-3'],
    );
  });

  it('a bare Pod without nodeName is scheduled: placed on an eligible node, with an address and an endpoint', () => {
    const bare = [
      'apiVersion: v1',
      'kind: Pod',
      'metadata: {name: solo, labels: {app: web}}',
      'spec:',
      '  nodeSelector: {kubernetes.io/os: linux}',
      '  containers:',
      '  - name: c',
      '    ports: [{containerPort: 8080}]',
    ].join('\n');
    for (const m of [model(bare, service), model(kindWorkers, bare, service)]) {
      const eps = m.servicePorts[0]!.endpoints;
      assert.equal(eps.length, 1);
      assert.ok(eps[0]!.nodeName && eps[0]!.ip, JSON.stringify(eps));
      assert.ok(m.predictions.some(p => p.subject === 'Pod default/solo' && p.field === 'nodeName'));
    }
    // A selector no node satisfies: a warning, not silence.
    const nowhere = model(kindWorkers, bare.replace('kubernetes.io/os: linux', 'kubernetes.io/os: windows'), service);
    assert.ok(nowhere.diagnostics.some(d => /Pod default\/solo: no node can run it/.test(d.message)));
  });

  it('Node objects given: nothing is assumed', () => {
    const node = [
      'apiVersion: v1',
      'kind: Node',
      'metadata: {name: real}',
      'status: {addresses: [{type: InternalIP, address: 192.0.2.10}]}',
    ].join('\n');
    const m = model(node, deployment(), service);
    assert.deepEqual(
      m.nodes.map(n => [n.name, n.predicted]),
      [['real', false]],
    );
    assert.ok(!m.predictions.some(p => p.field === 'node'));
  });
});

describe('manifests without nodes: the CLI needs no --node for one node', () => {
  it("synth writes the only node's rules, with the predictions in its header", () => {
    const r = cli('synth', APP);
    assert.equal(r.code, 0, r.err.join('\n'));
    const text = r.out.join('\n');
    assert.match(text, /node node-1/);
    assert.match(text, /default single-node cluster/);
    assert.match(text, /KUBE-SEP-/);
  });

  it('trace --manifests reaches the three endpoints, 1/3 each, on the only node', () => {
    const r = cli('trace', '--manifests', APP, '--packet', 'tcp 10.0.0.5 -> 10.96.0.11:80', '--json');
    assert.equal(r.code, 0, r.err.join('\n'));
    const j = JSON.parse(r.out[0]!) as { node: string; outcomes: { dnat: string; probabilityExact: string }[] };
    assert.equal(j.node, 'node-1');
    assert.deepEqual(
      j.outcomes.map(o => o.dnat),
      ['10.244.0.2:8080', '10.244.0.3:8080', '10.244.0.4:8080'],
    );
    assert.deepEqual(
      j.outcomes.map(o => o.probabilityExact),
      ['715827883/2147483648', '1431655765/4294967296', '1431655765/4294967296'],
    );
  });
});

describe("a dump with its cluster's manifests: which node it is", () => {
  it('a one-node kind config: the only node, its predicted address labelled with the kind config', async () => {
    const { dumpNode } = await import('../../src/engine/kube/dump-node.ts');
    const set = readManifests([{ file: 'kind.yaml', text: oneNodeKind }]);
    const found = dumpNode(set, buildClusterModel(set), '/tmp/any-name.rules');
    assert.deepEqual(
      found?.inferred.map(i => [i.address, i.from]),
      [['172.18.0.2', 'kind.yaml:1']],
    );
    assert.match(found!.inferred[0]!.why, /the cluster's only node \(predicted: kind gives nodes addresses/);
    // Several nodes and no name in the file name: not decided.
    const many = readManifests([{ file: 'kind.yaml', text: kindWorkers }]);
    assert.equal(dumpNode(many, buildClusterModel(many), 'dump.rules'), null);
    assert.equal(dumpNode(many, buildClusterModel(many), 'kind-worker2.rules')?.node.name, 'kind-worker2');
  });
});
