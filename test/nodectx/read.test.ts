/**
 * Node context front ends (issue 19): `ip -j addr/route/rule`, their text forms and `sysctl -a`, read from
 * the files the kernel oracle's node namespace printed about itself (test/fixtures/nodectx/README.md).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ROOT } from '../helpers/fixtures.ts';
import { detectNodeFile, readNodeContext, readNodeFile } from '../../src/engine/api.ts';
import { classifyBundleFile } from '../../src/engine/bundle.ts';

const DIR = join(ROOT, 'test', 'fixtures', 'nodectx', 'seed-003-oracle');
const read = (f: string) => readFileSync(join(DIR, f), 'utf8');

describe('node context files', () => {
  it('recognises each file by content, never by name', () => {
    assert.deepEqual(detectNodeFile(read('ip-addr.json')), { kind: 'ip-addr', format: 'json' });
    assert.deepEqual(detectNodeFile(read('ip-route.json')), { kind: 'ip-route', format: 'json' });
    assert.deepEqual(detectNodeFile(read('ip-rule.json')), { kind: 'ip-rule', format: 'json' });
    assert.deepEqual(detectNodeFile(read('text/ip-addr.txt')), { kind: 'ip-addr', format: 'text' });
    assert.deepEqual(detectNodeFile(read('text/ip-route.txt')), { kind: 'ip-route', format: 'text' });
    assert.deepEqual(detectNodeFile(read('text/ip-rule.txt')), { kind: 'ip-rule', format: 'text' });
    assert.deepEqual(detectNodeFile(read('sysctl.txt')), { kind: 'sysctl', format: 'text' });
    assert.equal(detectNodeFile(read('iptables-save.txt')), null);
    assert.equal(classifyBundleFile(read('iptables-save.txt')), 'iptables-save');
    assert.equal(classifyBundleFile('create KUBE-IPVS-IPS hash:ip family inet hashsize 1024 maxelem 65536\n'), 'ipset');
    assert.equal(
      classifyBundleFile('IP Virtual Server version 1.2.1 (size=4096)\nProt LocalAddress:Port Scheduler Flags\n'),
      'ipvsadm',
    );
  });

  it('reads addresses, scopes, routes of every table and rules; text and JSON agree', () => {
    const json = readNodeContext(
      ['ip-addr.json', 'ip-route.json', 'ip-rule.json', 'sysctl.txt'].map(f => ({ file: f, text: read(f) })),
    );
    const text = readNodeContext(
      ['text/ip-addr.txt', 'text/ip-route.txt', 'text/ip-rule.txt'].map(f => ({ file: f, text: read(f) })),
    );
    assert.deepEqual(json.diagnostics, []);
    assert.deepEqual(text.diagnostics, []);
    const addrs = (c: typeof json.context) =>
      c.interfaces.map(i => [i.index, i.name, i.addrs.map(a => `${a.local}/${a.prefixlen} ${a.scope}`)]);
    assert.deepEqual(addrs(json.context), addrs(text.context));
    assert.deepEqual(addrs(json.context).slice(0, 3), [
      [1, 'lo', ['127.0.0.1/8 host']],
      [2, 'eth0', ['172.18.0.4/32 global']],
      [3, 'veth0', []],
    ]);
    const routes = (c: typeof json.context) => c.routes.map(r => `${r.table} ${r.type} ${r.dst} ${r.dev} ${r.gateway}`);
    assert.deepEqual(routes(json.context), routes(text.context));
    assert.ok(routes(json.context).includes('main unicast 0.0.0.0/0 eth0 172.18.0.1'));
    assert.ok(routes(json.context).includes('local local 172.18.0.4/32 eth0 null'));
    const rules = (c: typeof json.context) => c.rules.map(r => `${r.priority} ${r.action} ${r.table}`);
    assert.deepEqual(rules(json.context), ['0 lookup local', '32766 lookup main', '32767 lookup default']);
    assert.deepEqual(rules(text.context), rules(json.context));
    assert.equal(json.context.sysctls.get('net.ipv4.ip_forward')?.value, '1');
    assert.equal(json.context.sysctls.get('net.ipv4.conf.all.rp_filter')?.value, '0');
    assert.equal(json.context.sysctls.get('net.bridge.bridge-nf-call-iptables')?.value, '1');
    assert.equal(json.context.sysctls.has('net.ipv4.conf.all.arp_filter'), false);
  });

  it('secondary addresses, peers, IPv6 scopes, policy rules and multipath in the text forms', () => {
    const addr = readNodeFile(
      [
        '2: eth0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc mq state UP group default qlen 1000',
        '    link/ether 52:54:00:12:34:56 brd ff:ff:ff:ff:ff:ff',
        '    inet 192.0.2.10/24 brd 192.0.2.255 scope global eth0',
        '    inet 192.0.2.11/24 scope global secondary eth0',
        '    inet 10.0.0.1 peer 10.0.0.2/32 scope global eth0',
        '    inet6 2001:db8::10/64 scope global noprefixroute',
        '    inet6 fe80::1/64 scope link',
      ].join('\n'),
      'a',
    );
    assert.deepEqual(addr.diagnostics, []);
    assert.deepEqual(
      addr.interfaces[0]!.addrs.map(a => [a.local, a.prefixlen, a.scope, a.secondary, a.noprefixroute]),
      [
        ['192.0.2.10', 24, 'global', false, false],
        ['192.0.2.11', 24, 'global', true, false],
        ['10.0.0.1', 32, 'global', false, false],
        ['2001:db8::10', 64, 'global', false, true],
        ['fe80::1', 64, 'link', false, false],
      ],
    );
    const rule = readNodeFile(
      '0:\tfrom all lookup local\n100:\tnot from 10.0.0.0/8 fwmark 0x1/0x3 iif eth1 lookup 7 suppress_prefixlength 0\n200:\tfrom all blackhole\n',
      'r',
    );
    assert.deepEqual(rule.diagnostics, []);
    const r = rule.rules[1]!;
    assert.deepEqual(
      [r.priority, r.not, r.src, r.fwmark, r.fwmask, r.iif, r.table, r.suppressPrefixlen],
      [100, true, '10.0.0.0/8', 1, 3, 'eth1', '7', 0],
    );
    assert.equal(rule.rules[2]!.action, 'blackhole');
    const route = readNodeFile(
      'default proto static metric 100\n\tnexthop via 192.0.2.1 dev eth0 weight 1\n\tnexthop via 192.0.2.2 dev eth1 weight 1\nunreachable 10.9.0.0/16 metric 5\n',
      'm',
    );
    assert.deepEqual(route.diagnostics, []);
    assert.deepEqual(
      route.routes.map(x => [x.type, x.dst, x.dev, x.gateway, x.metric]),
      [
        ['unicast', '0.0.0.0/0', 'eth0', '192.0.2.1', 100],
        ['unreachable', '10.9.0.0/16', null, null, 5],
      ],
    );
  });

  it('never throws on damaged input and puts each problem on its entry', () => {
    const bad = readNodeFile(
      '[{"ifname":"eth0","addr_info":[{"family":"inet","local":"300.1.1.1","prefixlen":24}]},\n {"ifindex":3}]',
      'x.json',
    );
    assert.deepEqual(
      bad.diagnostics.map(d => [d.range.start.line, d.range.start.character, d.message]),
      [
        [0, 1, "eth0: address '300.1.1.1/24' is not an IPv4 address; skipped"],
        [1, 1, 'an interface without "ifname"; skipped'],
      ],
    );
    const broken = readNodeFile('[{"dst": "default",', 'y.json');
    assert.equal(broken.diagnostics[0]!.code, 'bad-json');
    assert.equal(readNodeFile('hello world\n', 'z').diagnostics[0]!.severity, 'error');
    assert.deepEqual(readNodeFile('[]', 'e').diagnostics, []);
    for (const junk of [
      '[1,2,3]',
      '[{"dst":{}}]',
      '[{"priority":"x","table":5}]',
      '\u0000\u0001[',
      'default via',
      '0: from',
      'net.ipv4.ip_forward',
    ]) {
      assert.doesNotThrow(() => readNodeFile(junk, 'j'));
    }
  });
});
