/**
 * kube-proxy's nftables mode against kube-proxy's own expectations (test/fixtures/kube-proxy-nft/<Test>,
 * copied from kubernetes pkg/proxy/nftables/proxier_test.go; see each SOURCE.md): the synthesized
 * transaction equals the test's expected rules after kube-proxy's own normalisation, and its packet flows
 * traced through packetlens end where kube-proxy's test says.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseRuleset, tracePacket, type TraceOutcome } from '../../src/engine/api.ts';
import { readManifests } from '../../src/engine/kube/manifest/read.ts';
import { buildClusterModel } from '../../src/engine/kube/model/build.ts';
import { renderNftScript } from '../../src/engine/kube/modes/nftables/render.ts';
import { synthesizeNftables } from '../../src/engine/kube/modes/nftables/synth.ts';
import { FIXTURES } from '../helpers/fixtures.ts';

const OBJECT_ORDER: Record<string, number> = { table: 10, chain: 9, rule: 8, set: 7, map: 6, element: 5 };

/** helpers_test.go sortNFTablesTransaction. */
export function sortNFTablesTransaction(tx: string): string {
  const lines = tx.split('\n').filter(l => l !== '' && !l.startsWith('#'));
  const keyed = lines.map((line, i) => ({ line, w: line.split(' '), i }));
  keyed.sort((a, b) => {
    if (a.w.length < 5 || b.w.length < 5) return a.i - b.i;
    if (a.w[1] !== b.w[1]) return (OBJECT_ORDER[b.w[1]!] ?? 0) - (OBJECT_ORDER[a.w[1]!] ?? 0);
    if (a.w[4] !== b.w[4]) return a.w[4]! < b.w[4]! ? -1 : 1;
    if (a.w[1] === 'rule') return a.i - b.i;
    return a.line < b.line ? -1 : a.line > b.line ? 1 : a.i - b.i;
  });
  return keyed.map(k => k.line).join('\n');
}

interface NftProxier {
  nodeName: string;
  nodeIPs: string[];
  podCIDR: string;
  serviceCIDRs: string[];
  nodePortAddresses: string[];
  masqueradeMark: string;
  masqueradeAll: boolean;
}

function fixture(name: string) {
  const dir = join(FIXTURES, 'kube-proxy-nft', name);
  const read = (f: string) => readFileSync(join(dir, f), 'utf8');
  // A step of a multi-sync test (TestSyncProxyRulesRepeated/<step>) shares its test's proxier.json.
  const proxierFile = existsSync(join(dir, 'proxier.json'))
    ? join(dir, 'proxier.json')
    : join(dir, '..', 'proxier.json');
  const proxier = JSON.parse(readFileSync(proxierFile, 'utf8')) as NftProxier;
  const model = buildClusterModel(readManifests([{ file: `${name}/inputs.yaml`, text: read('inputs.yaml') }]), {
    predict: false,
  });
  const rules = synthesizeNftables(model, {
    nodeName: proxier.nodeName,
    nodeIPs: proxier.nodeIPs,
    family: 4,
    masqueradeMark: proxier.masqueradeMark,
    clusterCIDR: proxier.podCIDR,
    masqueradeAll: proxier.masqueradeAll,
    nodePortAddresses: proxier.nodePortAddresses,
    serviceCIDRs: proxier.serviceCIDRs,
  });
  return {
    proxier,
    script: renderNftScript(rules),
    expected: existsSync(join(dir, 'expected.nft')) ? read('expected.nft') : null,
    flows: existsSync(join(dir, 'flows.json'))
      ? (JSON.parse(read('flows.json')) as {
          name: string;
          sourceIP: string;
          protocol?: string;
          destIP: string;
          destPort: number;
          output: string;
          masq?: boolean;
        }[])
      : [],
  };
}

describe("kube-proxy's nftables goldens", () => {
  it("the normalisation is kube-proxy's: objects by type then name, rules of a chain in order", () => {
    assert.equal(
      sortNFTablesTransaction(
        '# c\nadd rule ip t b x\nadd chain ip t b\n\nadd rule ip t a y\nadd rule ip t b w\nadd table ip t { }',
      ),
      'add table ip t { }\nadd chain ip t b\nadd rule ip t a y\nadd rule ip t b x\nadd rule ip t b w',
    );
  });

  for (const name of ['TestOverallNFTablesRules', 'TestBadIPs'])
    it(name, () => {
      const f = fixture(name);
      assert.equal(sortNFTablesTransaction(f.script), sortNFTablesTransaction(f.expected!));
    });

  // The states of TestSyncProxyRulesRepeated that a first sync of the same objects gives (the steps with
  // stale chains — flushed, not yet deleted — need kube-proxy's memory of earlier syncs; see its SOURCE.md).
  const repeated = join(FIXTURES, 'kube-proxy-nft', 'TestSyncProxyRulesRepeated');
  for (const step of readdirSync(repeated, { withFileTypes: true }).filter(d => d.isDirectory()))
    it(`TestSyncProxyRulesRepeated, step ${step.name}`, () => {
      const f = fixture(`TestSyncProxyRulesRepeated/${step.name}`);
      assert.equal(sortNFTablesTransaction(f.script), sortNFTablesTransaction(f.expected!));
    });
});

function outputOf(o: TraceOutcome): string {
  if (o.disposition === 'rejected') return 'REJECT';
  if (o.disposition === 'dropped' && o.steps.at(-1)?.verdict === 'drop') return 'DROP';
  return o.dnat ?? '';
}

for (const name of ['TestClusterIPGeneral']) {
  describe(`kube-proxy nftables packet flows: ${name}`, () => {
    const f = fixture(name);
    const parsed = parseRuleset(f.script, { file: `${name}.nft` });
    it('the synthesized script reads without errors', () => {
      assert.equal(parsed.format, 'nft-script');
      assert.deepEqual(
        parsed.diagnostics.filter(d => d.severity === 'error').map(d => d.message),
        [],
      );
    });
    for (const c of f.flows)
      it(c.name, () => {
        const r = tracePacket(
          parsed.ruleset,
          {
            protocol: (c.protocol || 'tcp').toLowerCase() as 'tcp',
            src: c.sourceIP,
            dst: c.destIP,
            dport: c.destPort,
            from: 'outside',
            in: 'eth0',
          },
          { node: { addresses: f.proxier.nodeIPs, uplink: 'eth0' } },
        );
        assert.ok(r.ok, r.ok ? '' : r.error);
        assert.equal([...new Set(r.trace.outcomes.map(outputOf))].sort().join(', '), c.output);
        const masq = r.trace.outcomes.some(o => o.masquerade || (Number(o.packet.mark) & 0x4000) !== 0);
        assert.equal(masq, c.masq ?? false);
      });
  });
}
