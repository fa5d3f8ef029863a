/**
 * The routing decision from the node's own tables (issue 19): longest prefix, metrics, the local table,
 * policy rules; MASQUERADE's source as `inet_select_addr` picks it; rp_filter and ip_forward=0. The
 * kernel-backed cases compare with test/fixtures/nodectx/*\/oracle.json (made by nforacle.py in the same
 * runs that printed the node's `ip -j addr/route`; see test/fixtures/nodectx/README.md).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ROOT } from '../helpers/fixtures.ts';
import { cli } from '../helpers/cli.ts';
import { NodeModel, parseAddr, parseRuleset, readNodeContext, tracePacket } from '../../src/engine/api.ts';

const FIX = join(ROOT, 'test', 'fixtures', 'nodectx');
const a = (s: string) => parseAddr(s)!;

function ctxOf(files: Record<string, string>) {
  return readNodeContext(Object.entries(files).map(([file, text]) => ({ file, text }))).context;
}

describe('routing from the node context', () => {
  const ctx = ctxOf({
    'addr.txt': [
      '1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536',
      '    inet 127.0.0.1/8 scope host lo',
      '2: eth0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500',
      '    inet 192.0.2.10/24 scope global eth0',
      '3: eth1: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500',
      '    inet 198.51.100.10/24 scope global eth1',
      '4: wg0: <POINTOPOINT,UP,LOWER_UP> mtu 1420',
      '    inet 10.8.0.1/24 scope global wg0',
    ].join('\n'),
    'route.txt': [
      'default via 192.0.2.1 dev eth0 metric 100',
      'default via 198.51.100.1 dev eth1 metric 50',
      '10.0.0.0/8 via 192.0.2.254 dev eth0',
      '10.8.0.0/24 dev wg0 scope link',
      '10.9.0.0/16 dev eth0 table 7',
      'blackhole 10.66.0.0/16',
      '192.0.2.0/24 dev eth0 scope link src 192.0.2.10',
      '198.51.100.0/24 dev eth1 scope link src 198.51.100.10',
      'local 10.200.0.0/16 dev lo table local scope host',
    ].join('\n'),
    'rule.txt': '0:\tfrom all lookup local\n100:\tfrom all fwmark 0x10/0x10 lookup 7\n32766:\tfrom all lookup main\n',
    'sysctl.txt': 'net.ipv4.ip_forward = 1\nnet.ipv4.conf.all.rp_filter = 0\nnet.ipv4.conf.eth1.rp_filter = 1\n',
  });
  const node = new NodeModel({ context: ctx });

  it('longest prefix, then the lowest metric; the uplink is the default route with the lowest metric', () => {
    assert.equal(node.routeOut(a('10.1.2.3')), 'eth0');
    assert.equal(node.routeOut(a('10.8.0.7')), 'wg0');
    assert.equal(node.routeOut(a('203.0.113.9')), 'eth1');
    assert.equal(node.uplink, 'eth1');
  });

  it('the local table makes an AnyIP range local; policy rules pick a table by fwmark', () => {
    assert.equal(node.isLocal(a('10.200.3.4')), true);
    assert.equal(node.routeOut(a('10.9.1.1')), 'eth0'); // main: 10.0.0.0/8 via eth0
    assert.equal(node.route(a('10.9.1.1'), { mark: 0x10 })?.table, '7');
    assert.equal(node.route(a('10.9.1.1'), { mark: 0 })?.prefix, 8);
    assert.equal(node.route(a('10.66.1.1'))?.type, 'blackhole');
  });

  it('MASQUERADE source: the out device address whose subnet holds the nexthop (inet_select_addr)', () => {
    assert.equal(node.masqueradeSource('eth0', 4, { dst: a('10.1.2.3') })?.n, a('192.0.2.10').n);
    assert.equal(node.masqueradeSource('wg0', 4, { dst: a('10.8.0.7') })?.n, a('10.8.0.1').n);
    // lo: 127.0.0.1 has host scope; the first global address in ifindex order.
    assert.equal(node.masqueradeSource('lo', 4, { dst: a('192.0.2.10') })?.n, a('192.0.2.10').n);
  });

  it('explains rp_filter, blackhole and ip_forward=0 drops', () => {
    const pkt = (src: string, dst: string, inIface: string) => ({ src: a(src), dst: a(dst), inIface, mark: 0 });
    assert.match(
      node.inputRefused(pkt('10.1.1.1', '192.0.2.10', 'eth1')) ?? '',
      /reverse-path filter: the route back to 10\.1\.1\.1 leaves by eth0, not eth1 .*rp_filter=1 on eth1 \(sysctl\.txt:3\)/,
    );
    assert.equal(node.inputRefused(pkt('10.1.1.1', '192.0.2.10', 'eth0')), null); // rp_filter 0 on eth0
    assert.match(node.inputRefused(pkt('192.0.2.77', '10.66.0.1', 'eth0')) ?? '', /blackhole route \(route\.txt:6\)/);
    const rules = '*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\nCOMMIT\n';
    const rs = parseRuleset(rules).ruleset;
    const off = ctxOf({
      'addr.txt': '2: eth0: <UP> mtu 1500\n    inet 192.0.2.10/24 scope global eth0\n',
      'route.txt': 'default via 192.0.2.1 dev eth0\n192.0.2.0/24 dev eth0 scope link\n',
      's.txt': 'net.ipv4.ip_forward = 0\n',
    });
    const r = tracePacket(
      rs,
      { protocol: 'tcp', src: '192.0.2.5', dst: '203.0.113.1', dport: 80, from: 'outside' },
      { node: { context: off } },
    );
    assert.ok(r.ok);
    assert.equal(r.trace.outcomes[0]!.disposition, 'dropped');
    assert.match(r.trace.outcomes[0]!.reason ?? '', /ip_forward=0/);
    const strict = tracePacket(
      rs,
      { protocol: 'tcp', src: '10.1.1.1', dst: '192.0.2.10', dport: 22, from: 'outside', in: 'eth1' },
      { node: { context: ctx } },
    );
    assert.ok(strict.ok);
    assert.equal(strict.trace.outcomes[0]!.disposition, 'dropped');
    assert.match(strict.trace.outcomes[0]!.reason ?? '', /reverse-path filter/);
  });
});

describe('against the kernel: the node files of the oracle run that gave the verdicts', () => {
  type Res = {
    probe: { name: string; proto: string; src: string; sport: number; dst: string; dport: number };
    verdict: string;
    delivered_to: string;
    src_seen: string;
  };
  it('masquerade-source: MASQUERADE ignores the route prefsrc and picks the address on the nexthop subnet', () => {
    const dir = join(FIX, 'masquerade-source');
    const oracle = JSON.parse(readFileSync(join(dir, 'oracle.json'), 'utf8')) as { results: Res[] };
    assert.equal(oracle.results.length, 3);
    for (const res of oracle.results) {
      const p = res.probe;
      const r = cli(
        'trace',
        join(dir, 'rules'),
        '--node-context',
        dir,
        '--packet',
        `${p.proto} ${p.src}:${p.sport} -> ${p.dst}:${p.dport} in=veth0`,
        '--json',
      );
      assert.equal(r.code, 0, r.err.join('\n'));
      const o = JSON.parse(r.out[0]!).outcomes as {
        disposition: string;
        snat: string;
        packet: { outIface?: string };
      }[];
      assert.equal(o.length, 1, p.name);
      assert.equal(o[0]!.disposition, res.verdict, p.name);
      assert.equal(o[0]!.snat, res.src_seen, p.name);
    }
  });

  it('seed-003 bundle: the LoadBalancer packet leaves by the pod veths, masqueraded to the node address, with no flags', () => {
    const dir = join(FIX, 'seed-003-oracle');
    const oracle = JSON.parse(readFileSync(join(dir, 'oracle.json'), 'utf8')) as {
      pods: Record<string, string>;
      results: Res[];
    };
    const r = cli('trace', dir, '--packet', 'tcp 172.18.0.100:40000 -> 172.18.255.200:80', '--json');
    assert.equal(r.code, 0, r.err.join('\n'));
    const json = JSON.parse(r.out[0]!);
    const outs = (json.outcomes as { disposition: string; dnat: string; snat: string; packet: { out: string } }[]).map(
      o => [o.dnat, o.packet.out, o.snat],
    );
    const seen = new Set(
      oracle.results.map(x => JSON.stringify([x.delivered_to, oracle.pods[x.delivered_to.split(':')[0]!], x.src_seen])),
    );
    assert.equal(seen.size, 2);
    assert.deepEqual(new Set(outs.map(o => JSON.stringify(o))), seen);
    assert.deepEqual(json.warnings, []);
  });
});
