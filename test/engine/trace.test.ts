import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseIptables, probabilitySums, tracePacket, type PacketInput, type Trace } from '../../src/engine/api.ts';
import { ROOT, hits, parseClean } from '../helpers/fixtures.ts';

function trace(
  rules: string,
  input: PacketInput,
  node: Parameters<typeof tracePacket>[2] = { node: { addresses: ['172.18.0.4'] } },
): Trace {
  const r = tracePacket(parseClean(rules), input, node);
  if (!r.ok) throw new Error(r.error);
  return r.trace;
}

describe('seed 003: outside client to the MetalLB address on myk8s-worker', () => {
  // Source: ../shared/seeds/003 (kube-proxy v1.31 output quoted in the post) and the kernel runs in
  // ../shared/oracle/results/lb-ext-*-x20.json (10 × 10.10.1.11, 10 × 10.10.4.12, src seen 172.18.0.4).
  const rules = readFileSync(join(ROOT, 'examples', 'seed-003', 'node-myk8s-worker.rules'), 'utf8');
  const t = trace(rules, { protocol: 'tcp', src: '172.18.0.100', dst: '172.18.255.200', dport: 80 });

  it('reaches 10.10.1.11:80 and 10.10.4.12:80 at exactly 50% each, masqueraded to the node address', () => {
    assert.deepEqual(
      t.outcomes.map(o => [o.probabilityExact, o.disposition, o.dnat, o.snat, o.masquerade]),
      [
        ['1/2', 'forwarded', '10.10.1.11:80', '172.18.0.4', true],
        ['1/2', 'forwarded', '10.10.4.12:80', '172.18.0.4', true],
      ],
    );
    assert.deepEqual(probabilitySums(t), ['1']);
  });

  it('goes through the seed chains in kernel order', () => {
    assert.deepEqual(hits(t.outcomes[0]!), [
      'nat:PREROUTING#1',
      'nat:KUBE-SERVICES#4',
      'nat:KUBE-EXT-DLGPAL4ZCYSJ7UPR#1',
      'nat:KUBE-MARK-MASQ#1',
      'nat:KUBE-EXT-DLGPAL4ZCYSJ7UPR#2',
      'nat:KUBE-SVC-DLGPAL4ZCYSJ7UPR#2',
      'nat:KUBE-SEP-ZNBEHD3XV5ZTBRAT#2',
      'filter:FORWARD#1',
      'filter:FORWARD#2',
      'filter:KUBE-FORWARD#2',
      'nat:POSTROUTING#1',
      'nat:KUBE-POSTROUTING#2',
      'nat:KUBE-POSTROUTING#3',
    ]);
  });

  it('says why the rules it passed did not match', () => {
    const miss = t.outcomes[0]!.misses.find(m => m.chain === 'KUBE-SERVICES' && m.rule === 1);
    assert.equal(miss?.reason, '-d 10.200.1.1/32 ∌ 172.18.255.200');
    const stat = t.outcomes[1]!.misses.find(m => m.chain === 'KUBE-SVC-DLGPAL4ZCYSJ7UPR' && m.rule === 2);
    assert.match(stat!.reason, /random 0\.50000000000 \(kernel: 1073741824\/2\^31\): not chosen/);
  });
});

