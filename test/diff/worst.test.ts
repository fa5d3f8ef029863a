/**
 * Issue 18's worst cases for the diff (bench/diff-variants.ts), at test size: a change where every Service
 * packet passes (KUBE-SERVICES' first rule), a new first rule in filter INPUT, and a whole-dump reorder
 * that changes nothing. Each must be proven (never approximate) while tracing a number of classes that
 * follows the change, not the dump: before region.ts each traced thousands of classes (every Service's
 * packets were cut at every Service rule). Brute force over packets around the change checks the report.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { type PacketInput, diffRulesets, parseIptables } from '../../src/engine/api.ts';
import { generateKubeProxyDump, serviceAt } from '../../bench/generate.ts';
import {
  firstInputRule,
  firstServiceRule,
  markSpelling,
  masqBitBoth,
  reorder,
  withFilter,
} from '../../bench/diff-variants.ts';
import { bruteForce } from './helpers.ts';

const SERVICES = 300;
const ENDPOINTS = 4;
const node = { addresses: ['172.18.0.4'] };
const base = generateKubeProxyDump(SERVICES, ENDPOINTS);

function compare(oldText: string, newText: string) {
  const a = parseIptables(oldText, { file: 'old', lazy: true });
  const b = parseIptables(newText, { file: 'new', lazy: true });
  const r = diffRulesets(a, b, { node });
  assert.ok(r.ok, r.ok ? '' : r.error);
  return { a, b, report: r.report };
}

/** Packets around a Service address and the node: from outside (also on lo), from a pod, from the node. */
function packetsAround(dsts: string[], ports: number[]): PacketInput[] {
  const out: PacketInput[] = [];
  for (const dst of dsts)
    for (const dport of ports) {
      const p = { protocol: 'tcp', dst, dport, sport: 40000 } as const;
      out.push({ ...p, src: '203.0.113.10', from: 'outside' } as PacketInput);
      out.push({ ...p, src: '10.0.0.1', from: 'outside' } as PacketInput);
      out.push({ ...p, src: '127.0.0.5', from: 'outside', in: 'lo' } as PacketInput);
      out.push({ ...p, src: '172.18.0.4', from: 'outside', in: 'lo' } as PacketInput);
      out.push({ ...p, src: '172.18.0.4', from: 'local' } as PacketInput);
      out.push({ ...p, src: '127.0.0.1', from: 'local' } as PacketInput);
    }
  return out;
}

