/**
 * The cluster model's budget (model/budget.ts): products of what the reader counted — ports × endpoints,
 * addresses × endpoints in IPVS mode, DaemonSets × nodes — are counted before they are built, and the
 * model stops at the first object past the budget with a ranged error and a partial answer.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readManifests } from '../../src/engine/kube/manifest/read.ts';
import { MODEL_BUDGET } from '../../src/engine/kube/model/budget.ts';
import { buildClusterModel } from '../../src/engine/kube/model/build.ts';
import { PROXY_MODES, modelCost } from '../../src/engine/kube/modes/index.ts';
import { productManifests } from '../helpers/fixtures.ts';

const read = (text: string) => readManifests([{ file: 'm.yaml', text }]);
const ports = (m: ReturnType<typeof buildClusterModel>) =>
  m.servicePorts.map(p => `${p.name}:${p.portName}×${p.endpoints.length}`);

describe("the cluster model's budget on products", () => {
  it('leaves out the Service whose ports × endpoints pass the budget, and those after it, saying where and why', () => {
    // big: 3 ports × 4 endpoints = 12 pairs; early's one pair before it leaves 9 of a budget of 10.
    const m = buildClusterModel(read(productManifests(3, 4)), { budget: 10 });
    assert.deepEqual(ports(m), ['early:web×1']);
    const errors = m.diagnostics.filter(d => d.code === 'input-too-large');
    assert.equal(errors.length, 1, JSON.stringify(m.diagnostics));
    const d = errors[0]!;
    assert.equal(d.severity, 'error');
    assert.equal(d.file, 'm.yaml');
    assert.equal(d.range.start.line, 12);
    assert.equal(
      d.message,
      "m.yaml: Service default/big (line 13) has 3 ports × 4 endpoints = 12 endpoint-port pairs (endpoints from EndpointSlice default/big-1, m.yaml:20), past the cluster model's budget of 10 (1 already taken by the Services before it): kube-proxy's rules grow with this product; this Service and the Services after it, from line 13, were left out: the answer is partial",
    );
    assert.equal(m.partial, d.message);
  });

  it('keeps everything, exactly, when the product fits', () => {
    const m = buildClusterModel(read(productManifests(3, 4)), { budget: 14 });
    assert.deepEqual(ports(m), ['early:web×1', 'big:p0×4', 'big:p1×4', 'big:p2×4', 'late:web×1']);
    assert.equal(m.partial, null);
    assert.ok(!m.diagnostics.some(d => d.code === 'input-too-large'));
  });

  it('stops a 1,000 × 1,000 EndpointSlice (80 KB) at the default budget before building it', () => {
    const set = read(productManifests());
    assert.equal(set.partial, null, "the reader's budget does not see the product");
    const m = buildClusterModel(set);
    assert.deepEqual(ports(m), ['early:web×1']);
    assert.match(
      m.partial ?? '',
      new RegExp(
        `^m\\.yaml: Service default/big \\(line 13\\) has 1000 ports × 1000 endpoints = 1000000 endpoint-port pairs .* past the cluster model's budget of ${MODEL_BUDGET} `,
      ),
    );
  });

  it("joins the reader's partial sentence and its own", () => {
    const m = buildClusterModel(readManifests([{ file: 'm.yaml', text: productManifests(3, 4) }], { budget: 19 }), {
      budget: 10,
    });
    assert.match(m.partial ?? '', /was not read: the answer is partial; m\.yaml: Service default\/big .* left out/);
  });

  it('counts the pods a selector matches, per port', () => {
    const text = [
      `apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: 5, template: {metadata: {labels: {app: a}}}}\n`,
      `apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {clusterIP: 10.96.0.10, selector: {app: a}, ports: [{name: a, port: 80}, {name: b, port: 81}]}\n`,
    ].join('---\n');
    assert.equal(buildClusterModel(read(text), { budget: 10 }).partial, null);
    assert.match(
      buildClusterModel(read(text), { budget: 9 }).partial ?? '',
      /Service default\/s \(line 6\) has 2 ports × 5 endpoints = 10 endpoint-port pairs \(endpoints: the pods its selector matches\)/,
    );
  });

  it('counts addresses once per port in iptables and nftables, times the endpoints in IPVS (a real server on each)', () => {
    const text = productManifests(2, 3).replace(
      'clusterIP: 10.96.0.10\n',
      'clusterIP: 10.96.0.10\n  externalIPs: [192.0.2.1, 192.0.2.2]\n',
    );
    // iptables: early 1, big 2 × (3 + 2) = 10, late 1.
    assert.equal(buildClusterModel(read(text), { budget: 12, cost: modelCost('iptables') }).partial, null);
    assert.equal(buildClusterModel(read(text), { budget: 12, cost: modelCost('nftables') }).partial, null);
    // IPVS: big is 2 ports × 3 endpoints × 3 addresses = 18.
    const ipvs = buildClusterModel(read(text), { budget: 12, cost: modelCost('ipvs') });
    assert.match(
      ipvs.partial ?? '',
      /Service default\/big \(line 13\) has 2 ports × 3 endpoints × 3 addresses \(ClusterIP, 2 external IPs\) = 18 IPVS real servers/,
    );
    // Without a chosen mode, the one the manifests configure.
    const configured = `${text}---\napiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: ipvs\n`;
    assert.match(
      buildClusterModel(read(configured), { budget: 12, cost: modelCost() }).partial ?? '',
      /IPVS real servers/,
    );
  });

  it('counts the pods DaemonSets place, one per node', () => {
    const nodes = Array.from(
      { length: 4 },
      (_, i) =>
        `apiVersion: v1\nkind: Node\nmetadata: {name: n${i}}\nstatus: {addresses: [{type: InternalIP, address: 172.18.0.${2 + i}}]}\nspec: {podCIDR: 10.244.${i}.0/24}\n`,
    );
    const ds = (name: string) =>
      `apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: ${name}}\nspec: {template: {metadata: {labels: {app: ${name}}}}}\n`;
    const text = [...nodes, ds('a'), ds('b'), ds('c')].join('---\n');
    const m = buildClusterModel(read(text), { podBudget: 10 });
    assert.deepEqual(
      m.pods.map(p => p.name),
      ['a-n0', 'a-n1', 'a-n2', 'a-n3', 'b-n0', 'b-n1', 'b-n2', 'b-n3'],
    );
    assert.equal(
      m.partial,
      "m.yaml: DaemonSet default/c (line 35) places 4 pods (one on each of 4 nodes), past the cluster model's budget of 10 placed pods (8 already placed for the workloads before it); this workload and the workloads after it, from line 35, were not placed (they have no pods and give no endpoints): the answer is partial",
    );
    assert.equal(buildClusterModel(read(text), { podBudget: 12 }).partial, null);
  });
});

describe("MetalLB's allocator over many Services", () => {
  const pool = (name: string, addresses: string, extra = '') =>
    `apiVersion: metallb.io/v1beta1\nkind: IPAddressPool\nmetadata: {name: ${name}, namespace: metallb-system}\nspec: {addresses: [${addresses}]${extra}}\n`;
  const lb = (i: number, annotations = '') =>
    `- {apiVersion: v1, kind: Service, metadata: {name: s${i}${annotations}}, spec: {type: LoadBalancer, clusterIP: 10.96.${i >> 8}.${i & 255}, ports: [{port: 80}]}}`;
  const list = (items: string[]) => `apiVersion: v1\nkind: List\nitems:\n${items.join('\n')}\n`;
  const lbIPs = (text: string) =>
    Object.fromEntries(buildClusterModel(read(text)).servicePorts.map(p => [p.name, p.lbIPs.join(',')]));

  it('hands out the first free address in pool order, a full pool moving on to the next, as before', () => {
    const text = [
      pool('b', '192.0.2.8/30'),
      pool('a', '192.0.2.0/30, 192.0.2.4/31'),
      pool('named', '198.51.100.0/30', ', autoAssign: false'),
      list([
        `- {apiVersion: v1, kind: Service, metadata: {name: asks}, spec: {type: LoadBalancer, loadBalancerIP: 192.0.2.1, ports: [{port: 80}]}}`,
        ...[0, 1, 2, 3, 4].map(i => lb(i)),
        lb(5, ', annotations: {metallb.universe.tf/address-pool: named}'),
        lb(6),
        lb(7),
      ]),
    ].join('---\n');
    assert.deepEqual(lbIPs(text), {
      asks: '192.0.2.1',
      s0: '192.0.2.0',
      s1: '192.0.2.2',
      s2: '192.0.2.3',
      s3: '192.0.2.4',
      s4: '192.0.2.5',
      s5: '198.51.100.0',
      s6: '192.0.2.8',
      s7: '192.0.2.9',
    });
  });

  it('resumes where it stopped instead of searching each pool from its start (20,000 Services: 49 s of CPU before)', () => {
    const text = [pool('p', '192.168.0.0/12'), list(Array.from({ length: 20_000 }, (_, i) => lb(i)))].join('---\n');
    const start = performance.now();
    const ips = lbIPs(text);
    const ms = performance.now() - start;
    assert.equal(ips.s19999, '192.160.78.31');
    assert.ok(ms < 15_000, `${ms} ms`);
  });
});

describe('products inside the synthesizers', () => {
  it("a node's addresses against nodePortAddresses are not their product, in every mode (50,000 × 50,000: 7–12 s of CPU before)", () => {
    const n = 50_000;
    const addresses = Array.from({ length: n }, (_, i) => `{type: InternalIP, address: 10.1.${i >> 8}.${i & 255}}`);
    // One CIDR holds the node's 1,000th address.
    const cidrs = Array.from({ length: n }, (_, i) => (i === 7 ? '10.1.3.232/32' : `192.${i >> 8}.${i & 255}.0/24`));
    const text = [
      `apiVersion: v1\nkind: Node\nmetadata: {name: node-1}\nstatus: {addresses: [${addresses.join(', ')}]}\nspec: {podCIDR: 10.244.0.0/24}\n`,
      `apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nnodePortAddresses: [${cidrs.join(', ')}]\n`,
      `apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {type: NodePort, clusterIP: 10.96.0.10, ports: [{port: 80, nodePort: 30080}]}\n`,
    ].join('---\n');
    const model = buildClusterModel(read(text));
    for (const mode of PROXY_MODES) {
      const start = performance.now();
      const rules = mode.synthesize(model, { nodeName: 'node-1' }).render(null, '#');
      const ms = performance.now() - start;
      assert.ok(ms < 5_000, `${mode.name}: ${ms} ms`);
      assert.ok(rules.includes('10.1.3.232'), `${mode.name}: the NodePort listens on the address its CIDR holds`);
      assert.ok(!rules.includes('10.1.3.231'), `${mode.name}: and on no other`);
    }
  });
});
