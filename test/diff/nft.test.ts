/**
 * The semantic diff on nftables rulesets: kube-proxy's nftables mode for seed 003's worker
 * (test/fixtures/diff/nft, `packetlens synth examples/seed-003 --mode nftables --node myk8s-worker` edited
 * as a pull request would) and an inet host firewall with named sets. Each case states what must change,
 * worked out from the rules; a brute-force sweep over the constants the rules name checks that no packet
 * fares differently unreported, and that "identical" is said only when no packet of the grid differs.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  type DiffReport,
  type NodeConfig,
  type PacketInput,
  type Ruleset,
  diffRulesets,
  parseRuleset,
} from '../../src/engine/api.ts';
import { DIFF_FIXTURES, bruteForce } from './helpers.ts';

const KUBE = join(DIFF_FIXTURES, 'nft', 'kube-seed003');
/** myk8s-worker (examples/seed-003/nodes.yaml). */
const WORKER: NodeConfig = { addresses: ['172.18.0.4'] };

function read(text: string, file: string): Ruleset {
  const p = parseRuleset(text, { file });
  assert.equal(p.format === 'iptables-save', file.endsWith('.rules'), `${file} reads as its format`);
  assert.deepEqual(
    p.diagnostics.filter(d => d.severity === 'error'),
    [],
  );
  return p.ruleset;
}

function diff(a: Ruleset, b: Ruleset, node: NodeConfig): DiffReport {
  const r = diffRulesets(a, b, { node });
  assert.ok(r.ok, r.ok ? '' : r.error);
  return r.report;
}

const kube = (name: string) => read(readFileSync(join(KUBE, `${name}.nft`), 'utf8'), `${name}.nft`);

/** Packets at every address and port the kube-proxy rules name, from outside and from the node. */
function kubeGrid(): PacketInput[] {
  const dsts = ['10.200.1.11', '10.200.1.12', '10.200.1.13', '10.200.1.99', '172.18.255.200', '172.18.255.201'];
  const out: PacketInput[] = [];
  for (const dst of [...dsts, '172.18.0.4', '198.51.100.10'])
    for (const src of ['203.0.113.10', '10.10.1.11', '198.51.100.7'])
      for (const dport of [22, 80, 8080, 30000, 30001])
        for (const from of ['outside', 'local'] as const) {
          if (from === 'local' && src !== '203.0.113.10') continue;
          out.push({ protocol: 'tcp', src: from === 'local' ? '172.18.0.4' : src, sport: 40000, dst, dport, from });
        }
  out.push({ protocol: 'udp', src: '203.0.113.10', sport: 40000, dst: '10.200.1.11', dport: 80, from: 'outside' });
  out.push({ protocol: 'icmp', src: '203.0.113.10', dst: '10.200.1.11', from: 'outside' } as PacketInput);
  return out;
}

