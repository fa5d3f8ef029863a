/**
 * The renderers write each Service port's endpoint rules straight from its block (endpoint-rules.ts), in
 * iptables-save's form without going through kube-proxy's text. They must print exactly what the rule-by-
 * rule way prints: kube-proxy's lines (`rules`, checked against kube-proxy's own goldens elsewhere) grouped
 * by chain in the chain order, each rewritten by the general iptables-save rewrite. Checked on every
 * kube-proxy fixture, the seed example, and generated clusters with every feature the blocks cover
 * (affinity, Local policies, terminating endpoints, no endpoints, UDP and SCTP, IPv6, names iptables-save
 * must quote, large-cluster mode).
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readManifests } from '../../src/engine/kube/manifest/read.ts';
import { buildClusterModel } from '../../src/engine/kube/model/build.ts';
import { renderKubeProxyRestore, renderNodeSave } from '../../src/engine/kube/modes/iptables/render.ts';
import { generalSaveFormat } from '../../src/engine/kube/modes/iptables/save-format.ts';
import {
  type KubeProxyRules,
  type SynthOptions,
  synthesizeIptables,
} from '../../src/engine/kube/modes/iptables/synth.ts';
import { kubeFixtures } from '../kube-proxy/synth-fixture.ts';

/** Rules grouped by chain, the chains in `order` (each once), each chain's rules in write order. */
function grouped(rules: readonly string[], order: readonly string[]): string[] {
  const by = new Map<string, string[]>();
  for (const r of rules) {
    const chain = r.split(' ')[1]!;
    by.set(chain, [...(by.get(chain) ?? []), r]);
  }
  return [...new Set(order)].flatMap(c => by.get(c) ?? []);
}

/** renderKubeProxyRestore, rule by rule. */
function restoreReference(rules: KubeProxyRules): string {
  const rank = (c: string) => (c === 'KUBE-NODEPORTS' ? 0 : c === 'KUBE-SERVICES' ? 1 : c.startsWith('KUBE-') ? 2 : 3);
  const table = (name: string, t: KubeProxyRules['nat']) => {
    const chains = [...new Set(t.chains)].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
    return [`*${name}`, ...chains.map(c => `:${c} - [0:0]`), ...grouped(t.rules, chains), 'COMMIT'];
  };
  return [...table('filter', rules.filter), ...table('nat', rules.nat)].join('\n') + '\n';
}

/** The user chains and the rules of renderNodeSave's nat table, rule by rule through the general rewrite. */
function natSaveReference(rules: KubeProxyRules): string {
  const chains = [...new Set([...rules.nat.chains, 'KUBE-PROXY-CANARY'])].sort();
  return [
    ...chains.map(c => `:${c} - [0:0]`),
    ...grouped(rules.nat.rules, chains).map(r => generalSaveFormat(r, rules.family)),
  ].join('\n');
}

function natSave(rules: KubeProxyRules): string {
  const text = renderNodeSave(rules);
  const nat = text.slice(text.indexOf('*nat\n'));
  const lines = nat.split('\n').filter(l => l.startsWith(':KUBE-') || l.startsWith('-A KUBE-'));
  return lines.join('\n');
}

function check(what: string, rules: KubeProxyRules): number {
  assert.equal(renderKubeProxyRestore(rules), restoreReference(rules), `${what}: kube-proxy's form`);
  assert.equal(natSave(rules), natSaveReference(rules), `${what}: iptables-save's form`);
  return rules.nat.rules.length;
}

