/**
 * The manifest side of the editor: which YAML files make a cluster, the CodeLens above each Service port,
 * hovers on Services and their fields, the node quick pick, the synthesized dump and end-to-end traces.
 *
 * Expected values come from seed 003 (examples/seed-003: MetalLB gives svc1 172.18.255.200 and its port
 * reaches webpod1 and webpod2 with probability 1/2 each, as the seed's quoted `curl` loop and kube-proxy
 * dump show; the chain names are those of the seed's node-myk8s-worker.rules), from kube-proxy's probability
 * formatting worked out by hand (`%0.10f` of 1/3 is 0.3333333333, which the kernel stores as
 * round(0.3333333333·2^31) = 715827883 of 2^31), and from the manifests written inline below.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ClusterView, type ManifestFile } from '../../src/editor/kube/cluster.ts';
import { clusterRoot, clusterRoots, isKubernetesText } from '../../src/editor/kube/detect.ts';
import { manifestHoverAt } from '../../src/editor/kube/manifest-hover.ts';
import { manifestSuggestions, nothingToTrace, runManifestTrace } from '../../src/editor/kube/manifest-trace.ts';
import { nodeDump, nodeDumpFileName, nodePicks } from '../../src/editor/kube/node-rules.ts';
import { portLens } from '../../src/editor/kube/service-lens.ts';
import { serviceHover } from '../../src/editor/kube/service-hover.ts';
import { TextLines } from '../../src/editor/text-lines.ts';
import { ROOT, budgetSpendingManifests, productManifests } from '../helpers/fixtures.ts';

function seedFiles(seed: string): ManifestFile[] {
  const dir = join(ROOT, 'examples', seed);
  return readdirSync(dir)
    .filter(f => /\.ya?ml$/.test(f))
    .sort()
    .map(f => ({ file: `file:///ws/${seed}/${f}`, text: readFileSync(join(dir, f), 'utf8') }));
}

function seed(name: string, replace?: (f: ManifestFile) => ManifestFile): ClusterView {
  const files = seedFiles(name);
  return new ClusterView(name, replace ? files.map(replace) : files);
}

const lensTitles = (view: ClusterView) => view.model.servicePorts.map(sp => portLens(view, sp).title);

/** The hover at the first occurrence of `needle` in `file` (the cursor `offset` characters into it). */
function hoverAt(view: ClusterView, file: string, needle: string, offset = 1): string {
  const f = view.files.find(x => x.file.endsWith(file))!;
  const lines = f.text.split('\n');
  const line = lines.findIndex(l => l.includes(needle));
  assert.ok(line >= 0, `no line with ${needle}`);
  const h = manifestHoverAt(view, f.file, new TextLines(f.text), line, lines[line]!.indexOf(needle) + offset);
  assert.ok(h, `no hover at ${needle}`);
  return h.markdown;
}

/** A cluster written inline: one kind worker and control plane, pods, and the given Service. */
function inline(service: string, pods: string): ClusterView {
  const cluster = [
    'kind: Cluster',
    'apiVersion: kind.x-k8s.io/v1alpha4',
    'name: t',
    'nodes:',
    '- role: control-plane',
    '- role: worker',
    '- role: worker',
  ].join('\n');
  return new ClusterView('t', [
    { file: 'file:///t/cluster.yaml', text: cluster },
    { file: 'file:///t/pods.yaml', text: pods },
    { file: 'file:///t/svc.yaml', text: service },
  ]);
}

function pod(name: string, node: string, ip: string, labels = 'app: web'): string {
  return [
    'apiVersion: v1',
    'kind: Pod',
    'metadata:',
    `  name: ${name}`,
    '  labels:',
    `    ${labels}`,
    'spec:',
    `  nodeName: ${node}`,
    'status:',
    `  podIP: ${ip}`,
  ].join('\n');
}