describe('exact probabilities', () => {
  const chain = (n: number) => {
    const lines = [
      '*nat',
      ':PREROUTING ACCEPT [0:0]',
      ':SVC - [0:0]',
      '-A PREROUTING -d 10.96.0.1/32 -p tcp -m tcp --dport 80 -j SVC',
    ];
    for (let i = 0; i < n; i++) {
      const p = 1 / (n - i);
      const stat = i < n - 1 ? ` -m statistic --mode random --probability ${p.toFixed(11)}` : '';
      lines.push(`-A SVC${stat} -j DNAT --to-destination 10.0.0.${i + 1}:80`);
    }
    lines.push('COMMIT');
    return lines.join('\n');
  };

  it('uses the kernel value round(p·2^31)/2^31: 0.33333333349 is 715827883/2^31', () => {
    const t = trace(chain(3), { protocol: 'tcp', src: '1.2.3.4', dst: '10.96.0.1', dport: 80 });
    assert.deepEqual(
      t.outcomes.map(o => [o.dnat, o.probabilityExact]),
      [
        // 1 - 715827883/2^31 = 1431655765/2^31, then × 1073741824/2^31 for the second endpoint.
        ['10.0.0.1:80', '715827883/2147483648'],
        ['10.0.0.2:80', '1431655765/4294967296'],
        ['10.0.0.3:80', '1431655765/4294967296'],
      ],
    );
    assert.deepEqual(probabilitySums(t), ['1']);
  });

  it('sums to exactly 1 for 10 and 100 endpoints', () => {
    for (const n of [10, 100]) {
      const t = trace(chain(n), { protocol: 'tcp', src: '1.2.3.4', dst: '10.96.0.1', dport: 80 });
      assert.equal(t.outcomes.length, n);
      assert.deepEqual(probabilitySums(t), ['1']);
      for (const o of t.outcomes) assert.ok(Math.abs(o.probability - 1 / n) < 1e-8, `${o.dnat}: ${o.probability}`);
    }
  });

  it('weights nth mode 1/every', () => {
    const t = trace(
      '*nat\n:PREROUTING ACCEPT [0:0]\n-A PREROUTING -m statistic --mode nth --every 4 --packet 0 -j DNAT --to-destination 10.0.0.9\nCOMMIT\n',
      {
        protocol: 'udp',
        src: '1.2.3.4',
        dst: '10.96.0.1',
        dport: 53,
      },
    );
    assert.deepEqual(
      t.outcomes.map(o => [o.probabilityExact, o.dnat]),
      [
        ['3/4', null],
        ['1/4', '10.0.0.9:53'],
      ],
    );
  });
});

