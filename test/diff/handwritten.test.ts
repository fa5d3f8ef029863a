/**
 * Hand-written rulesets that probe each part of the class analysis: a rule before the changed chain that
 * catches part of its packets, a mark set in mangle that decides whether the changed chain is reached, a
 * reorder that does change behaviour, an undecidable match, IPv6, an unreferenced chain, a policy change,
 * session affinity and ICMP types. Each case states the expected report, and a brute-force sweep over the
 * constants the rules name (and their neighbours) checks that no packet fares differently unreported.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type DiffReport,
  type NodeConfig,
  type PacketInput,
  diffRulesets,
  parseIptables,
} from '../../src/engine/api.ts';
import { bruteForce } from './helpers.ts';

const FILTER_HEAD = '*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n';
const NODE: NodeConfig = { addresses: ['192.0.2.1'], interfaces: [{ name: 'eth1', addresses: ['192.168.5.1/24'] }] };

function diff(
  oldText: string,
  newText: string,
  node: NodeConfig = NODE,
): { report: DiffReport; a: ReturnType<typeof parseIptables>; b: ReturnType<typeof parseIptables> } {
  const a = parseIptables(oldText, { file: 'old.rules' });
  const b = parseIptables(newText, { file: 'new.rules' });
  assert.deepEqual(
    [...a.diagnostics, ...b.diagnostics].filter(d => d.severity === 'error'),
    [],
  );
  const r = diffRulesets(a, b, { node });
  assert.ok(r.ok, r.ok ? '' : r.error);
  return { report: r.report, a, b };
}

function lcg(seed: number): () => number {
  let x = seed >>> 0;
  return () => (x = (Math.imul(x, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

const v4 = (s: string) => s.split('.').reduce((n, o) => n * 256 + Number(o), 0);
const dotted = (n: number) => [24, 16, 8, 0].map(k => Math.floor(n / 2 ** k) % 256).join('.');

/** IPv4 packets built from the constants two dumps name, their neighbours and a few defaults. */
function gridFrom(texts: string[], extra: { dsts?: string[] } = {}, limit = 12000): PacketInput[] {
  const text = texts.join('\n');
  const addrs = new Set(['203.0.113.10', '198.51.100.200', '192.0.2.1', '127.0.0.1', ...(extra.dsts ?? [])]);
  for (const m of text.matchAll(/(\d+\.\d+\.\d+\.\d+)(?:\/(\d+))?/g)) {
    const base = v4(m[1]!);
    const size = 2 ** (32 - Number(m[2] ?? 32));
    for (const n of [base - 1, base, base + size - 1, base + size]) if (n >= 0 && n < 2 ** 32) addrs.add(dotted(n));
  }
  const ports = new Set([80, 22]);
  for (const m of text.matchAll(/--(?:dports?|sports?|ports|to-ports)\s+([\d:,]+)|--to-destination \S*?:(\d+)/g)) {
    for (const p of (m[1] ?? m[2]!).split(/[,:]/))
      for (const q of [Number(p) - 1, Number(p), Number(p) + 1]) if (q >= 0 && q <= 65535) ports.add(q);
  }
  const ifaces = new Set(['eth0', ...[...text.matchAll(/-i (\S+)/g)].map(m => m[1]!.replace(/\+$/, '0'))]);
  const marks = new Set([0, ...[...text.matchAll(/--(?:set-)?mark (0x[0-9a-f]+)/g)].map(m => Number(m[1]))]);
  const all: PacketInput[] = [];
  const list = [...addrs];
  for (const src of list) {
    for (const dst of list) {
      for (const protocol of ['tcp', 'udp', 'icmp']) {
        for (const dport of protocol === 'icmp' ? [undefined] : ports) {
          const base = { protocol, src, dst, ...(dport !== undefined ? { dport } : {}) };
          for (const i of ifaces) all.push({ ...base, from: 'outside', in: i });
          all.push({ ...base, from: 'outside', ctstate: 'ESTABLISHED' });
          for (const mark of marks) all.push({ ...base, from: 'local', mark });
          if (protocol === 'icmp') for (const icmpType of [0, 3]) all.push({ ...base, from: 'outside', icmpType });
        }
      }
    }
  }
  if (all.length <= limit) return all;
  const rnd = lcg(42);
  return Array.from({ length: limit }, () => all[Math.floor(rnd() * all.length)]!);
}