const CLUSTER_IP_SVC = [
  'apiVersion: v1',
  'kind: Service',
  'metadata:',
  '  name: web',
  'spec:',
  '  selector:',
  '    app: web',
  '  ports:',
  '  - name: http',
  '    port: 80',
].join('\n');

describe('manifests: which files make a cluster', () => {
  it('takes YAML with apiVersion and kind, and nothing else', () => {
    assert.ok(isKubernetesText(seedFiles('seed-003').find(f => f.file.endsWith('services.yaml'))!.text));
    assert.ok(
      isKubernetesText('{\n  "apiVersion": "v1",\n  "kind": "Service",\n  "metadata": {}\n}\n'),
      'kubectl get -o json',
    );
    assert.ok(isKubernetesText('apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n'));
    assert.equal(
      isKubernetesText('name: CI\non: push\njobs:\n  build:\n    runs-on: ubuntu-latest\n'),
      false,
      'a GitHub workflow',
    );
    assert.equal(isKubernetesText('apiVersion: v2\nname: mychart\nversion: 1.0.0\n'), false, "Helm's Chart.yaml");
    assert.equal(isKubernetesText('services:\n  web:\n    image: nginx\n'), false, 'docker-compose');
  });

  it('keeps sibling example folders apart and widens to parents that hold manifests', () => {
    const kubeDirs = new Set(['/ws/examples/seed-002', '/ws/examples/seed-003', '/ws/k8s', '/ws/k8s/services']);
    assert.equal(clusterRoot('/ws/examples/seed-003/services.yaml', kubeDirs, '/ws'), '/ws/examples/seed-003');
    assert.equal(clusterRoot('/ws/k8s/services/web.yaml', kubeDirs, '/ws'), '/ws/k8s');
    assert.equal(
      clusterRoot('/ws/k8s/services/web.yaml', new Set([...kubeDirs, '/ws']), '/ws'),
      '/ws',
      'never above the workspace folder',
    );
    assert.deepEqual(
      clusterRoots(
        [
          '/ws/examples/seed-002/app-x.yaml',
          '/ws/examples/seed-003/services.yaml',
          '/ws/examples/seed-003/nodes.yaml',
          '/ws/k8s/a.yaml',
          '/ws/k8s/services/b.yaml',
        ],
        '/ws',
      ),
      ['/ws/examples/seed-002', '/ws/examples/seed-003', '/ws/k8s'],
    );
  });
});

