/**
 * kube-proxy's own IPVS-mode expectations (test/fixtures/kube-proxy-ipvs, copied from
 * pkg/proxy/ipvs/proxier_test.go; SOURCE.md) against the synthesizer: the same Services and EndpointSlices
 * in, the same virtual servers, real servers, ipset entries and chain rules out, compared the way the Go
 * helpers (reflect.DeepEqual on the fake IPVS, checkIPSet, checkIptables) compare them.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { serviceKey, hostPort } from '../../src/engine/ipvs/types.ts';
import { renderIpvsRestore } from '../../src/engine/kube/modes/ipvs/render.ts';
import { type IpvsProxyState, synthesizeIpvs } from '../../src/engine/kube/modes/ipvs/synth.ts';
import { readManifests } from '../../src/engine/kube/manifest/read.ts';
import { buildClusterModel } from '../../src/engine/kube/model/build.ts';
import { FIXTURES } from '../helpers/fixtures.ts';

const DIR = join(FIXTURES, 'kube-proxy-ipvs');

interface Expected {
  readonly test: string;
  readonly ipvs?: { readonly exact: boolean; readonly count?: number; readonly services: Record<string, string[]> };
  readonly ipsets?: Record<string, string[]>;
  readonly chains?: Record<string, [string, string | null][]>;
}

function synth(name: string): IpvsProxyState {
  const d = join(DIR, name);
  const set = readManifests([{ file: 'inputs.yaml', text: readFileSync(join(d, 'inputs.yaml'), 'utf8') }]);
  // Objects as the apiserver hands them to kube-proxy: nothing predicted.
  const model = buildClusterModel(set, { predict: false });
  assert.deepEqual(
    model.diagnostics.filter(x => x.severity === 'error'),
    [],
    `${name}: inputs read cleanly`,
  );
  const p = JSON.parse(readFileSync(join(d, 'proxier.json'), 'utf8')) as {
    nodeName: string;
    nodeIPs: string[];
    nodePortAddresses: string[] | null;
    scheduler: string;
    clusterCIDR: string | null;
  };
  return synthesizeIpvs(model, {
    nodeName: p.nodeName,
    nodeIPs: p.nodeIPs,
    nodePortAddresses: p.nodePortAddresses,
    scheduler: p.scheduler,
    clusterCIDR: p.clusterCIDR,
    family: 4,
  });
}

/** `checkIptables`: the chain's rules in nat, then filter, as [jump, --match-set name or null]. */
function chainRules(state: IpvsProxyState, chain: string): [string, string | null][] {
  return [...state.nat.rules, ...state.filter.rules]
    .filter(r => r.split(' ')[1] === chain)
    .map(r => {
      const w = r.split(' ');
      const set = w.indexOf('--match-set');
      return [w[w.indexOf('-j') + 1]!, set >= 0 ? w[set + 1]! : null];
    });
}

const cases = readdirSync(DIR)
  .filter(n => existsSync(join(DIR, n, 'expected.json')))
  .sort();

describe('kube-proxy IPVS proxier_test.go expectations', () => {
  it('has the transcribed cases', () => assert.ok(cases.length >= 15, `${cases.length} cases`));

  for (const name of cases) {
    const expected = JSON.parse(readFileSync(join(DIR, name, 'expected.json'), 'utf8')) as Expected;
    it(expected.test, () => {
      const state = synth(name);
      if (expected.ipvs) {
        const got = new Map(state.table.services.map(s => [serviceKey(s), s]));
        if (expected.ipvs.exact)
          assert.deepEqual([...got.keys()].sort(), Object.keys(expected.ipvs.services).sort(), 'virtual servers');
        if (expected.ipvs.count !== undefined) assert.equal(got.size, expected.ipvs.count, 'number of virtual servers');
        for (const [key, rs] of Object.entries(expected.ipvs.services)) {
          const svc = got.get(key);
          assert.ok(svc, `virtual server ${key}`);
          assert.equal(svc.scheduler, 'rr');
          assert.equal(svc.persistent, null);
          assert.deepEqual(
            svc.realServers.map(r => hostPort(r.addr, r.port)).sort(),
            [...rs].sort(),
            `real servers of ${key}`,
          );
          assert.ok(svc.realServers.every(r => r.weight === 1 && r.forward === 'Masq'));
        }
      }
      for (const [set, entries] of Object.entries(expected.ipsets ?? {})) {
        const got = state.ipsets.find(s => s.name === set);
        assert.ok(got, `ipset ${set}`);
        assert.deepEqual([...got.entries].sort(), [...entries].sort(), `entries of ${set}`);
      }
      for (const [chain, rules] of Object.entries(expected.chains ?? {}))
        assert.deepEqual(chainRules(state, chain), rules, `chain ${chain}`);
    });
  }

  it('TestCreateAndLinkKubeChain: declares the nat and filter chains in kube-proxy order', () => {
    const restore = renderIpvsRestore(synth('TestIPv4Proxier-cluster-IP-service-with-no-endpoints'));
    const read = (f: string) => readFileSync(join(DIR, 'TestCreateAndLinkKubeChain', f), 'utf8');
    const nat = restore.slice(restore.indexOf('*nat\n') + 5);
    const filter = restore.slice(restore.indexOf('*filter\n') + 8);
    assert.ok(nat.startsWith(read('expected-nat-chains.txt')), nat.slice(0, 200));
    assert.ok(filter.startsWith(read('expected-filter-chains.txt')), filter.slice(0, 250));
  });
});