const changedExtents = (r: DiffReport) => r.changes.map(c => c.class.extent);

describe('diff on hand-written rulesets', () => {
  it('splits the classes at a rule that catches part of the packets before the changed chain', () => {
    const old = `${FILTER_HEAD}:GUARD - [0:0]\n-A FORWARD -s 10.0.0.0/8 -j ACCEPT\n-A FORWARD -i eth1 -j GUARD\n-A GUARD -d 192.168.5.0/24 -p tcp -m multiport --dports 8000:8100,9000 -j ACCEPT\n-A GUARD -j RETURN\nCOMMIT\n`;
    const neu = old.replace(
      '-A GUARD -d 192.168.5.0/24',
      '-A GUARD -d 192.168.6.7/32 -p tcp -m tcp --dport 8050 -j DROP\n-A GUARD -d 192.168.5.0/24',
    );
    const { report, a, b } = diff(old, neu);
    assert.deepEqual(
      report.groups.map(g => g.title),
      ['chain filter GUARD'],
    );
    for (const e of changedExtents(report)) {
      assert.deepEqual([e.from, e.in, e.protocol, e.dst, e.dport], ['outside', 'eth1', 'tcp', '192.168.6.7', '8050']);
      assert.ok(!e.src.startsWith('10.'), `${e.src}: 10.0.0.0/8 is accepted before GUARD`);
    }
    assert.ok(
      report.changes.every(
        c => c.new.every(f => f.disposition === 'dropped') && c.old.every(f => f.disposition === 'forwarded'),
      ),
    );
    bruteForce(a, b, report, gridFrom([old, neu], { dsts: ['192.168.6.7'] }), NODE);
  });

  it('follows a mark set in mangle PREROUTING to the filter chain it opens', () => {
    const old = `*mangle\n:PREROUTING ACCEPT [0:0]\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\n-A PREROUTING -s 172.16.0.0/12 -j MARK --set-mark 0x10\nCOMMIT\n${FILTER_HEAD}:TENANT - [0:0]\n-A FORWARD -m mark --mark 0x10 -j TENANT\n-A TENANT -p udp -m udp --dport 53 -j ACCEPT\n-A TENANT -j DROP\nCOMMIT\n`;
    const neu = old.replace(
      '-A TENANT -p udp -m udp --dport 53 -j ACCEPT',
      '-A TENANT -p udp -m multiport --dports 53,853 -j ACCEPT',
    );
    const { report, a, b } = diff(old, neu);
    assert.deepEqual(
      report.groups.map(g => g.title),
      ['chain filter TENANT'],
    );
    assert.ok(report.changes.length > 0);
    for (const e of changedExtents(report))
      assert.deepEqual([e.protocol, e.src, e.dport], ['udp', '172.16.0.0/12', '853']);
    assert.ok(report.changes.every(c => c.old[0]!.disposition === 'dropped' && c.new[0]!.disposition === 'forwarded'));
    bruteForce(a, b, report, gridFrom([old, neu]), NODE);
  });

  it('reports a reorder that changes behaviour, and none that does not', () => {
    const old = `${FILTER_HEAD}-A INPUT -p tcp -m tcp --dport 22 -j ACCEPT\n-A INPUT -s 198.51.100.0/24 -j DROP\n-A INPUT -s 203.0.113.0/24 -j DROP\n-A INPUT -d 192.0.2.1/32 -p udp -j ACCEPT\nCOMMIT\n`;
    const swapped = old.replace(
      '-A INPUT -p tcp -m tcp --dport 22 -j ACCEPT\n-A INPUT -s 198.51.100.0/24 -j DROP\n',
      '-A INPUT -s 198.51.100.0/24 -j DROP\n-A INPUT -p tcp -m tcp --dport 22 -j ACCEPT\n',
    );
    const r1 = diff(old, swapped);
    assert.deepEqual(
      r1.report.changedChains.map(c => c.change),
      ['reordered'],
    );
    assert.ok(r1.report.changes.length > 0);
    for (const e of changedExtents(r1.report))
      assert.deepEqual([e.src, e.protocol, e.dport], ['198.51.100.0/24', 'tcp', '22']);
    bruteForce(r1.a, r1.b, r1.report, gridFrom([old]), NODE);
    const harmless = old.replace(
      '-A INPUT -s 198.51.100.0/24 -j DROP\n-A INPUT -s 203.0.113.0/24 -j DROP\n',
      '-A INPUT -s 203.0.113.0/24 -j DROP\n-A INPUT -s 198.51.100.0/24 -j DROP\n',
    );
    const r2 = diff(old, harmless);
    assert.equal(r2.report.identical, true);
    assert.ok(r2.report.classesTraced > 0);
    bruteForce(r2.a, r2.b, r2.report, gridFrom([old]), NODE);
  });

  it('says the answer is approximate where an undecidable match decides', () => {
    const old = `${FILTER_HEAD}-A INPUT -p tcp -m tcp --dport 22 -j ACCEPT\nCOMMIT\n`;
    const neu = `${FILTER_HEAD}-A INPUT -m set --match-set blocklist src -j DROP\n-A INPUT -p tcp -m tcp --dport 22 -j ACCEPT\nCOMMIT\n`;
    const { report } = diff(old, neu);
    assert.equal(report.approximate, true);
    assert.ok(
      report.approximations.some(x => x.includes('-m set') || x.includes('ipset')),
      report.approximations.join('; '),
    );
    assert.ok(report.changes.length > 0 && report.changes.every(c => c.approximate));
    assert.ok(
      report.changes.every(c =>
        c.new.some(f => f.disposition === 'dropped' && f.assumptions.some(s => s.includes('matches'))),
      ),
    );
  });

  it('compares IPv6 dumps', () => {
    const head =
      '# Generated by ip6tables-save v1.8.9\n*nat\n:PREROUTING ACCEPT [0:0]\n:INPUT ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\n';
    const old = `${head}-A PREROUTING -d 2001:db8::10/128 -p tcp -m tcp --dport 80 -j DNAT --to-destination [2001:db8:1::5]:8080\nCOMMIT\n`;
    const neu = old.replace('[2001:db8:1::5]', '[2001:db8:1::6]');
    const node: NodeConfig = { addresses: ['2001:db8::1'] };
    const { report, a, b } = diff(old, neu, node);
    assert.ok(report.changes.length > 0);
    for (const c of report.changes) {
      assert.deepEqual([c.class.extent.dst, c.class.extent.dport, c.aspects], ['2001:db8::10', '80', ['dnat']]);
      assert.deepEqual([c.old[0]!.dnat, c.new[0]!.dnat], ['[2001:db8:1::5]:8080', '[2001:db8:1::6]:8080']);
    }
    const packets: PacketInput[] = [];
    for (const dst of ['2001:db8::10', '2001:db8::f', '2001:db8::11', '2001:db8:1::5', '2001:db8::1'])
      for (const dport of [79, 80, 81, 8080])
        for (const protocol of ['tcp', 'udp']) {
          packets.push({ protocol, src: '2001:db8:2::7', dst, dport, from: 'outside' });
          packets.push({ protocol, src: '2001:db8::1', dst, dport, from: 'local' });
        }
    bruteForce(a, b, report, packets, node);
  });

  it('ignores a chain nothing jumps to', () => {
    const old = `${FILTER_HEAD}-A INPUT -p tcp -m tcp --dport 22 -j ACCEPT\nCOMMIT\n`;
    const neu = old.replace(':OUTPUT ACCEPT [0:0]\n', ':OUTPUT ACCEPT [0:0]\n:ORPHAN - [0:0]\n-A ORPHAN -j DROP\n');
    const { report, a, b } = diff(old, neu);
    assert.deepEqual(
      report.changedChains.map(c => [c.chain, c.change]),
      [['ORPHAN', 'added']],
    );
    assert.equal(report.identical, true);
    bruteForce(a, b, report, gridFrom([old]), NODE);
  });

  it('follows a policy change through connection states and interfaces', () => {
    const old = `${FILTER_HEAD}-A FORWARD -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT\n-A FORWARD -i eth1 -o eth0 -j ACCEPT\nCOMMIT\n`;
    const neu = old.replace(':FORWARD ACCEPT', ':FORWARD DROP');
    const { report, a, b } = diff(old, neu);
    assert.deepEqual(
      report.changedChains.map(c => [c.chain, c.change]),
      [['FORWARD', 'policy']],
    );
    assert.deepEqual(
      report.groups.map(g => g.title),
      ['chain filter FORWARD'],
    );
    for (const c of report.changes) {
      assert.equal(c.class.extent.ctstate, 'NEW');
      assert.deepEqual([c.old[0]!.disposition, c.new[0]!.disposition], ['forwarded', 'dropped']);
    }
    bruteForce(a, b, report, gridFrom([old], { dsts: ['192.168.5.9'] }), NODE);
  });

  it('splits on session affinity (kube-proxy -m recent)', () => {
    const nat = (ep: string) =>
      `*nat\n:PREROUTING ACCEPT [0:0]\n:INPUT ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\n:KUBE-SVC-A - [0:0]\n:KUBE-SEP-A - [0:0]\n:KUBE-SEP-B - [0:0]\n` +
      `-A PREROUTING -d 10.96.0.5/32 -p tcp -m tcp --dport 80 -j KUBE-SVC-A\n` +
      `-A KUBE-SVC-A -m comment --comment "ns/a:http -> ${ep}:80" -m recent --name KUBE-SEP-A --rcheck --seconds 10800 --reap -j KUBE-SEP-A\n` +
      `-A KUBE-SVC-A -m comment --comment "ns/a:http -> 10.1.0.2:80" -m statistic --mode random --probability 0.5000000000 -j KUBE-SEP-B\n` +
      `-A KUBE-SVC-A -m comment --comment "ns/a:http -> ${ep}:80" -j KUBE-SEP-A\n` +
      `-A KUBE-SEP-A -p tcp -m comment --comment ns/a:http -m recent --name KUBE-SEP-A --set -m tcp -j DNAT --to-destination ${ep}:80\n` +
      `-A KUBE-SEP-B -p tcp -m comment --comment ns/a:http -m recent --name KUBE-SEP-B --set -m tcp -j DNAT --to-destination 10.1.0.2:80\nCOMMIT\n`;
    const { report, a, b } = diff(nat('10.1.0.1'), nat('10.1.0.3'));
    assert.deepEqual(report.services, ['ns/a:http']);
    const sticky = report.changes.filter(c => c.class.extent.affinity.includes('KUBE-SEP-A'));
    assert.ok(sticky.length > 0, 'the clients with affinity to the changed endpoint are a class of their own');
    for (const c of sticky)
      assert.deepEqual([c.old.map(f => f.dnat), c.new.map(f => f.dnat)], [['10.1.0.1:80'], ['10.1.0.3:80']]);
    const packets = gridFrom([nat('10.1.0.1')], {}, 3000);
    bruteForce(a, b, report, packets, NODE);
    bruteForce(a, b, report, packets, NODE, ['KUBE-SEP-A']);
  });

  it('splits ICMP by type', () => {
    const old = `${FILTER_HEAD}-A INPUT -p tcp -m tcp --dport 22 -j ACCEPT\nCOMMIT\n`;
    const neu = `${FILTER_HEAD}-A INPUT -p icmp -m icmp --icmp-type echo-request -j DROP\n-A INPUT -p tcp -m tcp --dport 22 -j ACCEPT\nCOMMIT\n`;
    const { report, a, b } = diff(old, neu);
    assert.ok(report.changes.length > 0);
    for (const e of changedExtents(report)) assert.deepEqual([e.protocol, e.dport], ['icmp', 'type 8/0']);
    bruteForce(a, b, report, gridFrom([old]), NODE);
  });

  it('refuses to compare dumps of two families', () => {
    const v6 =
      '# Generated by ip6tables-save v1.8.9\n*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\nCOMMIT\n';
    const r = diffRulesets(
      parseIptables(`${FILTER_HEAD}COMMIT\n`, { file: 'a.rules' }),
      parseIptables(v6, { file: 'b.rules' }),
    );
    assert.deepEqual(r, { ok: false, error: 'a.rules is IPv4 and b.rules is IPv6: compare dumps of one family' });
  });
});