describe('netfilter semantics', () => {
  it('follows goto: the goto chain returns to the caller of the chain that jumped', () => {
    const t = trace(
      [
        '*filter',
        ':INPUT DROP [0:0]',
        ':A - [0:0]',
        ':B - [0:0]',
        '-A INPUT -j A',
        '-A INPUT -j ACCEPT',
        '-A A -g B',
        '-A A -j DROP',
        '-A B -p udp -j DROP',
        'COMMIT',
      ].join('\n'),
      { protocol: 'tcp', src: '1.2.3.4', dst: '172.18.0.4', dport: 22 },
    );
    assert.deepEqual(
      t.outcomes.map(o => [o.disposition, hits(o)]),
      [['local', ['filter:INPUT#1', 'filter:A#1', 'filter:INPUT#2']]],
    );
  });

  it('applies a built-in chain policy after RETURN from it, and DROP policy ends as dropped', () => {
    const t = trace(
      ['*filter', ':INPUT DROP [0:0]', '-A INPUT -p tcp -j RETURN', '-A INPUT -j ACCEPT', 'COMMIT'].join('\n'),
      { protocol: 'tcp', src: '1.2.3.4', dst: '172.18.0.4', dport: 22 },
    );
    assert.deepEqual(
      t.outcomes.map(o => [o.disposition, o.reason]),
      [['dropped', 'policy DROP of filter INPUT']],
    );
  });

  it('runs nat only for the first packet of a connection', () => {
    const rules = '*nat\n:PREROUTING ACCEPT [0:0]\n-A PREROUTING -p tcp -j DNAT --to-destination 10.0.0.1:80\nCOMMIT\n';
    const est = trace(rules, { protocol: 'tcp', src: '1.2.3.4', dst: '9.9.9.9', dport: 80, ctstate: 'ESTABLISHED' });
    assert.equal(est.outcomes[0]!.dnat, null);
    assert.ok(est.outcomes[0]!.events.some(e => e.kind === 'nat-skipped'));
    const neu = trace(rules, { protocol: 'tcp', src: '1.2.3.4', dst: '9.9.9.9', dport: 80 });
    assert.equal(neu.outcomes[0]!.dnat, '10.0.0.1:80');
  });

  it('re-decides routing after DNAT: a DNAT to a node address is delivered locally', () => {
    const t = trace(
      '*nat\n:PREROUTING ACCEPT [0:0]\n-A PREROUTING -p tcp --dport 80 -j DNAT --to-destination 172.18.0.4:8080\nCOMMIT\n',
      {
        protocol: 'tcp',
        src: '1.2.3.4',
        dst: '9.9.9.9',
        dport: 80,
      },
    );
    assert.deepEqual([t.outcomes[0]!.disposition, t.outcomes[0]!.packet.dport], ['local', 8080]);
  });

  it('splits on an undecidable match into both assumptions instead of guessing', () => {
    const t = trace('*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -m string --algo bm --string evil -j DROP\nCOMMIT\n', {
      protocol: 'tcp',
      src: '1.2.3.4',
      dst: '172.18.0.4',
      dport: 80,
    });
    assert.equal(t.unknown, true);
    assert.deepEqual(
      t.outcomes.map(o => [o.disposition, o.assumptions.map(a => a.assumed)]),
      [
        ['dropped', ['matches']],
        ['local', ['does not match']],
      ],
    );
    assert.match(t.outcomes[0]!.assumptions[0]!.reason, /match module 'string' is not modelled/);
    assert.deepEqual(probabilitySums(t), ['1', '1']);
  });

  it('reports a jump loop as unknown with the cycle named, without hanging', () => {
    const rs = parseIptables('*filter\n:A - [0:0]\n:B - [0:0]\n-A INPUT -j A\n-A A -j B\n-A B -j A\nCOMMIT\n');
    const r = tracePacket(
      rs,
      { protocol: 'tcp', src: '1.2.3.4', dst: '172.18.0.4', dport: 80 },
      { node: { addresses: ['172.18.0.4'] } },
    );
    assert.ok(r.ok);
    assert.equal(r.trace.outcomes[0]!.disposition, 'unknown');
    assert.match(r.trace.outcomes[0]!.reason!, /jump loop A → B → A in table filter/);
  });

  it('finds a goto loop at its first turn (test/engine/bounded.test.ts has the budgets)', () => {
    const rs = parseIptables('*filter\n:A - [0:0]\n:B - [0:0]\n-A INPUT -j A\n-A A -g B\n-A B -g A\nCOMMIT\n');
    const r = tracePacket(
      rs,
      { protocol: 'tcp', src: '1.2.3.4', dst: '172.18.0.4', dport: 80 },
      { node: { addresses: ['172.18.0.4'] }, budget: 10000 },
    );
    assert.ok(r.ok);
    assert.match(r.trace.outcomes[0]!.reason!, /jump loop A → B → A in table filter: A rule 1 \(line 5\) goes to B/);
  });

  it('walks 1000 nested chains', () => {
    const lines = ['*filter'];
    for (let i = 0; i < 1000; i++) lines.push(`:C${i} - [0:0]`);
    lines.push('-A INPUT -j C0');
    for (let i = 0; i < 999; i++) lines.push(`-A C${i} -j C${i + 1}`);
    lines.push('-A C999 -j DROP', 'COMMIT');
    const t = trace(lines.join('\n'), { protocol: 'tcp', src: '1.2.3.4', dst: '172.18.0.4', dport: 80 });
    assert.equal(t.outcomes[0]!.disposition, 'dropped');
    assert.equal(t.outcomes[0]!.steps.length, 1001);
  });

  it('masquerades with the outgoing interface address and drops martians', () => {
    const rules = '*nat\n:POSTROUTING ACCEPT [0:0]\n-A POSTROUTING -o eth1 -j MASQUERADE\nCOMMIT\n';
    const t = trace(
      rules,
      { protocol: 'udp', src: '10.0.0.5', dst: '8.8.8.8', dport: 53, in: 'cni0' },
      {
        node: {
          addresses: ['172.18.0.4'],
          interfaces: [
            { name: 'eth1', addresses: ['192.0.2.10/24'] },
            { name: 'cni0', addresses: ['10.0.0.1/24'] },
          ],
          uplink: 'eth1',
        },
      },
    );
    assert.deepEqual(
      [t.outcomes[0]!.disposition, t.outcomes[0]!.snat, t.outcomes[0]!.packet.out],
      ['forwarded', '192.0.2.10', 'eth1'],
    );
    const m = trace('*filter\n:INPUT ACCEPT [0:0]\nCOMMIT\n', {
      protocol: 'tcp',
      src: '1.2.3.4',
      dst: '127.0.0.1',
      dport: 22,
    });
    assert.deepEqual([m.outcomes[0]!.disposition], ['dropped']);
    assert.match(m.outcomes[0]!.reason!, /martian destination 127\.0\.0\.1/);
  });

  it('models session affinity: with a live recent entry the client sticks to its endpoint', () => {
    const rules = [
      '*nat',
      ':PREROUTING ACCEPT [0:0]',
      ':SVC - [0:0]',
      ':SEP-A - [0:0]',
      ':SEP-B - [0:0]',
      '-A PREROUTING -d 10.96.0.1/32 -p tcp -m tcp --dport 80 -j SVC',
      '-A SVC -m recent --name SEP-B --rcheck --seconds 10800 --reap -j SEP-B',
      '-A SVC -m statistic --mode random --probability 0.50000000000 -j SEP-A',
      '-A SVC -j SEP-B',
      '-A SEP-A -p tcp -m recent --name SEP-A --set --mask 255.255.255.255 --rsource -m tcp -j DNAT --to-destination 10.0.0.1:80',
      '-A SEP-B -p tcp -m recent --name SEP-B --set --mask 255.255.255.255 --rsource -m tcp -j DNAT --to-destination 10.0.0.2:80',
      'COMMIT',
    ].join('\n');
    const fresh = trace(rules, { protocol: 'tcp', src: '1.2.3.4', dst: '10.96.0.1', dport: 80 });
    assert.equal(fresh.outcomes.length, 2);
    const sticky = trace(
      rules,
      { protocol: 'tcp', src: '1.2.3.4', dst: '10.96.0.1', dport: 80 },
      { node: { addresses: ['172.18.0.4'] }, recent: ['SEP-B'] },
    );
    assert.deepEqual(
      sticky.outcomes.map(o => [o.probabilityExact, o.dnat]),
      [['1', '10.0.0.2:80']],
    );
  });
});

