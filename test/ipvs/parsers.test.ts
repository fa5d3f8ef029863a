/**
 * `ipvsadm -Sn` and `ipvsadm -Ln` readers: the formats ipvsadm.c prints (print_service_entry), ipvsadm's
 * defaults, diagnostics with ranges for bad input, and never a throw. Also the `ipset save` text of the
 * synthesizer read back by ipset/store.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseIpsetSave } from '../../src/engine/ipset/store.ts';
import { parseIpvsadmList } from '../../src/engine/ipvs/parse-list.ts';
import { parseIpvsadmRules } from '../../src/engine/ipvs/parse-rules.ts';
import { renderIpvsadmList, renderIpvsadmRules } from '../../src/engine/ipvs/render.ts';
import { serviceKey } from '../../src/engine/ipvs/types.ts';

const SAVE = `-A -t 10.96.0.1:443 -s rr
-a -t 10.96.0.1:443 -r 172.18.0.2:6443 -m -w 1
-A -t 10.96.0.10:80 -s sh -p 10800
-a -t 10.96.0.10:80 -r 10.244.1.2:80 -m -w 1
-a -t 10.96.0.10:80 -r 10.244.2.2:80 -m -w 3
-A -u 10.96.0.10:53 -s mh -b mh-port
-a -u 10.96.0.10:53 -r 10.244.1.5:53 -m -w 1
-A -t [fd00::10]:80 -s wlc
-a -t [fd00::10]:80 -r [fd00:10:244::5]:8080 -m -w 2
`;

// As ipvsadm -Ln prints it, trailing blanks of the %-10u columns included.
const LIST = `IP Virtual Server version 1.2.1 (size=4096)
Prot LocalAddress:Port Scheduler Flags
  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn
TCP  172.18.0.3:30080 rr
  -> 10.244.1.2:80                Masq    1      0          0         
  -> 10.244.2.2:80                Masq    1      3          17        
TCP  10.96.0.11:80 lc persistent 10800
  -> 10.244.1.2:80                Masq    1      2          0         
  -> 10.244.2.2:80                Masq    1      1          4         
UDP  10.96.0.10:53 mh (mh-port)
  -> 10.244.1.5:53                Masq    1      0          0         
`;

describe('ipvsadm -Sn', () => {
  it('reads services, real servers, schedulers, persistence, flags and IPv6', () => {
    const r = parseIpvsadmRules(SAVE);
    assert.deepEqual(r.diagnostics, []);
    assert.equal(r.table.order, 'unknown');
    assert.deepEqual(
      r.table.services.map(s => [
        serviceKey(s),
        s.scheduler,
        s.persistent,
        s.schedFlags.join(',') || null,
        s.realServers.map(x => `${x.addr}:${x.port} ${x.forward} w${x.weight}`),
      ]),
      [
        ['TCP 10.96.0.1:443', 'rr', null, null, ['172.18.0.2:6443 Masq w1']],
        ['TCP 10.96.0.10:80', 'sh', 10800, null, ['10.244.1.2:80 Masq w1', '10.244.2.2:80 Masq w3']],
        ['UDP 10.96.0.10:53', 'mh', null, 'mh-port', ['10.244.1.5:53 Masq w1']],
        ['TCP [fd00::10]:80', 'wlc', null, null, ['fd00:10:244::5:8080 Masq w2']],
      ],
    );
    assert.equal(parseIpvsadmRules(SAVE, { kernelOrder: true }).table.order, 'kernel');
  });

  it('writes back what it reads (ipvsadm -Sn sort order)', () => {
    const back = renderIpvsadmRules(parseIpvsadmRules(SAVE).table);
    assert.deepEqual(
      parseIpvsadmRules(back).table.services.map(serviceKey).sort(),
      parseIpvsadmRules(SAVE).table.services.map(serviceKey).sort(),
    );
    assert.equal(renderIpvsadmRules(parseIpvsadmRules(back).table), back);
    // ipvs_cmp_services: IPv4 before IPv6, TCP before UDP.
    assert.deepEqual(
      back.split('\n').filter(l => l.startsWith('-A')),
      [
        '-A -t 10.96.0.1:443 -s rr',
        '-A -t 10.96.0.10:80 -s sh -p 10800',
        '-A -u 10.96.0.10:53 -s mh -b mh-port',
        '-A -t [fd00::10]:80 -s wlc',
      ],
    );
  });

  it("applies ipvsadm's defaults and long options, and -E/-e/-d/-D/-C", () => {
    const r = parseIpvsadmRules(`--add-service --tcp-service 10.0.0.1:80 --persistent
--add-server --tcp-service 10.0.0.1:80 --real-server 10.1.0.1
-a -t 10.0.0.1:80 -r 10.1.0.2:8080 --masquerading --weight 0
-e -t 10.0.0.1:80 -r 10.1.0.2:8080 -w 5
-A -f 12 -s rr
-a -f 12 -r 10.1.0.9:80 -i
-E -t 10.0.0.1:80 -s lc
-A -t 10.0.0.2:80
-d -t 10.0.0.1:80 -r 10.1.0.1:80
-D -t 10.0.0.2:80
`);
    assert.deepEqual(r.diagnostics, []);
    const [a, f] = r.table.services;
    assert.equal(a!.scheduler, 'lc'); // edited; DEF_SCHED would be wlc
    assert.equal(a!.persistent, 300); // -p without a timeout
    assert.deepEqual(
      a!.realServers.map(x => [x.addr, x.port, x.forward, x.weight]),
      [['10.1.0.2', 8080, 'Masq', 5]],
    );
    assert.equal(f!.fwmark, 12);
    assert.deepEqual(
      f!.realServers.map(x => x.forward),
      ['Tunnel'],
    );
    assert.equal(r.table.services.length, 2);
    const d = parseIpvsadmRules('-A -t 10.0.0.3:80\n-a -t 10.0.0.3:80 -r 10.1.0.1:80\n');
    assert.equal(d.table.services[0]!.scheduler, 'wlc');
    assert.equal(d.table.services[0]!.realServers[0]!.forward, 'Route'); // -g is the default
    assert.equal(parseIpvsadmRules('-A -t 10.0.0.3:80\n-C\n').table.services.length, 0);
  });

  it('reports bad input with ranges and reads the rest', () => {
    const text = [
      '-A -t 10.0.0.1:80 -s rr',
      '-X -t 10.0.0.1:80',
      '-A -t web.example:80 -s rr',
      '-a -t 10.0.0.9:80 -r 10.1.0.1:80 -m',
      '-a -t 10.0.0.1:80 -r 10.1.0.1:80 -w many',
      '-A -s rr',
      '-A -t 10.0.0.1:80 --frobnicate',
      '-a -t 10.0.0.1:80 -r 10.1.0.1:80 -m -w 1',
      '-a -t 10.0.0.1:80 -w',
    ].join('\n');
    const r = parseIpvsadmRules(text);
    assert.deepEqual(
      r.diagnostics.map(d => [d.range.start.line, d.range.start.character, d.code, d.severity]),
      [
        [1, 0, 'unknown-command', 'error'],
        [2, 6, 'bad-address', 'error'],
        [3, 0, 'unknown-reference', 'error'],
        [4, 36, 'bad-argument', 'error'],
        [5, 0, 'missing-argument', 'error'],
        [6, 18, 'unknown-option', 'error'],
        [6, 0, 'bad-argument', 'warning'], // the service of line 0 added again
        [8, 18, 'missing-argument', 'error'],
      ],
    );
    assert.match(
      r.diagnostics[1]!.message,
      /'web\.example:80' is not a numeric ADDRESS:PORT \(save the table with ipvsadm -Sn\)/,
    );
    assert.deepEqual(
      r.table.services.map(s => [serviceKey(s), s.realServers.length]),
      [['TCP 10.0.0.1:80', 1]],
    );
  });

  it('never throws on garbage', () => {
    const junk = [
      '',
      '\u0000\u0001',
      '-a',
      '-A -t',
      '-A -t :',
      '-A -t [::1',
      '-a -t 1.2.3.4:99999 -r',
      '-A -t 1.2.3.4:80 -p -p -p',
      '-'.repeat(5000),
      '-A -t 1.2.3.4:80 -b',
      'TCP 1.2.3.4:80 rr',
    ];
    for (const j of junk) {
      assert.doesNotThrow(() => parseIpvsadmRules(j));
      assert.doesNotThrow(() => parseIpvsadmList(j));
    }
  });
});

describe('ipvsadm -Ln', () => {
  it('reads services with flags and persistence, and real servers with their connection counts', () => {
    const r = parseIpvsadmList(LIST);
    assert.deepEqual(r.diagnostics, []);
    assert.deepEqual(
      r.table.services.map(s => [
        serviceKey(s),
        s.scheduler,
        s.persistent,
        s.schedFlags.join(','),
        s.realServers.map(x => [x.addr, x.weight, x.activeConns, x.inactiveConns]),
      ]),
      [
        [
          'TCP 172.18.0.3:30080',
          'rr',
          null,
          '',
          [
            ['10.244.1.2', 1, 0, 0],
            ['10.244.2.2', 1, 3, 17],
          ],
        ],
        [
          'TCP 10.96.0.11:80',
          'lc',
          10800,
          '',
          [
            ['10.244.1.2', 1, 2, 0],
            ['10.244.2.2', 1, 1, 4],
          ],
        ],
        ['UDP 10.96.0.10:53', 'mh', null, 'mh-port', [['10.244.1.5', 1, 0, 0]]],
      ],
    );
  });

  it('renders exactly what ipvsadm prints, and reads it back', () => {
    assert.equal(renderIpvsadmList(parseIpvsadmList(LIST).table), LIST);
    const fromSave = renderIpvsadmList(parseIpvsadmRules(SAVE).table);
    assert.match(fromSave, /^TCP {2}10\.96\.0\.10:80 sh persistent 10800$/m);
    assert.match(fromSave, /^UDP {2}10\.96\.0\.10:53 mh \(mh-port\)$/m);
    assert.match(fromSave, /^ {2}-> \[fd00:10:244::5\]:8080 {8}Masq {4}2 {6}0 {10}0 {9}$/m);
  });

  it('reports bad lines with ranges and reads the rest', () => {
    const r = parseIpvsadmList(
      [
        '  -> 10.0.0.1:80 Masq 1 0 0',
        'TCP  10.96.0.1:443 rr',
        '  -> kube-apiserver:https Masq 1 0 0',
        '  -> 10.0.0.2:443 Bounce 1 0 0',
        '  -> 10.0.0.3:443 Masq one 0 0',
        'ICMP 10.0.0.1 rr',
        'TCP  10.96.0.2:80 rr wobbly',
        '  -> 10.0.0.4:80 Masq 1 0 0',
      ].join('\n'),
    );
    assert.deepEqual(
      r.diagnostics.map(d => [d.range.start.line, d.range.start.character, d.code, d.severity]),
      [
        [0, 0, 'unknown-reference', 'error'],
        [2, 5, 'bad-address', 'error'],
        [3, 18, 'bad-argument', 'error'],
        [4, 0, 'bad-argument', 'error'],
        [5, 0, 'unknown-command', 'error'],
        [6, 0, 'unknown-option', 'warning'],
      ],
    );
    assert.deepEqual(
      r.table.services.map(s => [serviceKey(s), s.realServers.map(x => x.addr)]),
      [
        ['TCP 10.96.0.1:443', []],
        ['TCP 10.96.0.2:80', ['10.0.0.4']],
      ],
    );
  });
});

describe('ipset save (ipset/store.ts)', () => {
  it('reads the entry forms kube-proxy uses and answers membership', () => {
    const store = parseIpsetSave(`create KUBE-CLUSTER-IP hash:ip,port family inet hashsize 1024 maxelem 65536
add KUBE-CLUSTER-IP 10.96.0.11,tcp:80
create KUBE-LOOP-BACK hash:ip,port,ip family inet hashsize 1024 maxelem 65536
add KUBE-LOOP-BACK 10.244.1.2,tcp:80,10.244.1.2
create KUBE-NODE-PORT-TCP bitmap:port range 0-65535
add KUBE-NODE-PORT-TCP 30080
create KUBE-IPVS-IPS hash:ip family inet hashsize 1024 maxelem 65536
add KUBE-IPVS-IPS 10.96.0.11
add KUBE-IPVS-IPS 10.96.0.999
`);
    assert.deepEqual(
      store.diagnostics.map(d => d.range.start.line),
      [8],
    );
    assert.deepEqual(
      [...store.sets.keys()],
      ['KUBE-CLUSTER-IP', 'KUBE-LOOP-BACK', 'KUBE-NODE-PORT-TCP', 'KUBE-IPVS-IPS'],
    );
    assert.deepEqual(
      [...store.sets.values()].map(s => s.entries.length),
      [1, 1, 1, 1],
    );
  });
});