describe(`diff worst cases (${SERVICES} Services × ${ENDPOINTS} endpoints)`, () => {
  it("a change in KUBE-SERVICES' first rule is proven from that Service's packets alone", () => {
    const { a, b, report } = compare(base, firstServiceRule(base));
    const s = serviceAt(0, ENDPOINTS);
    assert.equal(report.proven, true, report.approximations.join('; '));
    assert.deepEqual(report.services, [s.name]);
    assert.ok(report.classesTraced <= 200, `${report.classesTraced} classes traced`);
    const other = serviceAt(1, ENDPOINTS).clusterIP;
    const n = bruteForce(a, b, report, packetsAround([s.clusterIP, other, '172.18.0.4'], [80, 81, 82]), node);
    assert.ok(n > 0);
  });

  it('a new first rule in filter INPUT is proven from the packets it can catch', () => {
    const { a, b, report } = compare(withFilter(base), firstInputRule(base));
    assert.equal(report.proven, true, report.approximations.join('; '));
    assert.equal(report.verdict, 'changed');
    assert.ok(report.classesTraced <= 1000, `${report.classesTraced} classes traced`);
    for (const c of report.changes) assert.equal(c.class.extent.dport, '22');
    const s = serviceAt(5, ENDPOINTS).clusterIP;
    const n = bruteForce(
      a,
      b,
      report,
      packetsAround(['172.18.0.4', '127.0.0.1', s, '198.51.100.7'], [22, 80, 6443]),
      node,
    );
    assert.ok(n > 0);
  });

  it('a whole-dump reorder that changes nothing is proven identical', () => {
    const { report } = compare(base, reorder(base));
    assert.ok(report.changedChains.some(c => c.change === 'reordered'));
    assert.equal(report.identical, true, report.approximations.join('; '));
    assert.ok(report.classesTraced <= 100, `${report.classesTraced} classes traced`);
  });

  it('KUBE-MARK-MASQ and KUBE-POSTROUTING written with --set-xmark are the same rules, proven without tracing', () => {
    const { report } = compare(base, markSpelling(base));
    assert.deepEqual(report.changedChains.map(c => c.chain).sort(), ['KUBE-MARK-MASQ', 'KUBE-POSTROUTING']);
    assert.equal(report.identical, true, report.approximations.join('; '));
    assert.ok(report.classesTraced <= 100, `${report.classesTraced} classes traced`);
  });

  it('--set-xmark with another value or mask is another rule, judged by what it does', () => {
    const small = generateKubeProxyDump(40, 2);
    const mark = '-A KUBE-MARK-MASQ -j MARK --or-mark 0x4000';
    // Clearing bit 15 as well changes nothing: no rule reads it.
    const same = compare(small, small.replace(mark, '-A KUBE-MARK-MASQ -j MARK --set-xmark 0x4000/0xc000'));
    assert.equal(same.report.identical, true, same.report.approximations.join('; '));
    // Setting bit 15 instead: Service traffic is no longer masqueraded.
    const { a, b, report } = compare(small, small.replace(mark, '-A KUBE-MARK-MASQ -j MARK --set-xmark 0x8000/0x8000'));
    assert.equal(report.verdict, 'changed');
    assert.equal(report.proven, true);
    const s = serviceAt(3, 2);
    assert.ok(report.services.includes(s.name));
    assert.ok(bruteForce(a, b, report, packetsAround([s.clusterIP], [80 + (3 % 3)]), node) > 0);
  });

  it('the masquerade bit renamed in KUBE-MARK-MASQ and KUBE-POSTROUTING together is a change for socket marks', () => {
    // Packets that start unmarked fare alike (the bit is set, tested and cleared consistently), but a packet
    // the node sends with a socket mark holding the new bit is now masqueraded. The kernel agrees
    // (nforacle.py --backend nft on these two dumps, a mangle OUTPUT rule setting mark 0x8000 standing in
    // for SO_MARK: tcp 172.18.0.4:40000 -> 198.51.100.7:80 from the node leaves with source port 40000 under
    // the old rules, masqueraded (--random-fully, port 24846) under the new). Never "identical".
    const small = generateKubeProxyDump(1, 1);
    const { a, b, report } = compare(small, masqBitBoth(small));
    assert.equal(report.proven, true, report.approximations.join('; '));
    assert.equal(report.verdict, 'changed');
    const p = { protocol: 'tcp', src: '172.18.0.4', sport: 40000, dst: '198.51.100.7', dport: 80, from: 'local' };
    const probes = [0, 0x4000, 0x8000].map(mark => ({ ...p, mark }) as PacketInput);
    assert.ok(bruteForce(a, b, report, probes, node) > 0);
    const marked = report.changes.find(c => c.class.extent.from === 'local' && c.class.extent.mark === '0x8000');
    assert.ok(marked, 'a class of locally sent packets marked 0x8000 changes');
    assert.ok(marked.new.every(f => f.masquerade) && marked.old.every(f => !f.masquerade));
  });

  it('the masquerade bit renamed in both chains is proven from the packets whose mark the renaming moves', () => {
    // The new rules are the old ones with bits 0x4000 and 0x8000 swapped (mark-renaming.ts): packets from
    // outside and socket marks the swap keeps (0, 0xc000) fare alike without tracing; only the node's own
    // packets marked 0x4000 are traced, and each stands for its mirror marked 0x8000 (the old rules treat
    // one as the new rules treat the other). Before, every Service's packets were cut from outside too: 150
    // Services took past the 10,000-class budget and the answer was approximate; without the mirror, 1,570
    // classes. The probes marked 0x8000 check the mirrored changes against traces.
    const s150 = generateKubeProxyDump(150, 2);
    const { a, b, report } = compare(s150, masqBitBoth(s150));
    assert.equal(report.proven, true, report.approximations.join('; '));
    assert.equal(report.verdict, 'changed');
    assert.ok(report.classesTraced <= 1000, `${report.classesTraced} classes traced`);
    for (const c of report.changes) {
      assert.equal(c.class.extent.from, 'local');
      assert.ok(['0x4000', '0x8000'].includes(c.class.extent.mark!), c.class.packet);
    }
    const s = serviceAt(7, 2);
    const probes: PacketInput[] = [];
    for (const dst of [s.clusterIP, '198.51.100.7', '172.18.0.4'])
      for (const dport of [s.port, s.port + 1]) {
        const p = { protocol: 'tcp', sport: 40000, dst, dport } as const;
        for (const mark of [0, 0x4000, 0x8000, 0xc000])
          probes.push({ ...p, src: '172.18.0.4', from: 'local', mark } as PacketInput);
        probes.push({ ...p, src: '203.0.113.10', from: 'outside' } as PacketInput);
        probes.push({ ...p, src: s.endpoints[0]!, from: 'outside' } as PacketInput);
      }
    assert.ok(bruteForce(a, b, report, probes, node) > 0);
  });

  it("a box over many Service addresses costs the proof one rule per split, not every Service's rule", () => {
    // The node's marked packets are cut at each Service address of KUBE-SERVICES in turn (the box past the
    // cut is split again at the next one). The proof used to count, and build, the whole list of candidate
    // rules for each of those boxes: 400 Services needed more than 120,000 rule checks (quadratic in the
    // Services); now it counts the rules it looks at, and 40,000 is ample.
    const s400 = generateKubeProxyDump(400, 1);
    const a = parseIptables(s400, { file: 'old', lazy: true });
    const b = parseIptables(masqBitBoth(s400), { file: 'new', lazy: true });
    const r = diffRulesets(a, b, { node, maxWork: 40_000 });
    assert.ok(r.ok);
    assert.equal(r.report.proven, true, r.report.approximations.join('; '));
    assert.equal(r.report.verdict, 'changed');
  });

  it("a real node's dump with the masquerade bit moved to 0x2000 everywhere is proven from the node's marked packets", () => {
    // Seed 003's worker (iptables-legacy spelling, a KUBE-FORWARD rule that tests the bit too), as kube-proxy
    // writes it with --iptables-masquerade-bit=13. Traced in full (the session-start build) the comparison
    // took 3,908 classes for the same 78 changes, all of them the node's own packets marked 0x2000 or 0x4000.
    const dump = readFileSync('examples/seed-003/node-myk8s-worker.rules', 'utf8');
    const renamed = dump.replaceAll('0x4000/0x4000', '0x2000/0x2000').replaceAll('0x4000/0x0', '0x2000/0x0');
    const { a, b, report } = compare(dump, renamed);
    assert.equal(report.proven, true, report.approximations.join('; '));
    assert.equal(report.changes.length, 78);
    assert.ok(report.classesTraced <= 500, `${report.classesTraced} classes traced`);
    for (const c of report.changes) assert.ok(['0x2000', '0x4000'].includes(c.class.extent.mark!), c.class.packet);
    const probes: PacketInput[] = [];
    for (const [dst, dport] of [
      ['10.200.1.230', 80],
      ['172.18.255.200', 80],
      ['172.18.0.4', 30381],
      ['198.51.100.7', 80],
    ] as const) {
      const p = { protocol: 'tcp', sport: 40000, dst, dport } as const;
      for (const mark of [0, 0x2000, 0x4000, 0x6000])
        probes.push({ ...p, src: '172.18.0.4', from: 'local', mark } as PacketInput);
      probes.push({ ...p, src: '203.0.113.10', from: 'outside' } as PacketInput);
    }
    assert.ok(bruteForce(a, b, report, probes, node) > 0);
  });

  it('a mark the renaming moves in an unchanged rule is no renaming: packets from outside still change', () => {
    // A mangle rule (the same on both sides) marks some outside packets 0x8000: the old KUBE-POSTROUTING
    // leaves them alone, the new one masquerades them. The swap of 0x4000 and 0x8000 does not fix that
    // rule's constant, so the comparison must not skip packets from outside.
    const small = generateKubeProxyDump(2, 1);
    const mangle = [
      '*mangle',
      ':PREROUTING ACCEPT [0:0]',
      '-A PREROUTING -s 192.0.2.0/24 -j MARK --or-mark 0x8000',
      'COMMIT',
      '',
    ];
    const withMangle = (t: string) => [t.trimEnd(), ...mangle].join('\n');
    const { a, b, report } = compare(withMangle(small), withMangle(masqBitBoth(small)));
    assert.equal(report.proven, true, report.approximations.join('; '));
    const outside = report.changes.filter(c => c.class.extent.from === 'outside');
    assert.ok(outside.length > 0, 'packets from 192.0.2.0/24 change');
    const p = { protocol: 'tcp', src: '192.0.2.9', sport: 40000, dst: '198.51.100.7', dport: 80, from: 'outside' };
    assert.ok(bruteForce(a, b, report, [p as PacketInput], node) > 0);
  });

  it('a reorder of overlapping rules is a change, found where they overlap', () => {
    // The NODEPORTS rule moved first overlaps every Service rule: Service packets to the node's own
    // address may now take it first.
    const lines = base.split('\n');
    const np = lines.findIndex(l => l.includes('-j KUBE-NODEPORTS'));
    const first = lines.findIndex(l => l.startsWith('-A KUBE-SERVICES -d '));
    const moved = [...lines];
    const [rule] = moved.splice(np, 1);
    moved.splice(first, 0, rule!);
    const { report } = compare(base, moved.join('\n'));
    assert.ok(report.changedChains.some(c => c.change === 'reordered'));
    assert.equal(report.proven, true);
  });
});
