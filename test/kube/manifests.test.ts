import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readManifests } from '../../src/engine/kube/manifest/read.ts';
import { buildClusterModel } from '../../src/engine/kube/model/build.ts';
import type { ServiceM } from '../../src/engine/kube/manifest/types.ts';

const read = (text: string, file = 'm.yaml') => readManifests([{ file, text }]);

describe('manifest reader', () => {
  it('reads multi-document files, kind: List and Helm output with source locations', () => {
    const set = read(
      [
        '# Source: chart/templates/svc.yaml',
        '---',
        'apiVersion: v1',
        'kind: List',
        'items:',
        '- apiVersion: v1',
        '  kind: Service',
        '  metadata: {name: web, namespace: shop}',
        '  spec:',
        '    type: NodePort',
        '    selector: {app: web}',
        '    ports:',
        '    - {name: http, port: 80, targetPort: http, nodePort: 30080}',
        '---',
        'apiVersion: apps/v1',
        'kind: Deployment',
        'metadata: {name: web, namespace: shop}',
        'spec:',
        '  replicas: 2',
        '  template:',
        '    metadata: {labels: {app: web}}',
        '    spec:',
        '      containers:',
        '      - name: c',
        '        ports: [{name: http, containerPort: 8080}]',
        '---',
        'apiVersion: example.com/v1',
        'kind: Widget',
        'metadata: {name: ignored}',
      ].join('\n'),
    );
    assert.deepEqual(set.diagnostics, []);
    assert.deepEqual(
      set.objects.map(o => o.kind),
      ['Service', 'Deployment'],
    );
    const svc = set.objects[0] as ServiceM;
    assert.equal(svc.ports[0]!.loc.range.start.line, 12);
    assert.equal(svc.fieldLocs.type!.range.start.line, 9);
    assert.equal(svc.ports[0]!.targetPort, 'http');
  });

  it('gives diagnostics at the field for malformed known objects and keeps reading', () => {
    const set = read(
      [
        'apiVersion: v1',
        'kind: Service',
        'metadata: {name: bad}',
        'spec:',
        '  type: Balancer',
        '  ports:',
        '  - port: "eighty"',
        '  - port: 70000',
        '  - {port: 53, protocol: ICMP}',
      ].join('\n'),
    );
    const msgs = set.diagnostics.map(d => `${d.range.start.line + 1}: ${d.code}: ${d.message}`);
    assert.deepEqual(msgs, [
      '5: bad-field: spec.type must be ClusterIP, NodePort, LoadBalancer, ExternalName, not "Balancer"',
      '7: bad-field: port must be an integer from 1 to 65535, not "eighty"',
      '8: bad-field: port must be an integer from 1 to 65535, not 70000',
      '9: bad-field: protocol must be TCP, UDP or SCTP, not "ICMP"',
    ]);
    assert.equal((set.objects[0] as ServiceM).ports.length, 1);
  });

  it('reports YAML syntax errors and stops alias bombs', () => {
    const syntax = read('kind: Service\nmetadata: {name: x\n');
    assert.equal(syntax.diagnostics[0]!.code, 'yaml-syntax');
    const bomb = ['a: &a ["x","x","x","x","x","x","x","x","x","x"]'];
    for (let i = 1; i < 9; i++)
      bomb.push(
        `${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${new Array(10).fill(`*${String.fromCharCode(96 + i)}`).join(',')}]`,
      );
    bomb.push('kind: Pod', 'metadata:', '  name: p', '  labels: *i');
    // 10^9 nodes if expanded: the reader never expands aliases wholesale, only follows the ones it reads.
    const t0 = Date.now();
    const set = read(bomb.join('\n'));
    assert.ok(Date.now() - t0 < 2000, `${Date.now() - t0} ms`);
    assert.deepEqual(
      set.objects.map(o => o.kind),
      ['Pod'],
    );
  });
});

