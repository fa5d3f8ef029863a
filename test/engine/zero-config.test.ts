/**
 * Issue 11, "Zero-config, never falsely red": without node settings the node's address is symbolic
 * (`node(eth0)`), never missing; what the files imply about the node is used and labelled. Expected values
 * come from ../shared/seeds/003 (the kernel runs of the LoadBalancer packet in
 * ../shared/oracle/results/lb-ext-*: 50 % each to 10.10.1.11:80 and 10.10.4.12:80, source rewritten to the
 * receiving node's own address) and from kube-proxy's rule layout (nodePortAddresses).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  diffRulesets,
  parseIpsetSave,
  parseIptables,
  probabilitySums,
  tracePacket,
  type PacketInput,
  type Trace,
} from '../../src/engine/api.ts';
import { checkPacketText } from '../../src/editor/packet-suggest.ts';
import { traceText } from '../../src/editor/run-trace.ts';
import { readSettings } from '../../src/editor/settings.ts';
import { cli } from '../helpers/cli.ts';
import { ROOT, parseClean } from '../helpers/fixtures.ts';
import { analyze } from '../editor/helpers.ts';

const SEED = join(ROOT, 'examples', 'seed-003', 'node-myk8s-worker.rules');
const RULES = readFileSync(SEED, 'utf8');
const LB = 'tcp 172.18.0.100:40000 -> 172.18.255.200:80';

function trace(rules: string, input: PacketInput, node?: Parameters<typeof tracePacket>[2]): Trace {
  const r = tracePacket(parseClean(rules), input, node);
  if (!r.ok) throw new Error(r.error);
  return r.trace;
}

const fates = (t: Trace) => t.outcomes.map(o => [o.probabilityExact, o.disposition, o.dnat, o.snat, o.masquerade]);
const LB_FATES = [
  ['1/2', 'forwarded', '10.10.1.11:80', 'node(eth0)', true],
  ['1/2', 'forwarded', '10.10.4.12:80', 'node(eth0)', true],
];

describe('zero-config: the seed-003 LoadBalancer packet without a node address', () => {
  it('engine: two outcomes, 50 % each, masqueraded to the symbolic node address, and says what it assumed', () => {
    const t = trace(RULES, { protocol: 'tcp', src: '172.18.0.100', sport: 40000, dst: '172.18.255.200', dport: 80 });
    assert.deepEqual(fates(t), LB_FATES);
    assert.deepEqual(probabilitySums(t), ['1']);
    assert.ok(!t.outcomes.some(o => o.disposition === 'dropped'));
    assert.equal(t.node?.symbolic, 'node(eth0)');
    assert.ok(
      t.warnings.some(w => w.includes('node(eth0)') && w.includes('MASQUERADE source')),
      t.warnings.join('\n'),
    );
    assert.ok(t.outcomes.every(o => o.steps.some(s => s.verdict.startsWith('MASQUERADE → node(eth0)'))));
  });

  it('CLI without --node-ip: the same two outcomes, in text and JSON', () => {
    const text = cli('trace', SEED, '--packet', LB);
    assert.equal(text.code, 0);
    const all = text.out.join('\n');
    assert.match(all, /50%\s+forwarded → 10\.10\.1\.11:80 .*masqueraded to node\(eth0\)/);
    assert.match(all, /50%\s+forwarded → 10\.10\.4\.12:80 .*masqueraded to node\(eth0\)/);
    assert.doesNotMatch(all, /dropped|MASQUERADE failed/);
    const json = JSON.parse(cli('trace', SEED, '--packet', LB, '--json').out[0]!) as {
      outcomes: { probability: number; disposition: string; dnat: string; snat: string }[];
      node: { symbolic: string };
    };
    assert.deepEqual(
      json.outcomes.map(o => [o.probability, o.disposition, o.dnat, o.snat]),
      [
        [0.5, 'forwarded', '10.10.1.11:80', 'node(eth0)'],
        [0.5, 'forwarded', '10.10.4.12:80', 'node(eth0)'],
      ],
    );
    assert.equal(json.node.symbolic, 'node(eth0)');
  });

  it('editor with no settings: the same two outcomes', () => {
    const settings = readSettings(() => undefined);
    const r = traceText(analyze(RULES, SEED), LB, settings.node);
    assert.ok(r.ok, r.ok ? '' : r.error);
    assert.deepEqual(fates(r.trace), LB_FATES);
  });

  it('a configured node address still wins', () => {
    const t = trace(
      RULES,
      { protocol: 'tcp', src: '172.18.0.100', dst: '172.18.255.200', dport: 80 },
      { node: { addresses: ['172.18.0.4'] } },
    );
    assert.deepEqual(
      t.outcomes.map(o => o.snat),
      ['172.18.0.4', '172.18.0.4'],
    );
    assert.equal(t.node?.symbolic, null);
  });
});

describe('zero-config: a NodePort packet to the node', () => {
  it('`node` in a packet is the node itself: local NodePort handling, DNAT to both endpoints', () => {
    const r = cli('trace', SEED, '--packet', 'tcp 172.18.0.100:40000 -> node:30381', '--json');
    const j = JSON.parse(r.out[0]!) as {
      packet: { dst: string };
      outcomes: { probability: number; dnat: string; snat: string }[];
    };
    assert.equal(j.packet.dst, 'node(eth0)');
    assert.deepEqual(
      j.outcomes.map(o => [o.probability, o.dnat, o.snat]),
      [
        [0.5, '10.10.1.11:80', 'node(eth0)'],
        [0.5, '10.10.4.12:80', 'node(eth0)'],
      ],
    );
  });

  it('the editor takes `node` in its packet input and traces it like the CLI', () => {
    const check = checkPacketText('tcp 172.18.0.100:40000 -> node:30381', 4);
    assert.ok(check.ok, check.ok ? '' : check.error);
    const r = traceText(
      analyze(RULES, SEED),
      'tcp 172.18.0.100:40000 -> node:30381',
      readSettings(() => undefined).node,
    );
    assert.ok(r.ok, r.ok ? '' : r.error);
    assert.deepEqual(
      r.trace.outcomes.map(o => o.dnat),
      ['10.10.1.11:80', '10.10.4.12:80'],
    );
  });

  it('a written address on a NodePort port is not silently "forwarded": both readings, each under its assumption', () => {
    const t = trace(RULES, { protocol: 'tcp', src: '172.18.0.100', dst: '172.18.0.4', dport: 30381 });
    const asNode = t.outcomes.filter(o => o.assumptions[0]?.assumed === 'matches');
    const notNode = t.outcomes.filter(o => o.assumptions[0]?.assumed === 'does not match');
    assert.deepEqual(
      asNode.map(o => [o.probabilityExact, o.dnat]),
      [
        ['1/2', '10.10.1.11:80'],
        ['1/2', '10.10.4.12:80'],
      ],
    );
    assert.deepEqual(
      notNode.map(o => [o.probabilityExact, o.disposition, o.dnat]),
      [['1', 'forwarded', null]],
    );
    assert.ok(t.unknown);
    assert.deepEqual(probabilitySums(t), ['1', '1']);
    assert.ok(t.warnings[0]!.includes('may be a NodePort of this node'));
  });

  it('with --node-ip the written address is decided', () => {
    const t = trace(
      RULES,
      { protocol: 'tcp', src: '172.18.0.100', dst: '172.18.0.4', dport: 30381 },
      { node: { addresses: ['172.18.0.4'] } },
    );
    assert.deepEqual(
      t.outcomes.map(o => o.dnat),
      ['10.10.1.11:80', '10.10.4.12:80'],
    );
    assert.ok(!t.unknown);
  });
});

describe('zero-config: node addresses the files imply are used and labelled', () => {
  // kube-proxy with nodePortAddresses writes `-d <node IP>/32 -j KUBE-NODEPORTS` instead of the addrtype
  // catch-all (pkg/proxy/iptables/proxier.go, TestNodePorts' "nodePortAddresses" cases).
  const withNpa = RULES.replace(
    '-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS',
    '-A KUBE-SERVICES -d 172.18.0.4/32 -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -j KUBE-NODEPORTS',
  );

  it('nodePortAddresses: 172.18.0.4 is the node, inferred from the KUBE-NODEPORTS jump, and says so', () => {
    assert.notEqual(withNpa, RULES);
    const t = trace(withNpa, { protocol: 'tcp', src: '172.18.0.100', dst: '172.18.255.200', dport: 80 });
    assert.deepEqual(
      t.outcomes.map(o => o.snat),
      ['172.18.0.4', '172.18.0.4'],
    );
    assert.equal(t.node?.inferred[0]?.address, '172.18.0.4');
    assert.match(t.node!.inferred[0]!.from, /:101$/);
    assert.ok(t.warnings.some(w => w.startsWith('node address 172.18.0.4 inferred from test.rules:101')));
    const np = trace(withNpa, { protocol: 'tcp', src: '172.18.0.100', dst: '172.18.0.4', dport: 30381 });
    assert.deepEqual(
      np.outcomes.map(o => o.dnat),
      ['10.10.1.11:80', '10.10.4.12:80'],
    );
    assert.ok(!np.unknown);
  });

  it('KUBE-SEP hairpin sources of default/kubernetes name a node of the cluster: a written one is flagged, with its line', () => {
    const t = trace(RULES, { protocol: 'tcp', src: '172.18.0.2', dst: '10.200.1.230', dport: 80 });
    assert.ok(
      t.warnings.some(
        w => w.startsWith('the source 172.18.0.2 is a node of this cluster') && w.includes('test.rules:85'),
      ),
      t.warnings.join('\n'),
    );
    const configured = trace(
      RULES,
      { protocol: 'tcp', src: '172.18.0.2', dst: '10.200.1.230', dport: 80 },
      { node: { addresses: ['172.18.0.4'] } },
    );
    assert.ok(!configured.warnings.some(w => w.includes('is a node of this cluster')));
  });

  it("SNAT --to-source on an interface: that address is the interface's, labelled as inferred", () => {
    const rules = [
      '*nat',
      ':PREROUTING ACCEPT [0:0]',
      ':INPUT ACCEPT [0:0]',
      ':OUTPUT ACCEPT [0:0]',
      ':POSTROUTING ACCEPT [0:0]',
      '-A POSTROUTING -s 10.0.0.0/8 -o eth0 -j SNAT --to-source 203.0.113.5',
      'COMMIT',
      '',
    ].join('\n');
    const t = trace(rules, { protocol: 'udp', src: '198.51.100.1', dst: '203.0.113.5', dport: 53 });
    assert.deepEqual(
      t.outcomes.map(o => o.disposition),
      ['local'],
    );
    assert.equal(t.node?.inferred[0]?.iface, 'eth0');
    assert.equal(t.node?.symbolic, null);
  });
});

describe('zero-config: a diff without a node address lists no fate the missing address caused', () => {
  it('removing the KUBE-MARK-MASQ check masquerades more traffic: a change of NAT, never "dropped"', () => {
    const newer = RULES.replace('-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN\n', '');
    assert.notEqual(newer, RULES);
    const r = diffRulesets(parseIptables(RULES, { file: 'old.rules' }), parseIptables(newer, { file: 'new.rules' }));
    assert.ok(r.ok);
    const report = r.report;
    assert.ok(report.changes.length > 0);
    // No fate comes from the missing address ("MASQUERADE failed: the outgoing interface has no address").
    // Other drops are real: a 127.0.0.1 → 127.0.0.1 packet masqueraded on lo takes the node's address
    // (inet_select_addr skips 127.0.0.1), and KUBE-FIREWALL then drops `! -s 127.0.0.0/8 -d 127.0.0.0/8`.
    for (const c of report.changes) {
      for (const o of [...c.old, ...c.new])
        assert.doesNotMatch(o.reason ?? '', /MASQUERADE failed|no address/, c.class.packet);
    }
    assert.ok(
      !report.changes.some(
        c => c.new.some(o => o.disposition === 'dropped') && !/ 127\.0\.0\.1(?::\d+)? -> 127\./.test(c.class.packet),
      ),
      'only loopback classes are dropped',
    );
    assert.ok(report.changes.some(c => c.new.some(o => o.snat === 'node(eth0)')));
  });
});

describe('zero-config: IPVS mode binds Service addresses on kube-ipvs0', () => {
  // kube-proxy's IPVS mode (pkg/proxy/ipvs/proxier.go) binds every virtual-server address on kube-ipvs0 and
  // lists them in the ipset KUBE-IPVS-IPS: the kernel routes packets to them to INPUT (local), where IPVS
  // takes them, instead of forwarding them. The dump and ipsets are packetlens' synthesis for seed 002.
  const out = cli('synth', join(ROOT, 'examples', 'seed-002'), '--mode', 'ipvs', '--node', 'ipvs-worker').out.join(
    '\n',
  );
  const ipsetText = out.slice(out.indexOf('# ipset save') + '# ipset save'.length, out.indexOf('# iptables-save'));
  const rulesText = out.slice(out.indexOf('# iptables-save') + '# iptables-save'.length);
  const rs = parseIptables(rulesText, { file: 'ipvs.rules' });
  const ipsets = parseIpsetSave(ipsetText, 'ipvs.ipset');

  it('a ClusterIP listed in KUBE-IPVS-IPS is local, labelled as inferred from the ipset', () => {
    const input = { protocol: 'tcp', src: '10.244.1.9', dst: '10.96.0.11', dport: 80 };
    const r = tracePacket(rs, input, { ipsets });
    assert.ok(r.ok);
    assert.deepEqual(
      r.trace.outcomes.map(o => o.disposition),
      ['local'],
    );
    assert.deepEqual(
      r.trace.node?.inferred.map(i => [i.address, i.iface, i.extra]),
      [['10.96.0.11', 'kube-ipvs0', true]],
    );
    // It is not the node's own address: the node stays symbolic for MASQUERADE.
    assert.equal(r.trace.node?.symbolic, 'node(eth0)');
    const without = tracePacket(rs, input, {});
    assert.ok(without.ok && without.trace.outcomes.every(o => o.disposition === 'forwarded'));
  });
});
