/**
 * kube-proxy IPVS mode synthesized from manifests: the seed-002 example (kind, kubeProxyMode ipvs) and a
 * small cluster exercising persistence, mh, externalTrafficPolicy Local, UDP NodePorts, external IPs and
 * loadBalancerSourceRanges. Lines are the forms pkg/proxy/ipvs/proxier.go writes and ipvsadm / ipset /
 * iptables-save print; the texts must read back through packetlens's own parsers without errors.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseIpsetSave } from '../../src/engine/ipset/store.ts';
import { parseIpvsadmList } from '../../src/engine/ipvs/parse-list.ts';
import { parseIpvsadmRules } from '../../src/engine/ipvs/parse-rules.ts';
import { renderIpvsadmList, renderIpvsadmRules } from '../../src/engine/ipvs/render.ts';
import { parseIptables } from '../../src/engine/iptables/parse.ts';
import { renderIpsetSave, renderIpvsNodeSave, renderIpvsRestore } from '../../src/engine/kube/modes/ipvs/render.ts';
import { synthesizeIpvs } from '../../src/engine/kube/modes/ipvs/synth.ts';
import { readManifests } from '../../src/engine/kube/manifest/read.ts';
import { buildClusterModel } from '../../src/engine/kube/model/build.ts';
import { ROOT } from '../helpers/fixtures.ts';

function example(dir: string) {
  const d = join(ROOT, 'examples', dir);
  return buildClusterModel(
    readManifests(
      readdirSync(d)
        .filter(f => f.endsWith('.yaml'))
        .map(f => ({ file: f, text: readFileSync(join(d, f), 'utf8') })),
    ),
  );
}

const lines = (text: string) => text.split('\n');

describe('seed 002 example: kind with kubeProxyMode ipvs', () => {
  const m = example('seed-002');
  const st = synthesizeIpvs(m, { nodeName: 'ipvs-worker' });

  it('reads the manifests cleanly and takes IPVS mode with the rr default', () => {
    assert.deepEqual(m.diagnostics, []);
    assert.equal(m.kubeProxy.mode, 'ipvs');
    assert.equal(m.kubeProxy.ipvsScheduler, 'rr');
  });

  it('lists the virtual servers as ipvsadm -Ln does', () => {
    assert.equal(
      renderIpvsadmList(st.table),
      [
        'IP Virtual Server version 1.2.1 (size=4096)',
        'Prot LocalAddress:Port Scheduler Flags',
        '  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn',
        // ipvs_cmp_services subtracts addresses as int: 172.18.0.3 sorts before 10.96.0.11.
        'TCP  172.18.0.3:30080 rr',
        '  -> 10.244.1.2:80                Masq    1      0          0         ',
        '  -> 10.244.2.2:80                Masq    1      0          0         ',
        'TCP  10.96.0.11:80 rr',
        '  -> 10.244.1.2:80                Masq    1      0          0         ',
        '  -> 10.244.2.2:80                Masq    1      0          0         ',
        '',
      ].join('\n'),
    );
    assert.deepEqual(lines(renderIpvsadmRules(st.table)).slice(0, 2), [
      '-A -t 172.18.0.3:30080 -s rr',
      '-a -t 172.18.0.3:30080 -r 10.244.1.2:80 -m -w 1',
    ]);
    assert.deepEqual(st.bound, ['10.96.0.11']);
  });

  it("fills the ipsets; the hairpin set holds only this node's endpoint", () => {
    const text = renderIpsetSave(st);
    for (const l of [
      'create KUBE-LOOP-BACK hash:ip,port,ip family inet hashsize 1024 maxelem 65536',
      'add KUBE-LOOP-BACK 10.244.1.2,tcp:80,10.244.1.2',
      'add KUBE-CLUSTER-IP 10.96.0.11,tcp:80',
      'create KUBE-NODE-PORT-TCP bitmap:port range 0-65535',
      'add KUBE-NODE-PORT-TCP 30080',
      'create KUBE-IPVS-IPS hash:ip family inet hashsize 1024 maxelem 65536',
      'add KUBE-IPVS-IPS 10.96.0.11',
    ])
      assert.ok(lines(text).includes(l), `missing: ${l}`);
    assert.ok(!text.includes('10.244.2.2,tcp:80,10.244.2.2'), "the other node's endpoint is not hairpinned here");
    assert.equal(lines(text).filter(l => l.startsWith('create ')).length, 17, 'all 17 sets are created, empty or not');
    assert.deepEqual(parseIpsetSave(text).diagnostics, []);
  });

  it('writes the iptables rules kube-proxy restores, in its order', () => {
    assert.equal(
      renderIpvsRestore(st),
      [
        '*nat',
        ':KUBE-SERVICES - [0:0]',
        ':KUBE-POSTROUTING - [0:0]',
        ':KUBE-NODE-PORT - [0:0]',
        ':KUBE-LOAD-BALANCER - [0:0]',
        ':KUBE-MARK-MASQ - [0:0]',
        '-A KUBE-SERVICES -s 127.0.0.0/8 -j RETURN',
        '-A KUBE-POSTROUTING -m comment --comment "Kubernetes endpoints dst ip:port, source ip for solving hairpin purpose" -m set --match-set KUBE-LOOP-BACK dst,dst,src -j MASQUERADE',
        '-A KUBE-NODE-PORT -p tcp -m comment --comment "Kubernetes nodeport TCP port for masquerade purpose" -m set --match-set KUBE-NODE-PORT-TCP dst -j KUBE-MARK-MASQ',
        '-A KUBE-SERVICES -m comment --comment "Kubernetes service cluster ip + port for masquerade purpose" -m set --match-set KUBE-CLUSTER-IP dst,dst ! -s 10.244.0.0/16 -j KUBE-MARK-MASQ',
        '-A KUBE-SERVICES -m addrtype --dst-type LOCAL -j KUBE-NODE-PORT',
        '-A KUBE-LOAD-BALANCER -j KUBE-MARK-MASQ',
        '-A KUBE-SERVICES -m set --match-set KUBE-CLUSTER-IP dst,dst -j ACCEPT',
        '-A KUBE-POSTROUTING -m mark ! --mark 0x004000/0x004000 -j RETURN',
        '-A KUBE-POSTROUTING -j MARK --xor-mark 0x004000',
        '-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE --random-fully',
        '-A KUBE-MARK-MASQ -j MARK --or-mark 0x004000',
        'COMMIT',
        '*filter',
        ':KUBE-FORWARD - [0:0]',
        ':KUBE-NODE-PORT - [0:0]',
        ':KUBE-PROXY-FIREWALL - [0:0]',
        ':KUBE-SOURCE-RANGES-FIREWALL - [0:0]',
        ':KUBE-IPVS-FILTER - [0:0]',
        ':KUBE-IPVS-OUT-FILTER - [0:0]',
        '-A KUBE-SOURCE-RANGES-FIREWALL -j DROP',
        '-A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x004000/0x004000 -j ACCEPT',
        '-A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT',
        '-A KUBE-NODE-PORT -m comment --comment "Kubernetes health check node port" -m set --match-set KUBE-HEALTH-CHECK-NODE-PORT dst -j ACCEPT',
        '-A KUBE-IPVS-FILTER -m set --match-set KUBE-LOAD-BALANCER dst,dst -j RETURN',
        '-A KUBE-IPVS-FILTER -m set --match-set KUBE-CLUSTER-IP dst,dst -j RETURN',
        '-A KUBE-IPVS-FILTER -m set --match-set KUBE-EXTERNAL-IP dst,dst -j RETURN',
        '-A KUBE-IPVS-FILTER -m set --match-set KUBE-EXTERNAL-IP-LOCAL dst,dst -j RETURN',
        '-A KUBE-IPVS-FILTER -m set --match-set KUBE-HEALTH-CHECK-NODE-PORT dst -j RETURN',
        '-A KUBE-IPVS-FILTER -m conntrack --ctstate NEW -m set --match-set KUBE-IPVS-IPS dst -j REJECT',
        'COMMIT',
        '',
      ].join('\n'),
    );
  });

  it("renders the node's iptables-save view with the jump rules, which packetlens reads without errors", () => {
    const save = renderIpvsNodeSave(st);
    for (const l of [
      '-A INPUT -m comment --comment "kubernetes ipvs access filter" -j KUBE-IPVS-FILTER',
      '-A FORWARD -m comment --comment "kube-proxy firewall rules" -j KUBE-PROXY-FIREWALL',
      '-A OUTPUT -m comment --comment "kubernetes ipvs access filter" -j KUBE-IPVS-OUT-FILTER',
      '-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
      '-A POSTROUTING -m comment --comment "kubernetes postrouting rules" -j KUBE-POSTROUTING',
      '-A KUBE-SERVICES ! -s 10.244.0.0/16 -m comment --comment "Kubernetes service cluster ip + port for masquerade purpose" -m set --match-set KUBE-CLUSTER-IP dst,dst -j KUBE-MARK-MASQ',
      '-A KUBE-IPVS-FILTER -m conntrack --ctstate NEW -m set --match-set KUBE-IPVS-IPS dst -j REJECT --reject-with icmp-port-unreachable',
      '-A KUBE-MARK-MASQ -j MARK --set-xmark 0x4000/0x4000',
    ])
      assert.ok(lines(save).includes(l), `missing: ${l}`);
    const input = lines(save).filter(l => l.startsWith('-A INPUT '));
    assert.deepEqual(
      input.map(l => l.split(' -j ')[1]),
      ['KUBE-IPVS-FILTER', 'KUBE-PROXY-FIREWALL', 'KUBE-NODE-PORT'],
      'each jump is prepended, so the last ensured comes first',
    );
    const rs = parseIptables(save, { file: 'save' });
    assert.deepEqual(
      rs.diagnostics.filter(d => d.severity === 'error'),
      [],
    );
  });
});

const CLUSTER = `
apiVersion: v1
kind: Node
metadata: {name: n1}
spec: {podCIDR: 10.244.1.0/24}
status: {addresses: [{type: InternalIP, address: 192.168.0.11}]}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
spec: {podCIDR: 10.244.2.0/24}
status: {addresses: [{type: InternalIP, address: 192.168.0.12}]}
---
kind: KubeProxyConfiguration
apiVersion: kubeproxy.config.k8s.io/v1alpha1
mode: ipvs
clusterCIDR: 10.244.0.0/16
ipvs: {scheduler: mh}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec:
  type: LoadBalancer
  clusterIP: 10.96.0.20
  externalTrafficPolicy: Local
  healthCheckNodePort: 32000
  sessionAffinity: ClientIP
  loadBalancerSourceRanges: [203.0.113.0/24]
  ports:
  - {name: http, port: 80, targetPort: 8080, nodePort: 30080}
status: {loadBalancer: {ingress: [{ip: 198.51.100.7}]}}
---
apiVersion: v1
kind: Service
metadata: {name: dns, namespace: default}
spec:
  type: NodePort
  clusterIP: 10.96.0.10
  externalIPs: [192.0.2.53]
  ports:
  - {name: dns, protocol: UDP, port: 53, nodePort: 30053}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-1, namespace: default, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
endpoints:
- {addresses: [10.244.1.5], nodeName: n1}
- {addresses: [10.244.2.5], nodeName: n2}
ports: [{name: http, port: 8080, protocol: TCP}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: dns-1, namespace: default, labels: {kubernetes.io/service-name: dns}}
addressType: IPv4
endpoints:
- {addresses: [10.244.2.9], nodeName: n2}
ports: [{name: dns, port: 53, protocol: UDP}]
`;

describe('a cluster with affinity, mh, Local policy, UDP NodePorts, external IPs and source ranges', () => {
  const m = buildClusterModel(readManifests([{ file: 'cluster.yaml', text: CLUSTER }]), { predict: false });
  const st = synthesizeIpvs(m, { nodeName: 'n1' });
  const list = renderIpvsadmList(st.table);

  it('reads cleanly', () => assert.deepEqual(m.diagnostics, []));

  it('persistence, mh-port, Local policy and UDP show in the virtual servers', () => {
    for (const l of [
      'TCP  198.51.100.7:80 mh (mh-port) persistent 10800',
      'TCP  192.168.0.11:30080 mh (mh-port) persistent 10800',
      'TCP  10.96.0.20:80 mh (mh-port) persistent 10800',
      'UDP  192.0.2.53:53 mh (mh-port)',
      'UDP  192.168.0.11:30053 mh (mh-port)',
    ])
      assert.ok(lines(list).includes(l), `missing: ${l}`);
    const rsOf = (key: string) =>
      st.table.services
        .find(s => `${s.protocol} ${s.addr}:${s.port}` === key)!
        .realServers.map(r => `${r.addr}:${r.port}`);
    assert.deepEqual(rsOf('TCP 10.96.0.20:80'), ['10.244.1.5:8080', '10.244.2.5:8080'], 'ClusterIP: all endpoints');
    assert.deepEqual(rsOf('TCP 198.51.100.7:80'), ['10.244.1.5:8080'], 'Local policy: this node only');
    assert.deepEqual(rsOf('UDP 192.168.0.11:30053'), ['10.244.2.9:53'], 'Cluster policy');
    assert.deepEqual(parseIpvsadmList(list).diagnostics, []);
    assert.deepEqual(parseIpvsadmRules(renderIpvsadmRules(st.table)).table.services.length, st.table.services.length);
    assert.deepEqual([...st.bound].sort(), ['10.96.0.10', '10.96.0.20', '192.0.2.53', '198.51.100.7']);
  });

  it('fills the Local, firewall, health-check and UDP sets', () => {
    const text = renderIpsetSave(st);
    for (const l of [
      'add KUBE-LOAD-BALANCER 198.51.100.7,tcp:80',
      'add KUBE-LOAD-BALANCER-LOCAL 198.51.100.7,tcp:80',
      'add KUBE-LOAD-BALANCER-FW 198.51.100.7,tcp:80',
      'add KUBE-LOAD-BALANCER-SOURCE-CIDR 198.51.100.7,tcp:80,203.0.113.0/24',
      'add KUBE-NODE-PORT-LOCAL-TCP 30080',
      'add KUBE-NODE-PORT-UDP 30053',
      'add KUBE-EXTERNAL-IP 192.0.2.53,udp:53',
      'add KUBE-HEALTH-CHECK-NODE-PORT 32000',
      'add KUBE-LOOP-BACK 10.244.1.5,tcp:8080,10.244.1.5',
    ])
      assert.ok(lines(text).includes(l), `missing: ${l}`);
    assert.ok(
      !lines(text).some(l => l.startsWith('add KUBE-LOAD-BALANCER-SOURCE-IP')),
      'the node is not in the source ranges',
    );
    assert.ok(
      lines(renderIpsetSave(st, { protocolQualifiedPorts: true })).includes('add KUBE-NODE-PORT-UDP udp:30053'),
    );
  });

  it('writes the Local, external-IP, firewall and node-access rules', () => {
    const save = lines(renderIpvsNodeSave(st));
    for (const l of [
      '-A KUBE-LOAD-BALANCER -m comment --comment "Kubernetes service load balancer ip + port with externalTrafficPolicy=local" -m set --match-set KUBE-LOAD-BALANCER-LOCAL dst,dst -j RETURN',
      '-A KUBE-NODE-PORT -p tcp -m comment --comment "Kubernetes nodeport TCP port with externalTrafficPolicy=local" -m set --match-set KUBE-NODE-PORT-LOCAL-TCP dst -j RETURN',
      '-A KUBE-NODE-PORT -p udp -m comment --comment "Kubernetes nodeport UDP port for masquerade purpose" -m set --match-set KUBE-NODE-PORT-UDP dst -j KUBE-MARK-MASQ',
      '-A KUBE-SERVICES -m comment --comment "Kubernetes service external ip + port for masquerade and filter purpose" -m set --match-set KUBE-EXTERNAL-IP dst,dst -m physdev ! --physdev-is-in -m addrtype ! --src-type LOCAL -j ACCEPT',
      '-A KUBE-PROXY-FIREWALL -m comment --comment "Kubernetes service load balancer ip + port for load balancer with sourceRange" -m set --match-set KUBE-LOAD-BALANCER-FW dst,dst -j KUBE-SOURCE-RANGES-FIREWALL',
      '-A KUBE-SOURCE-RANGES-FIREWALL -m comment --comment "Kubernetes service load balancer ip + port + source cidr for packet filter purpose" -m set --match-set KUBE-LOAD-BALANCER-SOURCE-CIDR dst,dst,src -j RETURN',
      // libxt_ipvs prints --vproto as a number and --vaddr with its mask.
      '-A KUBE-IPVS-OUT-FILTER -s 198.51.100.7/32 -m ipvs --vproto 6 --vaddr 198.51.100.7/32 --vport 80 -j DROP',
    ])
      assert.ok(save.includes(l), `missing: ${l}`);
    assert.ok(
      renderIpvsRestore(st).includes(
        '-A KUBE-IPVS-OUT-FILTER -s 198.51.100.7 -m ipvs --vaddr 198.51.100.7 --vproto tcp --vport 80 -j DROP',
      ),
    );
  });

  it('a node inside the source ranges may reach the load-balancer IP (KUBE-LOAD-BALANCER-SOURCE-IP)', () => {
    const inside = buildClusterModel(
      readManifests([{ file: 'c.yaml', text: CLUSTER.replace('203.0.113.0/24', '192.168.0.0/24') }]),
      { predict: false },
    );
    const s2 = synthesizeIpvs(inside, { nodeName: 'n1' });
    assert.ok(lines(renderIpsetSave(s2)).includes('add KUBE-LOAD-BALANCER-SOURCE-IP 198.51.100.7,tcp:80,198.51.100.7'));
    assert.ok(!renderIpvsRestore(s2).includes('KUBE-IPVS-OUT-FILTER -s'));
  });
});