describe('manifests: CodeLens above each Service port', () => {
  it('seed 003: each LoadBalancer address reaches webpod1 and webpod2 with exactly 1/2 each', () => {
    const view = seed('seed-003');
    assert.deepEqual(lensTitles(view), [
      '▶ tcp 172.18.255.200:80 → webpod1 50% · webpod2 50%',
      '▶ tcp 172.18.255.201:80 → webpod1 50% · webpod2 50%',
      '▶ tcp 172.18.255.202:80 → webpod1 50% · webpod2 50%',
    ]);
    const lens = portLens(view, view.model.servicePorts[0]!);
    assert.equal(lens.packet, 'tcp 172.18.0.100 -> 172.18.255.200:80');
    assert.match(lens.tooltip, /webpod1: 50% \(exactly 1\/2\) → 10\.10\.4\.12:80 on myk8s-worker/);
    assert.match(lens.tooltip, /outside client \(172\.18\.0\.100\) → myk8s-worker \(172\.18\.0\.4\)/);
    assert.match(
      lens.tooltip,
      /172\.18\.255\.200 is predicted: MetalLB assigns the first free address of pool my-ippool/,
    );
  });

  it('sits on the line of its port', () => {
    const view = seed('seed-003');
    const text = view.files.find(f => f.file.endsWith('services.yaml'))!.text.split('\n');
    assert.equal(text[view.model.servicePorts[1]!.loc.range.start.line], '  - name: svc2-webport');
  });

  it('seed 000: a NodePort Service is shown at a node address and its NodePort', () => {
    assert.deepEqual(lensTitles(seed('seed-000')), ['▶ tcp 192.168.10.11:30042 → nginx 100%']);
  });

  it('seed 002 (IPVS mode): the NodePort through the rr scheduler, 1/2 each', () => {
    const view = seed('seed-002');
    assert.equal(view.mode, 'ipvs');
    // The pods are placed from the Deployment's replica count: the lens says its endpoints are predicted.
    assert.deepEqual(lensTitles(view), ['▶ tcp 172.18.0.3:30080 → app-x-1 50% · app-x-2 50% (predicted)']);
    assert.match(portLens(view, view.model.servicePorts[0]!).tooltip, /kube-proxy IPVS mode/);
  });

  it('packetlens.kubeProxy.mode overrides the manifests, and says so', () => {
    const files = seedFiles('seed-002');
    const forced = new ClusterView('seed-002', files, 'iptables');
    assert.equal(forced.mode, 'iptables');
    assert.equal(forced.modeNote, 'packetlens.kubeProxy.mode is iptables; the manifests configure ipvs mode');
    assert.match(portLens(forced, forced.model.servicePorts[0]!).tooltip, /packetlens\.kubeProxy\.mode is iptables/);
    const nft = new ClusterView('seed-003', seedFiles('seed-003'), 'nftables');
    assert.equal(nft.mode, 'nftables');
    assert.equal(nft.modeNote, 'packetlens.kubeProxy.mode is nftables; the manifests configure iptables mode');
    // seed-003 in nftables mode: the same endpoints and shares as iptables mode, said in nft words.
    const lens = portLens(nft, nft.model.servicePorts[0]!);
    assert.match(lens.title, /webpod1 50% · webpod2 50%|webpod2 50% · webpod1 50%/);
    assert.match(lens.tooltip, /kube-proxy nftables mode/);
    const hover = serviceHover(nft, nft.model.services[0]!);
    assert.match(hover, /kube-proxy nftables mode/);
    assert.match(hover, /`service-[A-Z2-7]{8}-default\/svc1\/tcp\/svc1-webport` \(all endpoints\)/);
    // "Show kube-proxy Rules for Node…" opens nftables mode's rules as an .nft document (the nftables
    // language), iptables mode's as .rules.
    assert.equal(nodeDumpFileName('myk8s-worker', nodeDump(nft, 'myk8s-worker').text), 'myk8s-worker.nft');
    assert.equal(nodeDumpFileName('myk8s-worker', nodeDump(forced, 'ipvs-worker').text), 'myk8s-worker.rules');
  });

  it("three endpoints: the kernel shares of kube-proxy's 0.3333333333 and 0.5 rules, exactly", () => {
    const pods = [
      pod('a', 't-worker', '10.244.1.2'),
      pod('b', 't-worker', '10.244.1.3'),
      pod('c', 't-worker2', '10.244.2.2'),
    ].join('\n---\n');
    const view = inline(CLUSTER_IP_SVC, pods);
    const lens = portLens(view, view.model.servicePorts[0]!);
    assert.equal(lens.title, '▶ tcp 10.96.0.11:80 → a 33.33% · b 33.33% · c 33.33%');
    // round(0.3333333333 · 2^31) = 715827883; the others share the rest: (2^31 − 715827883) / 2^32.
    assert.match(lens.tooltip, /a: 33\.33% \(exactly 715827883\/2147483648\)/);
    assert.match(lens.tooltip, /b: 33\.33% \(exactly 1431655765\/4294967296\)/);
    assert.match(lens.tooltip, /from a process on t-worker/);
  });

  it('externalTrafficPolicy Local: MetalLB announces from a node with an endpoint, which keeps it local', () => {
    const view = seed('seed-003', f =>
      f.file.endsWith('services.yaml')
        ? {
            ...f,
            text: f.text.replace(
              '  type: LoadBalancer\n---',
              '  type: LoadBalancer\n  externalTrafficPolicy: Local\n---',
            ),
          }
        : f,
    );
    assert.equal(view.model.services[0]!.externalTrafficPolicy, 'Local');
    // Speakers for .200 in sha256 order are myk8s-worker, myk8s-worker2, myk8s-worker3 (README); only the
    // first two have an endpoint, and myk8s-worker's is webpod1.
    assert.equal(lensTitles(view)[0], '▶ tcp 172.18.255.200:80 → webpod1 100%');
  });

  it('a Service whose selector matches nothing is rejected', () => {
    const view = inline(CLUSTER_IP_SVC, pod('a', 't-worker', '10.244.1.2', 'app: other'));
    assert.equal(portLens(view, view.model.servicePorts[0]!).title, '▶ tcp 10.96.0.11:80 → rejected 100%');
  });
});