describe('diff of kube-proxy nftables rulesets (seed 003, myk8s-worker)', () => {
  const old = kube('old');

  it('an endpoint removed from a Service: only that Service changes, every class proven', () => {
    const next = kube('rm-endpoint');
    const r = diff(old, next, WORKER);
    assert.equal(r.verdict, 'changed');
    assert.equal(r.proven, true, r.approximations.join('; '));
    // svc1 is 10.200.1.11:80, 172.18.255.200:80 and NodePort 30000; svc2 and svc3 keep both endpoints.
    for (const c of r.changes) {
      assert.match(c.class.extent.dst, /10\.200\.1\.11|172\.18\.255\.200|172\.18\.0\.4|any/, c.class.packet);
      assert.ok(
        c.new.every(f => f.dnat === null || f.dnat === '10.10.1.11:80'),
        c.class.packet,
      );
    }
    assert.ok(r.changes.some(c => c.class.extent.dst === '10.200.1.11' && c.class.extent.dport === '80'));
    // Grouped by the Service kube-proxy's chain names say (service-HASH-default/svc1/tcp/svc1-webport).
    assert.deepEqual(r.services, ['default/svc1:svc1-webport']);
    bruteForce(old, next, r, kubeGrid(), WORKER);
  });

  it('a drop at the top of a base chain (filter input): SSH from the partner range to the node', () => {
    const next = kube('drop-top');
    const r = diff(old, next, WORKER);
    assert.equal(r.verdict, 'changed');
    assert.equal(r.proven, true, r.approximations.join('; '));
    for (const c of r.changes) {
      assert.equal(c.class.extent.src, '198.51.100.0/24');
      assert.equal(c.class.extent.dport, '22');
      assert.ok(c.new.every(f => f.disposition === 'dropped'));
    }
    assert.ok(r.changes.some(c => c.class.extent.dst === '172.18.0.4' && c.class.extent.from === 'outside'));
    bruteForce(old, next, r, kubeGrid(), WORKER);
  });

  it('a verdict-map element changed (svc2 LoadBalancer port 80 → 8080): the named map counts as a change', () => {
    const next = kube('vmap-elem');
    const r = diff(old, next, WORKER);
    assert.deepEqual(
      r.changedChains.map(c => [c.chain, c.change, c.sets]),
      [['services', 'set', ['service-ips']]],
    );
    assert.equal(r.verdict, 'changed');
    assert.equal(r.proven, true, r.approximations.join('; '));
    for (const c of r.changes) assert.equal(c.class.extent.dst, '172.18.255.201');
    assert.deepEqual([...new Set(r.changes.map(c => c.class.extent.dport))].sort(), ['80', '8080']);
    bruteForce(old, next, r, kubeGrid(), WORKER);
  });

  it('rules that do not overlap, reordered: identical, proven', () => {
    const r = diff(old, kube('reorder'), WORKER);
    assert.deepEqual(
      r.changedChains.map(c => c.change),
      ['reordered'],
    );
    assert.equal(r.verdict, 'identical');
    assert.equal(r.identical, true);
    assert.ok(r.classesTraced > 0);
  });

  it('a counter and a comment added: identical without tracing', () => {
    const r = diff(old, kube('counter'), WORKER);
    assert.deepEqual(r.changedChains, []);
    assert.equal(r.identical, true);
  });
});

const FIREWALL = `table inet filter {
  set allowed_tcp { type inet_service; elements = { 22, 80 } }
  set blocked4 { type ipv4_addr; flags interval; elements = { 198.51.100.0/24, 203.0.113.128/25 } }
  set trusted { type ipv4_addr . inet_service; elements = { 192.0.2.10 . 5432 } }
  chain input {
    type filter hook input priority filter; policy drop;
    ct state established,related accept
    iifname "lo" accept
    ip saddr @blocked4 drop
    ip saddr . tcp dport @trusted accept
    tcp dport @allowed_tcp accept
    meta l4proto { icmp, ipv6-icmp } accept
  }
  chain forward {
    type filter hook forward priority filter; policy drop;
  }
}
`;

/** Packets at every constant of the host firewall, both families. */
function firewallGrid(): PacketInput[] {
  const out: PacketInput[] = [];
  for (const src of ['203.0.113.10', '198.51.100.7', '203.0.113.150', '203.0.113.200', '192.0.2.10', '2001:db8:2::10'])
    for (const dport of [22, 80, 443, 5432, 8080]) {
      const v6 = src.includes(':');
      out.push({ protocol: 'tcp', src, sport: 40000, dst: v6 ? '2001:db8::1' : '192.0.2.1', dport, from: 'outside' });
    }
  return out;
}

