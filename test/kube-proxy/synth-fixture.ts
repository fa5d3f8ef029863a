/**
 * Loads a kube-proxy test fixture (test/fixtures/kube-proxy/<Test>: inputs.yaml, proxier.json, expected
 * rules and flows copied from kubernetes pkg/proxy/iptables/proxier_test.go) and synthesizes the rules
 * kube-proxy would write for it, configured exactly as that test's fake proxier.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { readManifests } from '../../src/engine/kube/manifest/read.ts';
import { buildClusterModel } from '../../src/engine/kube/model/build.ts';
import { type KubeProxyRules, synthesizeIptables } from '../../src/engine/kube/modes/iptables/synth.ts';
import { FIXTURES } from '../helpers/fixtures.ts';

export interface ProxierConfig {
  ipFamily: 'IPv4' | 'IPv6';
  nodeName: string;
  nodeIP: string;
  localDetector: { mode: string; cidr?: string };
  masqueradeAll: boolean;
  masqueradeMark: string;
  localhostNodePorts: boolean;
  nodePortAddresses: string[] | null;
  conntrackTCPLiberal: boolean;
  nfAcctCounters: Record<string, boolean>;
  iptablesHasRandomFully: boolean;
  packetFlow: { nodeIPs: string[]; localIPs: string[] };
  syncMode?: string;
}

export interface Flow {
  name: string;
  sourceIP: string;
  protocol: string;
  destIP: string;
  destPort: number;
  output: string;
  masq: boolean;
}

export interface KubeFixture {
  readonly name: string;
  readonly dir: string;
  readonly proxier: ProxierConfig;
  readonly flows: Flow[];
  readonly expected: string | null;
  readonly expectedChains: { table: 'filter' | 'nat'; chain: string; rules: string[] }[] | null;
  synth(): KubeProxyRules;
}

export function kubeFixtures(): KubeFixture[] {
  const root = join(FIXTURES, 'kube-proxy');
  return readdirSync(root)
    .filter(d => existsSync(join(root, d, 'inputs.yaml')) && existsSync(join(root, d, 'proxier.json')))
    .sort()
    .map(name => {
      const dir = join(root, name);
      const read = (f: string) => (existsSync(join(dir, f)) ? readFileSync(join(dir, f), 'utf8') : null);
      const proxier = JSON.parse(read('proxier.json')!) as ProxierConfig;
      return {
        name,
        dir,
        proxier,
        flows: JSON.parse(read('flows.json') ?? '[]') as Flow[],
        expected: read('expected.rules'),
        expectedChains: read('expected_chains.json') ? JSON.parse(read('expected_chains.json')!) : null,
        synth: () => {
          const set = readManifests([{ file: `${name}/inputs.yaml`, text: read('inputs.yaml')! }]);
          const model = buildClusterModel(set, { predict: false });
          const v6 = proxier.ipFamily === 'IPv6';
          const nodeIPs = v6
            ? proxier.packetFlow.nodeIPs.filter(ip => ip.includes(':'))
            : [proxier.nodeIP, ...proxier.packetFlow.nodeIPs.filter(ip => !ip.includes(':') && ip !== proxier.nodeIP)];
          return synthesizeIptables(model, {
            nodeName: proxier.nodeName,
            nodeIPs,
            family: v6 ? 6 : 4,
            masqueradeMark: proxier.masqueradeMark,
            randomFully: proxier.iptablesHasRandomFully,
            nfacct: {
              ctStateInvalid: !!proxier.nfAcctCounters?.ct_state_invalid_dropped_pkts,
              localhostNodePorts: !!proxier.nfAcctCounters?.localhost_nps_accepted_pkts,
            },
            conntrackTCPLiberal: proxier.conntrackTCPLiberal,
            clusterCIDR: proxier.localDetector.mode === 'ClusterCIDR' ? (proxier.localDetector.cidr ?? null) : null,
            masqueradeAll: proxier.masqueradeAll,
            localhostNodePorts: proxier.localhostNodePorts,
            nodePortAddresses: proxier.nodePortAddresses,
          });
        },
      };
    });
}