/** A cluster with one of each: affinity, Local policies, terminating and not-ready endpoints, LB ranges… */
function generated(v6: boolean): string {
  const docs: string[] = [
    `apiVersion: v1\nkind: Node\nmetadata: {name: n0}\nstatus: {addresses: [{type: InternalIP, address: ${v6 ? 'fd00::4' : '172.18.0.4'}}]}`,
    'apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {addresses: [{type: InternalIP, address: 172.18.0.5}]}',
  ];
  const names = ['plain', 'we"ird', "it's", 'two words', 'back\\slash'];
  for (let i = 0; i < 40; i++) {
    const type = ['ClusterIP', 'NodePort', 'LoadBalancer'][i % 3]!;
    const name = i < names.length ? names[i]! : `svc-${i}`;
    const ip = (k: number) => (v6 ? `fd00:10::${(i * 16 + k).toString(16)}` : `10.244.${k % 2}.${i * 5 + k + 2}`);
    const proto = ['TCP', 'UDP', 'SCTP'][i % 7 === 0 ? 1 : i % 11 === 0 ? 2 : 0];
    const spec = [
      `type: ${type}`,
      `clusterIP: ${v6 ? `fd00:96::${i.toString(16)}` : `10.96.0.${i + 1}`}`,
      `ports: [{name: p, port: ${80 + (i % 4)}, targetPort: 8080, protocol: ${proto}${type === 'ClusterIP' ? '' : `, nodePort: ${30000 + i}`}}]`,
      `sessionAffinity: ${i % 4 === 1 ? 'ClientIP' : 'None'}`,
      `internalTrafficPolicy: ${i % 5 === 2 ? 'Local' : 'Cluster'}`,
      ...(type === 'ClusterIP' ? [] : [`externalTrafficPolicy: ${i % 3 === 1 || i % 6 === 2 ? 'Local' : 'Cluster'}`]),
      ...(i % 9 === 0 ? [`externalIPs: [${v6 ? 'fd00:2::9' : `192.0.2.${i}`}]`] : []),
      ...(type === 'LoadBalancer' && i % 2 === 0
        ? [`loadBalancerSourceRanges: [${v6 ? 'fd00::/64' : '172.18.0.0/24'}]`]
        : []),
    ];
    const status =
      type === 'LoadBalancer'
        ? `\nstatus: {loadBalancer: {ingress: [{ip: ${v6 ? `fd00:255::${i}` : `172.18.255.${i}`}}]}}`
        : '';
    docs.push(
      `apiVersion: v1\nkind: Service\nmetadata: {name: '${name.replace(/'/g, "''")}', namespace: ns${i % 3}}\nspec:\n${spec.map(l => `  ${l}`).join('\n')}${status}`,
    );
    const count = i % 8 === 3 ? 0 : (i % 6) + 1;
    const eps = Array.from({ length: count }, (_, k) => {
      const terminating = (i + k) % 5 === 4;
      const ready = !terminating && (i + k) % 7 !== 6;
      return `- {addresses: ['${ip(k)}'], nodeName: n${k % 2}, conditions: {ready: ${ready}, serving: ${ready || terminating}, terminating: ${terminating}}}`;
    });
    docs.push(
      `apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: s${i}, namespace: ns${i % 3}, labels: {kubernetes.io/service-name: '${name.replace(/'/g, "''")}'}}\naddressType: ${v6 ? 'IPv6' : 'IPv4'}\nports: [{name: p, port: 8080, protocol: ${proto}}]\nendpoints:${eps.length ? `\n${eps.join('\n')}` : ' []'}`,
    );
  }
  return docs.join('\n---\n');
}

describe('endpoint blocks render as the rule-by-rule way does', () => {
  it('every kube-proxy fixture', () => {
    let rules = 0;
    for (const fx of kubeFixtures()) rules += check(fx.name, fx.synth());
    assert.ok(rules > 1000, `${rules} rules`);
  });

  it('the seed-003 example, every node', () => {
    const dir = join('examples', 'seed-003');
    const files = readdirSync(dir)
      .filter(f => f.endsWith('.yaml'))
      .map(f => ({ file: f, text: readFileSync(join(dir, f), 'utf8') }));
    const model = buildClusterModel(readManifests(files));
    for (const n of model.nodes) check(n.name, synthesizeIptables(model, { nodeName: n.name }));
  });

  it('generated clusters: affinity, Local policies, terminating endpoints, quoted names, IPv6, large-cluster mode', () => {
    for (const v6 of [false, true]) {
      const model = buildClusterModel(readManifests([{ file: 'gen.yaml', text: generated(v6) }]));
      const base: SynthOptions = { nodeName: 'n0', ...(v6 ? { family: 6 as const, nodeIPs: ['fd00::4'] } : {}) };
      for (const opts of [
        base,
        { ...base, nodeName: 'n1' },
        { ...base, largeClusterEndpointsThreshold: 10 },
        { ...base, clusterCIDR: v6 ? 'fd00::/48' : '10.244.0.0/16' },
      ]) {
        const rules = synthesizeIptables(model, opts);
        const n = check(`${v6 ? 'IPv6' : 'IPv4'} ${JSON.stringify(opts)}`, rules);
        assert.ok(n > 100, `${n} rules`);
        // The quoted names and affinity take the rule-by-rule path; the rest the direct one: both are here.
        assert.match(rules.nat.rules.join('\n'), /we"ird/);
        assert.match(rules.nat.rules.join('\n'), /-m recent --name KUBE-SEP-/);
      }
    }
  });
});