describe('diff of an inet host firewall with named sets', () => {
  const node: NodeConfig = { addresses: ['192.0.2.1', '2001:db8::1'] };
  const old = read(FIREWALL, 'old.nft');

  it('443 added to a set: tcp 443 to the node now accepted, for IPv4 and IPv6 alike; blocked sources stay dropped', () => {
    const next = read(FIREWALL.replace('elements = { 22, 80 }', 'elements = { 22, 80, 443 }'), 'new.nft');
    const r = diff(old, next, node);
    assert.equal(r.proven, true, r.approximations.join('; '));
    assert.equal(r.verdict, 'changed');
    assert.deepEqual(
      r.changedChains.map(c => [c.family, c.table, c.chain, c.change]),
      [['inet', 'filter', 'input', 'set']],
    );
    for (const c of r.changes) {
      assert.equal(c.class.extent.dport, '443');
      assert.ok(c.old.every(f => f.disposition === 'dropped') && c.new.every(f => f.disposition === 'local'));
      assert.ok(!/^198\.51\.100\./.test(c.class.extent.src), c.class.extent.src);
    }
    assert.ok(
      r.changes.some(c => c.class.extent.dst === '2001:db8::1'),
      'IPv6 packets are compared too',
    );
    bruteForce(old, next, r, firewallGrid(), node);
  });

  it('an interval set narrowed: only the addresses that left it change', () => {
    const next = read(FIREWALL.replace('203.0.113.128/25', '203.0.113.192/26'), 'new.nft');
    const r = diff(old, next, node);
    assert.equal(r.proven, true, r.approximations.join('; '));
    for (const c of r.changes) assert.equal(c.class.extent.src, '203.0.113.128/26');
    bruteForce(old, next, r, firewallGrid(), node);
  });

  it('a rule on a field classes are not cut on (skuid) makes the answer approximate, never identical', () => {
    const next = read(
      FIREWALL.replace(
        '    tcp dport @allowed_tcp accept',
        '    meta skuid 1000 drop\n    tcp dport @allowed_tcp accept',
      ),
      'new.nft',
    );
    const r = diff(old, next, node);
    assert.equal(r.identical, false);
    assert.equal(r.proven, false);
    assert.ok(
      r.approximations.some(a => /skuid/.test(a)),
      r.approximations.join('; '),
    );
  });

  it('an anonymous verdict map edited (its elements are not in the rule display): a change', () => {
    const add = (v: string) =>
      read(
        FIREWALL.replace(
          '    tcp dport @allowed_tcp accept',
          `    tcp dport vmap { 8080 : ${v}, 9090 : drop }\n    tcp dport @allowed_tcp accept`,
        ),
        'x.nft',
      );
    const r = diff(add('drop'), add('accept'), node);
    assert.equal(r.verdict, 'changed');
    assert.ok(r.changes.length > 0 && r.changes.every(c => c.class.extent.dport === '8080'));
  });

  it('the same rule moved past one it overlaps with is a change', () => {
    const next = read(
      FIREWALL.replace(
        '    ip saddr @blocked4 drop\n    ip saddr . tcp dport @trusted accept\n    tcp dport @allowed_tcp accept',
        '    tcp dport @allowed_tcp accept\n    ip saddr @blocked4 drop\n    ip saddr . tcp dport @trusted accept',
      ),
      'new.nft',
    );
    const r = diff(old, next, node);
    assert.equal(r.verdict, 'changed');
    assert.ok(r.changes.every(c => /^198\.51\.100\.|^203\.0\.113\.(128|1\d\d|2\d\d)/.test(c.class.extent.src)));
    bruteForce(old, next, r, firewallGrid(), node);
  });
});

describe('diff of an iptables-save dump against an nftables ruleset (a migration)', () => {
  const node: NodeConfig = { addresses: ['192.0.2.1'] };
  const ipt = read(
    '*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n-A INPUT -s 198.51.100.0/24 -p tcp -m tcp --dport 22 -j DROP\nCOMMIT\n',
    'old.rules',
  );
  const nft = (net: string) =>
    read(
      `table ip filter {\n chain INPUT {\n  type filter hook input priority 0; policy accept;\n  ip saddr ${net} tcp dport 22 drop\n }\n}\n`,
      'new.nft',
    );
  const grid: PacketInput[] = ['198.51.100.7', '198.51.100.200', '203.0.113.10'].flatMap(src =>
    [22, 80].map(dport => ({
      protocol: 'tcp' as const,
      src,
      sport: 40000,
      dst: '192.0.2.1',
      dport,
      from: 'outside' as const,
    })),
  );

  it('the same rule written for nft: identical, proven', () => {
    const r = diff(ipt, nft('198.51.100.0/24'), node);
    assert.equal(r.verdict, 'identical', r.approximations.join('; '));
  });

  it('the nft rule narrowed to a /25: the upper half of the range is now accepted', () => {
    const next = nft('198.51.100.0/25');
    const r = diff(ipt, next, node);
    assert.equal(r.verdict, 'changed');
    assert.equal(r.proven, true, r.approximations.join('; '));
    for (const c of r.changes) assert.equal(c.class.extent.src, '198.51.100.128/25');
    bruteForce(ipt, next, r, grid, node);
  });
});