describe('manifests: hovers', () => {
  it('a Service: addresses with what is predicted and why, endpoints with exact shares, its chains', () => {
    const view = seed('seed-003');
    for (const [needle, offset] of [
      ['kind: Service', 2],
      ['name: svc1', 8],
    ] as const) {
      const md = hoverAt(view, 'services.yaml', needle, offset);
      assert.match(md, /\*\*Service `default\/svc1`\*\* — LoadBalancer · kube-proxy iptables mode/);
      assert.match(
        md,
        /\| ClusterIP \| `10\.200\.1\.11:80` \| \*predicted\*: the apiserver allocates from the service CIDR 10\\\.200\\\.1\\\.0\/24/,
      );
      assert.match(
        md,
        /\| LoadBalancer IP \| `172\.18\.255\.200:80` \| \*predicted\*: MetalLB assigns .* · announced by \*\*myk8s\\-worker\*\* \(MetalLB L2\)/,
      );
      assert.match(md, /\| NodePort \| `30000` on every node/);
      assert.match(md, /\| `10\.10\.1\.11:80` \| webpod2 \| myk8s\\-worker2 \| 50% \| 1\/2 \|/);
      assert.match(md, /\| `10\.10\.4\.12:80` \| webpod1 \| myk8s\\-worker \| 50% \| 1\/2 \|/);
      assert.match(
        md,
        /`KUBE-SVC-DLGPAL4ZCYSJ7UPR` \(all endpoints\) · `KUBE-EXT-DLGPAL4ZCYSJ7UPR` \(external traffic\) · `KUBE-SEP-ZNBEHD3XV5ZTBRAT` \(10\\\.10\\\.1\\\.11:80\) · `KUBE-SEP-W6APR3NU75YJK7VG`/,
      );
    }
  });

  it('type: where the Service is reachable, and which node announces its address', () => {
    const md = hoverAt(seed('seed-003'), 'services.yaml', 'type: LoadBalancer');
    assert.match(
      md,
      /ClusterIP `10\.200\.1\.11:80` \(\*predicted\*\), at a NodePort on every node \(`30000`\), and at its load-balancer address/,
    );
    assert.match(md, /\*\*myk8s\\-worker\*\* answers ARP for it/);
  });

  it('selector: the pods it matches, or that it matches nothing', () => {
    assert.match(
      hoverAt(seed('seed-003'), 'services.yaml', 'selector:'),
      /`app=webpod` matches 2 pods in namespace `default`: `webpod1` \(10\\\.10\\\.4\\\.12, myk8s\\-worker, ready\), `webpod2`/,
    );
    const none = inline(CLUSTER_IP_SVC, pod('a', 't-worker', '10.244.1.2', 'app: other'));
    assert.match(
      hoverAt(none, 'svc.yaml', 'selector:'),
      /`app=web` matches no pod in namespace `default` in these manifests: the Service has no endpoints, and kube-proxy rejects its traffic/,
    );
  });

  it('externalTrafficPolicy and internalTrafficPolicy: which nodes have ready endpoints', () => {
    const view = seed('seed-003', f =>
      f.file.endsWith('services.yaml')
        ? {
            ...f,
            text: f.text.replace(
              '  type: LoadBalancer\n---',
              '  type: LoadBalancer\n  externalTrafficPolicy: Local\n  internalTrafficPolicy: Local\n---',
            ),
          }
        : f,
    );
    const etp = hoverAt(view, 'services.yaml', 'externalTrafficPolicy');
    assert.match(etp, /\*\*Local\*\*: external traffic goes only to endpoints on the node that receives it/);
    assert.match(etp, /Nodes with a ready endpoint: `myk8s-worker2` \(webpod2\), `myk8s-worker` \(webpod1\)/);
    assert.match(etp, /On `myk8s-control-plane`, `myk8s-worker3` external traffic is dropped/);
    assert.match(etp, /MetalLB announces `172\.18\.255\.200` only from nodes with a ready endpoint: `myk8s-worker`/);
    const itp = hoverAt(view, 'services.yaml', 'internalTrafficPolicy');
    assert.match(itp, /goes only to endpoints on the client's own node \(`KUBE-SVL-DLGPAL4ZCYSJ7UPR`\)/);
    assert.match(itp, /Clients on `myk8s-control-plane`, `myk8s-worker3` have none/);
    const cluster = hoverAt(seed('seed-000'), 'nginx-nodeport.yaml', 'type: NodePort');
    assert.match(cluster, /NodePort `30042` on every node's addresses: `192\.168\.10\.11:30042`/);
    // A value the manifests give is not marked predicted.
    const nginx = hoverAt(seed('seed-000'), 'nginx-nodeport.yaml', 'kind: Service', 2);
    assert.match(nginx, /\| NodePort \| `30042` on every node: `192\.168\.10\.11:30042` \| in the manifests \|/);
    assert.match(nginx, /\| ClusterIP \| `10\.96\.0\.11:80` \| \*predicted\*: /);
  });

  it('sessionAffinity: the recent rules and the timeout', () => {
    const svc = CLUSTER_IP_SVC.replace(
      'spec:\n',
      'spec:\n  sessionAffinity: ClientIP\n  sessionAffinityConfig:\n    clientIP:\n      timeoutSeconds: 600\n',
    );
    const md = hoverAt(inline(svc, pod('a', 't-worker', '10.244.1.2')), 'svc.yaml', 'sessionAffinity');
    assert.match(
      md,
      /\*\*ClientIP\*\*: a client's connections stick to the endpoint its first connection reached, for 600 s/,
    );
    assert.match(md, /`-m recent --rcheck --seconds 600 --reap` rule per endpoint first in `KUBE-SVC-/);
  });

  it('file text is escaped: a hostile name renders as written', () => {
    const svc = CLUSTER_IP_SVC.replace('name: web', 'name: "x[a](https://evil)"');
    const md = hoverAt(inline(svc, pod('a', 't-worker', '10.244.1.2')), 'svc.yaml', 'kind: Service');
    assert.match(md, /\*\*Service `default\/x\[a\]\(https:\/\/evil\)`\*\*/);
    // Outside code spans (rendered literally) the link never appears unescaped.
    assert.ok(!md.replace(/`[^`]*`/g, '').includes('](https://evil)'), md);
  });
});

describe('manifests: kube-proxy rules for a node', () => {
  it('the node quick pick lists the nodes with their addresses and roles', () => {
    assert.deepEqual(
      nodePicks(seed('seed-003')).map(p => [p.label, p.description, p.detail]),
      [
        [
          'myk8s-control-plane',
          '172.18.0.2',
          'control plane · excluded from load balancers · 0 pods · pod CIDR 10.10.0.0/24',
        ],
        ['myk8s-worker', '172.18.0.4', 'worker · 1 pod: webpod1 · pod CIDR 10.10.4.0/24'],
        ['myk8s-worker2', '172.18.0.5', 'worker · 1 pod: webpod2 · pod CIDR 10.10.1.0/24'],
        ['myk8s-worker3', '172.18.0.3', 'worker · 0 pods · pod CIDR 10.10.2.0/24'],
      ],
    );
  });

  it("the dump: kube-proxy's chains for svc1, every prediction in the header, the rules a trace runs through", () => {
    const view = seed('seed-003');
    const d = nodeDump(view, 'myk8s-worker');
    assert.match(
      d.text,
      /^# kube-proxy v1\.31 iptables mode on node myk8s-worker \(172\.18\.0\.4\), synthesized by packetlens from the manifests of seed-003\n/,
    );
    assert.match(d.text, /\n# predicted: Service default\/svc1 loadBalancer IP = 172\.18\.255\.200 \(MetalLB assigns/);
    assert.match(d.text, /\n:KUBE-SVC-DLGPAL4ZCYSJ7UPR - \[0:0\]\n/);
    assert.match(
      d.text,
      /\n-A KUBE-SVC-DLGPAL4ZCYSJ7UPR -m comment --comment "default\/svc1:svc1-webport -> 10\.10\.1\.11:80" -m statistic --mode random --probability 0\.50000000000 -j KUBE-SEP-ZNBEHD3XV5ZTBRAT\n/,
    );
    assert.equal(d.text.split('\n').slice(d.headerLines).join('\n'), d.rules);
    const lines = d.text.split('\n').slice(0, d.headerLines);
    assert.ok(
      lines.every(l => l.startsWith('#')),
      'the header is comments only',
    );
    assert.equal(lines.filter(l => l.startsWith('# predicted: ')).length, view.model.predictions.length);
  });

  it('IPVS mode: ipvsadm, ipset and kube-ipvs0 in the header, then the iptables rules', () => {
    const d = nodeDump(seed('seed-002'), 'ipvs-worker');
    assert.equal(d.mode, 'ipvs');
    assert.match(d.text, /\n# ipvsadm -Ln\n# IP Virtual Server version 1\.2\.1 \(size=4096\)\n/);
    assert.match(d.text, /\n# TCP {2}10\.96\.0\.11:80 rr\n# {3}-> 10\.244\.1\.2:80 {16}Masq {4}1 {6}0 {10}0 *\n/);
    assert.match(d.text, /\n# ipset save\n# create KUBE-[A-Z-]+ (hash|bitmap):/);
    assert.match(d.text, /\n# add KUBE-CLUSTER-IP 10\.96\.0\.11,tcp:80\n/);
    assert.match(d.text, /\n# kube-ipvs0: 10\.96\.0\.11\n/);
    assert.match(d.text, /\n\*nat\n/);
  });
});

describe('manifests: Trace Packet end to end', () => {
  it('the diagram gets the route client → node and where each outcome arrives, its lines in the node dump', () => {
    const view = seed('seed-003');
    const r = runManifestTrace(view, 'tcp 172.18.0.100 -> 172.18.255.200:80');
    assert.ok(r.ok, r.ok ? '' : r.error);
    assert.deepEqual(
      r.diagram.route.map(h => [h.kind, h.name, h.address]),
      [
        ['client', 'outside client', '172.18.0.100'],
        ['node', 'myk8s-worker', '172.18.0.4'],
      ],
    );
    assert.match(r.diagram.route[1]!.reason, /^MetalLB L2: speakers for pool my-ippool/);
    assert.deepEqual(
      r.diagram.outcomes.map(o => o.percent),
      ['50%', '50%'],
    );
    assert.ok(
      r.diagram.outcomes.some(o =>
        /^node myk8s-worker2 172\.18\.0\.5 → pod default\/webpod2 10\.10\.1\.11:80 \(source seen 172\.18\.0\.4/.test(
          o.reaches ?? '',
        ),
      ),
      JSON.stringify(r.diagram.outcomes),
    );
    // Every drawn rule points at its line in the document "Show kube-proxy Rules" shows for the node.
    const doc = r.dump.text.split('\n');
    const rules: { label: string; detail: string | null; line: number | null }[] = [];
    const walk = (s: typeof r.diagram.flow) => {
      for (const n of s.nodes) if (n.kind === 'rule') rules.push(n);
      for (const b of s.branches) walk(b.segment);
    };
    walk(r.diagram.flow);
    assert.ok(rules.length > 5);
    for (const n of rules) {
      assert.ok(
        doc[n.line!]!.startsWith(`-A ${n.detail!.split(' ')[1]} `),
        `${n.label} → line ${n.line}: ${doc[n.line!]}`,
      );
      assert.ok(n.detail!.endsWith(` · line ${n.line! + 1}`), `${n.label}: ${n.detail} names the document's line`);
    }
    assert.equal(r.dump.text, nodeDump(view, 'myk8s-worker').text);
  });

  it('says clearly when there is nothing to trace', () => {
    const noServices = new ClusterView(
      'x',
      seedFiles('seed-003').filter(f => !f.file.endsWith('services.yaml')),
    );
    assert.match(
      nothingToTrace(noServices)!,
      /^Nothing to trace: the manifests of x define no Service port\. Add a Service/,
    );
    // Without Node objects the nodes the pods name are predicted (issue 11): there is something to trace.
    const noNodes = new ClusterView(
      'y',
      seedFiles('seed-003').filter(f => f.file.endsWith('services.yaml') || f.file.endsWith('webpods.yaml')),
    );
    assert.equal(nothingToTrace(noNodes), null);
    assert.deepEqual(
      noNodes.model.nodes.map(n => [n.name, n.predicted]),
      [
        ['myk8s-worker', true],
        ['myk8s-worker2', true],
      ],
    );
    const bad = runManifestTrace(seed('seed-003'), 'tcp 172.18.0.100 -> 172.18.255.200');
    assert.ok(!bad.ok && /needs a destination port/.test(bad.error));
    // No Service there: the node that receives it cannot be told.
    const lost = runManifestTrace(seed('seed-003'), 'tcp 198.51.100.1 -> 198.51.100.2:80');
    assert.ok(!lost.ok && /cannot tell which node receives/.test(lost.error));
  });

  it('suggests each Service port from outside and from inside', () => {
    const s = manifestSuggestions(seed('seed-003'));
    assert.deepEqual(
      s.slice(0, 2).map(x => [x.text, x.label]),
      [
        ['tcp 172.18.0.100 -> 172.18.255.200:80', 'default/svc1:svc1-webport LoadBalancer IP'],
        ['tcp 172.18.0.4 -> 10.200.1.11:80', 'default/svc1:svc1-webport ClusterIP from a process on myk8s-worker'],
      ],
    );
    assert.deepEqual(
      manifestSuggestions(seed('seed-003'), 'tcp 172.18.0.100 -> 172.18.255.202').map(x => x.text),
      ['tcp 172.18.0.100 -> 172.18.255.202:80'],
    );
  });
});

describe("partial manifests in the editor (the cluster model's budget on products)", () => {
  // Service big's 1,000 ports × 1,000 endpoints in 80 KB (before: the manifests' worker built a million
  // endpoints and synthesized four million rules).
  const view = new ClusterView('product', [{ file: 'file:///ws/product.yaml', text: productManifests() }]);

  it('puts the error on the Service, says so in the rules document and the trace, and keeps what came before', () => {
    const d = view.model.diagnostics.find(x => x.code === 'input-too-large');
    assert.ok(d);
    assert.equal(d.range.start.line, 12);
    assert.match(
      d.message,
      /Service default\/big \(line 13\) has 1000 ports × 1000 endpoints = 1000000 endpoint-port pairs/,
    );
    assert.deepEqual(
      view.model.servicePorts.map(p => p.name),
      ['early'],
    );
    const dump = nodeDump(view, view.model.nodes[0]!.name);
    assert.match(dump.text, /^# ⚠ partial manifests: file:\/\/\/ws\/product\.yaml: Service default\/big/m);
    const r = runManifestTrace(view, 'tcp 10.0.0.5 -> 10.96.0.20:80');
    assert.ok(r.ok, r.ok ? '' : r.error);
    assert.match(
      r.diagram.warnings[0] ?? '',
      /^partial manifests: .*from line 13, were left out: the answer is partial/,
    );
  });

  it('says the manifests were cut, not that the Service has no ports, when the budget left every Service out', () => {
    // Service big and its EndpointSlice alone.
    const text = productManifests().split('---\n').slice(2, 4).join('---\n');
    const only = new ClusterView('only', [{ file: 'file:///ws/only.yaml', text }]);
    const r = runManifestTrace(only, 'tcp 10.0.0.5 -> 10.96.0.10:1000');
    assert.ok(!r.ok);
    assert.match(
      r.error,
      /^Nothing to trace: the manifests of only were read only in part and no Service port is left \(partial manifests: file:\/\/\/ws\/only\.yaml: Service default\/big \(line 1\) has 1000 ports × 1000 endpoints/,
    );
    assert.doesNotMatch(r.error, /headless|without ports/);
  });

  it('counts for the mode of the setting (IPVS: real servers)', () => {
    const ipvs = new ClusterView('product', [{ file: 'file:///ws/product.yaml', text: productManifests() }], 'ipvs');
    assert.match(ipvs.model.partial ?? '', /= 1000000 IPVS real servers/);
  });
});

describe('partial manifests in the editor (the reader stopped at its budget)', () => {
  // Deployments asking for 100,000 replicas each spend the reader's budget (an entry per replica): the
  // second is not read, nor the Service after it.
  const text = budgetSpendingManifests(['a', 'b']);
  const view = new ClusterView('big', [{ file: 'file:///ws/big.yaml', text }]);

  it("the node's rules document and a trace to a Service past the cut say the answer is partial", () => {
    assert.ok(view.model.diagnostics.some(d => d.code === 'input-too-large' && d.range.start.line === 10));
    const dump = nodeDump(view, view.model.nodes[0]!.name);
    assert.match(dump.text, /^# ⚠ partial manifests: file:\/\/\/ws\/big\.yaml: .* from line 11, was not read/m);
    const r = runManifestTrace(view, 'tcp 10.0.0.5 -> 10.96.0.30:80');
    assert.ok(r.ok, r.ok ? '' : r.error);
    assert.match(
      r.diagram.warnings[0] ?? '',
      /^partial manifests: .*from line 11, was not read: the answer is partial/,
    );
  });

  it('gives each Service port its CodeLens row from an index, not a scan per Service', () => {
    const many = Array.from(
      { length: 20_000 },
      (_, i) =>
        `- {apiVersion: v1, kind: Service, metadata: {name: s${i}}, spec: {clusterIP: 10.96.${i >> 8}.${i & 255}, ports: [{port: 80}, {port: 81}]}}\n`,
    ).join('');
    const big = new ClusterView('many', [
      { file: 'file:///ws/many.yaml', text: `apiVersion: v1\nkind: List\nitems:\n${many}` },
    ]);
    const t0 = performance.now();
    let rows = 0;
    for (const s of big.servicesIn('file:///ws/many.yaml'))
      for (const sp of big.portsOf(s)) if (big.portIndex(sp) >= 0) rows++;
    assert.equal(rows, 40_000);
    // 40,000 ports scanned per Service took about 20 s; the index answers in milliseconds.
    assert.ok(performance.now() - t0 < 2000, `${performance.now() - t0} ms`);
  });
});