describe('cluster model and predictions', () => {
  const base = [
    'apiVersion: v1',
    'kind: Node',
    'metadata: {name: n1}',
    'spec: {podCIDR: 10.244.1.0/24}',
    'status: {addresses: [{type: InternalIP, address: 172.18.0.4}]}',
    '---',
    'apiVersion: v1',
    'kind: Pod',
    'metadata: {name: a, labels: {app: web}}',
    'spec: {nodeName: n1, containers: [{name: c, ports: [{name: http, containerPort: 8080}]}]}',
    'status: {podIP: 10.244.1.5}',
    '---',
    'apiVersion: v1',
    'kind: Pod',
    'metadata: {name: b, labels: {app: web}}',
    'spec: {nodeName: n1, containers: [{name: c}]}',
    'status: {podIP: 10.244.1.6}',
  ];

  it('builds endpoints from selector-matching pods, resolving named ports per pod', () => {
    const set = read(
      [
        ...base,
        '---',
        'apiVersion: v1',
        'kind: Service',
        'metadata: {name: web}',
        'spec: {clusterIP: 10.96.0.50, selector: {app: web}, ports: [{name: http, port: 80, targetPort: http}]}',
      ].join('\n'),
    );
    const m = buildClusterModel(set);
    const sp = m.servicePorts[0]!;
    assert.deepEqual(
      sp.endpoints.map(e => `${e.ip}:${e.port}`),
      ['10.244.1.5:8080'],
    );
    assert.equal(sp.predicted.endpoints, true);
    assert.deepEqual(
      m.diagnostics.map(d => d.code),
      ['named-port-unresolved'],
    );
    assert.match(m.diagnostics[0]!.message, /targetPort 'http' is not a TCP container port of pod b/);
  });

  it('reads each subset of an Endpoints object with its own ports, as the EndpointSlice mirror does', () => {
    // Two subsets name the port "http" with different numbers (pods of two versions): each address keeps
    // its own subset's port. Before, every address took the last subset's port (10.0.0.1:9090).
    const set = read(
      [
        'apiVersion: v1',
        'kind: Service',
        'metadata: {name: web, namespace: default}',
        'spec: {clusterIP: 10.96.0.60, ports: [{name: http, port: 80, targetPort: http}]}',
        '---',
        'apiVersion: v1',
        'kind: Endpoints',
        'metadata: {name: web, namespace: default}',
        'subsets:',
        '- addresses: [{ip: 10.0.0.1}]',
        '  ports: [{name: http, port: 8080}]',
        '- addresses: [{ip: 10.0.0.2}]',
        '  notReadyAddresses: [{ip: 10.0.0.3}]',
        '  ports: [{name: http, port: 9090}]',
      ].join('\n'),
    );
    const sp = buildClusterModel(set).servicePorts[0]!;
    assert.deepEqual(sp.endpoints.map(e => `${e.ip}:${e.port}${e.ready ? '' : ' (not ready)'}`).sort(), [
      '10.0.0.1:8080',
      '10.0.0.2:9090',
      '10.0.0.3:9090 (not ready)',
    ]);
  });

  it('keeps one Service of each namespace and name (the last read) and warns on the other copy', () => {
    // A kustomize base and its overlay read as one cluster: before, both copies made rules (two ClusterIPs,
    // two sets of KUBE-SVC chains for one Service).
    const set = readManifests([
      {
        file: 'base/svc.yaml',
        text: 'apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {clusterIP: 10.96.0.70, ports: [{port: 80}]}\n',
      },
      {
        file: 'overlays/prod/svc.yaml',
        text: 'apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {clusterIP: 10.96.0.71, ports: [{port: 8080}]}\n',
      },
    ]);
    const m = buildClusterModel(set);
    assert.deepEqual(
      m.servicePorts.map(p => `${p.clusterIP}:${p.port}`),
      ['10.96.0.71:8080'],
    );
    const dup = m.diagnostics.filter(d => d.code === 'duplicate-object');
    assert.equal(dup.length, 1);
    assert.equal(dup[0]!.file, 'base/svc.yaml');
    assert.match(
      dup[0]!.message,
      /Service default\/web is defined again, last at overlays\/prod\/svc\.yaml:1: a cluster holds one Service/,
    );
  });

  it('warns when a selector matches nothing and when a Service has no ports', () => {
    const set = read(
      [
        ...base,
        '---',
        'apiVersion: v1',
        'kind: Service',
        'metadata: {name: x}',
        'spec: {selector: {app: nope}, ports: [{port: 80}]}',
        '---',
        'apiVersion: v1',
        'kind: Service',
        'metadata: {name: y}',
        'spec: {selector: {app: web}}',
      ].join('\n'),
    );
    const m = buildClusterModel(set);
    assert.deepEqual(m.diagnostics.map(d => d.code).sort(), ['selector-matches-nothing', 'service-without-ports']);
  });

  it('predicts ClusterIPs, NodePorts and MetalLB addresses, and labels each prediction', () => {
    const set = read(
      [
        ...base,
        '---',
        'apiVersion: v1',
        'kind: Service',
        'metadata: {name: lb}',
        'spec: {type: LoadBalancer, selector: {app: web}, ports: [{port: 80}]}',
        '---',
        'apiVersion: metallb.io/v1beta1',
        'kind: IPAddressPool',
        'metadata: {name: p, namespace: metallb-system}',
        'spec: {addresses: [192.0.2.0/30], avoidBuggyIPs: true}',
      ].join('\n'),
    );
    const m = buildClusterModel(set);
    const sp = m.servicePorts[0]!;
    assert.equal(sp.clusterIP, '10.96.0.11');
    assert.equal(sp.nodePort, 30000);
    // avoidBuggyIPs skips the .0 address.
    assert.deepEqual(sp.lbIPs, ['192.0.2.1']);
    assert.deepEqual(sp.predicted, { clusterIP: true, nodePort: true, lbIPs: true, endpoints: true });
    assert.deepEqual(
      m.predictions.map(p => p.field),
      ['clusterIP', 'loadBalancer IP', 'nodePort'],
    );
  });

  it('places workload pods on eligible nodes and gives them addresses from the node pod CIDR', () => {
    const set = read(
      [
        'kind: Cluster',
        'apiVersion: kind.x-k8s.io/v1alpha4',
        'name: demo',
        'nodes: [{role: control-plane}, {role: worker}, {role: worker}]',
        'networking: {podSubnet: 10.10.0.0/16}',
        '---',
        'apiVersion: apps/v1',
        'kind: Deployment',
        'metadata: {name: web}',
        'spec: {replicas: 3, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c}]}}}',
      ].join('\n'),
    );
    const m = buildClusterModel(set);
    assert.deepEqual(
      m.nodes.map(n => [n.name, n.ips[0], n.podCIDRs[0], n.excludedFromLB]),
      [
        ['demo-control-plane', '172.18.0.2', '10.10.0.0/24', true],
        ['demo-worker', '172.18.0.3', '10.10.1.0/24', false],
        ['demo-worker2', '172.18.0.4', '10.10.2.0/24', false],
      ],
    );
    assert.deepEqual(
      m.pods.map(p => [p.name, p.nodeName, p.ip]),
      [
        ['web-1', 'demo-worker', '10.10.1.2'],
        ['web-2', 'demo-worker2', '10.10.2.2'],
        ['web-3', 'demo-worker', '10.10.1.3'],
      ],
    );
    assert.equal(m.kubeProxy.clusterCIDR, '10.10.0.0/16');
  });
});