describe('IPv6', () => {
  const rules = [
    '# Generated by ip6tables-save v1.8.9 (nf_tables)',
    '*nat',
    ':PREROUTING ACCEPT [0:0]',
    ':POSTROUTING ACCEPT [0:0]',
    '-A PREROUTING -d 2001:db8::10/128 -p tcp -m tcp --dport 80 -j DNAT --to-destination [fd00::5]:8080',
    '-A POSTROUTING -s fd00::/64 -o eth0 -j MASQUERADE',
    'COMMIT',
    '*filter',
    ':INPUT DROP [0:0]',
    ':FORWARD ACCEPT [0:0]',
    '-A INPUT -p ipv6-icmp -m icmp6 --icmpv6-type echo-request -j ACCEPT',
    '-A INPUT -p tcp -m tcp --dport 22 -j REJECT',
    'COMMIT',
  ].join('\n');
  const node = { node: { addresses: ['2001:db8::1'], routes: [{ dst: 'fd00::/64', iface: 'cni0' }] } };

  it('DNATs to a bracketed [v6]:port and forwards by the route', () => {
    const t = trace(rules, { protocol: 'tcp', src: '2001:db8::99', dst: '2001:db8::10', dport: 80 }, node);
    assert.deepEqual(
      t.outcomes.map(o => [o.disposition, o.dnat, o.packet.out]),
      [['forwarded', '[fd00::5]:8080', 'cni0']],
    );
  });

  it('matches ICMPv6 types by name and rejects with the IPv6 default answer', () => {
    const ping = trace(rules, { protocol: 'icmpv6', src: '2001:db8::99', dst: '2001:db8::1' }, node);
    assert.deepEqual(
      ping.outcomes.map(o => o.disposition),
      ['local'],
    );
    const ssh = trace(rules, { protocol: 'tcp', src: '2001:db8::99', dst: '2001:db8::1', dport: 22 }, node);
    assert.deepEqual(
      ssh.outcomes.map(o => [o.disposition, o.rejectWith]),
      [['rejected', 'icmp6-port-unreachable']],
    );
  });

  it('refuses an IPv4 packet for an IPv6 ruleset with a clear message', () => {
    const r = tracePacket(parseClean(rules), { protocol: 'tcp', src: '1.2.3.4', dst: '5.6.7.8', dport: 80 }, node);
    assert.equal(r.ok, false);
    assert.match(r.ok ? '' : r.error, /5\.6\.7\.8 is IPv4 but the ruleset is IPv6/);
  });
});
