/**
 * The evaluator's hook interceptors (src/engine/eval/intercept.ts), independent of IPVS: an interceptor
 * runs between the tables of its hook by netfilter priority, its branches carry exact probabilities and
 * assumptions, a taken packet leaves through LOCAL_OUT → POSTROUTING, a re-sent packet is not taken again,
 * and an interceptor that passes everything leaves the trace exactly as it is without one.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { HookInterceptor, InterceptBranch } from '../../src/engine/eval/intercept.ts';
import { probabilitySums, tracePacket } from '../../src/engine/eval/trace.ts';
import { parseIptables } from '../../src/engine/iptables/parse.ts';
import { parseAddr } from '../../src/engine/net/addr.ts';
import { ONE, rational } from '../../src/engine/rational.ts';

const RULES = `*filter
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
-A INPUT -p tcp -m tcp --dport 22 -j DROP
-A OUTPUT -d 10.0.0.6/32 -p tcp -j REJECT --reject-with tcp-reset
COMMIT
*nat
:PREROUTING ACCEPT [0:0]
:INPUT ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
-A INPUT -j SNAT --to-source 192.168.0.1
-A POSTROUTING -d 10.0.0.0/24 -j MASQUERADE
COMMIT
`;
const rs = parseIptables(RULES, { file: 'test.rules' });
const node = {
  addresses: ['192.168.0.1'],
  interfaces: [
    { name: 'eth0', addresses: ['192.168.0.1/24'] },
    { name: 'dummy0', addresses: ['10.96.0.1/32'] },
  ],
};
const VIP = parseAddr('10.96.0.1')!;

function interceptor(
  hook: 'INPUT' | 'OUTPUT',
  priority: number,
  branches: (port: number | null) => InterceptBranch[] | null,
  calls: number[] = [],
): HookInterceptor {
  return {
    name: 'TEST',
    hook,
    priority,
    intercept(pkt) {
      calls.push(pkt.dport ?? -1);
      if (pkt.dst.v !== 4 || pkt.dst.n !== VIP.n) return { kind: 'pass', note: null };
      const b = branches(pkt.dport);
      return b ? { kind: 'take', branches: b } : { kind: 'pass', note: 'not this port' };
    },
  };
}

const resend = (ip: string, port: number, probability = ONE, notes: string[] = []): InterceptBranch => ({
  probability,
  assumptions: [],
  notes,
  action: { kind: 'resend', dst: parseAddr(ip)!, dport: port },
});

function run(input: string, interceptors: HookInterceptor[] = []) {
  const [proto, src, , dst] = input.split(' ');
  const [addr, port] = dst!.split(':');
  const t = tracePacket(
    rs,
    { protocol: proto!, src, dst: addr!, dport: port ? Number(port) : undefined },
    { node, interceptors },
  );
  assert.ok(t.ok, t.ok ? '' : t.error);
  return t.trace;
}

describe('hook interceptors in the evaluator', () => {
  it('an interceptor that passes everything leaves the trace unchanged', () => {
    for (const p of [
      'tcp 172.16.0.9 -> 10.96.0.1:80',
      'tcp 172.16.0.9 -> 10.96.0.1:22',
      'udp 172.16.0.9 -> 10.0.0.7:53',
    ]) {
      const passing = [interceptor('INPUT', 99, () => null), interceptor('OUTPUT', -98, () => null)];
      const withPass = JSON.parse(JSON.stringify(run(p, passing)));
      // Pass notes are events only; drop them to compare with the plain trace.
      for (const o of withPass.outcomes) o.events = o.events.filter((e: { kind: string }) => e.kind !== 'note');
      assert.deepEqual(withPass, JSON.parse(JSON.stringify(run(p))), p);
    }
  });

  it('taken packets split with exact probabilities and leave through LOCAL_OUT and POSTROUTING', () => {
    const icpt = interceptor('INPUT', 99, () => [
      resend('10.0.0.5', 8080, rational(1n, 3n), ['to 5']),
      resend('10.0.0.7', 8080, rational(2n, 3n), ['to 7']),
    ]);
    const t = run('tcp 172.16.0.9 -> 10.96.0.1:80', [icpt]);
    assert.deepEqual(
      t.outcomes.map(o => [o.probabilityExact, o.disposition, o.dnat, o.snat, o.packet.in, o.packet.out, o.notes]),
      [
        ['2/3', 'forwarded', '10.0.0.7:8080', '192.168.0.1', null, 'eth0', ['to 7']],
        ['1/3', 'forwarded', '10.0.0.5:8080', '192.168.0.1', null, 'eth0', ['to 5']],
      ],
    );
    // nat INPUT (priority 100) comes after the interceptor (99): a taken packet never reaches it.
    assert.ok(!t.outcomes[0]!.steps.some(s => s.hook === 'INPUT' && s.table === 'nat'));
    assert.deepEqual(
      t.outcomes[0]!.events.filter(e => e.kind === 'hook').map(e => (e as { hook: string }).hook),
      ['PREROUTING', 'INPUT', 'OUTPUT', 'POSTROUTING'],
    );
    assert.deepEqual(probabilitySums(t), ['1']);
  });

  it('a packet the interceptor passes goes on to the later tables of the hook', () => {
    const t = run('tcp 172.16.0.9 -> 10.96.0.1:81', [
      interceptor('INPUT', 99, p => (p === 80 ? [resend('10.0.0.5', 80)] : null)),
    ]);
    assert.deepEqual(
      t.outcomes.map(o => [o.disposition, o.snat]),
      [['local', '192.168.0.1']],
    );
    assert.ok(t.outcomes[0]!.events.some(e => e.kind === 'note' && e.text === 'TEST: not this port'));
  });

  it('runs at its priority: after filter INPUT (0) at 99, before it at -200', () => {
    const calls: number[] = [];
    const late = run('tcp 172.16.0.9 -> 10.96.0.1:22', [
      interceptor('INPUT', 99, () => [resend('10.0.0.5', 22)], calls),
    ]);
    assert.deepEqual(
      late.outcomes.map(o => o.disposition),
      ['dropped'],
    );
    assert.deepEqual(calls, [], 'filter INPUT dropped it before the interceptor');
    const early = run('tcp 172.16.0.9 -> 10.96.0.1:22', [interceptor('INPUT', -200, () => [resend('10.0.0.5', 22)])]);
    assert.deepEqual(
      early.outcomes.map(o => [o.disposition, o.dnat]),
      [['forwarded', '10.0.0.5:22']],
    );
  });

  it('the re-sent packet crosses filter OUTPUT; reject, drop and unknown end the path there', () => {
    const t = run('tcp 172.16.0.9 -> 10.96.0.1:80', [
      interceptor('INPUT', 99, () => [
        resend('10.0.0.6', 80, rational(1n, 4n)),
        {
          probability: rational(1n, 4n),
          assumptions: [],
          notes: [],
          action: { kind: 'reject', with: 'icmp-port-unreachable', reason: 'no destination' },
        },
        {
          probability: rational(1n, 4n),
          assumptions: [],
          notes: [],
          action: { kind: 'drop', reason: 'dropped by test' },
        },
        {
          probability: rational(1n, 4n),
          assumptions: [],
          notes: [],
          action: { kind: 'unknown', reason: 'cannot tell' },
        },
      ]),
    ]);
    assert.deepEqual(t.outcomes.map(o => [o.disposition, o.rejectWith, o.reason]).sort(), [
      ['dropped', null, 'dropped by test'],
      ['rejected', 'icmp-port-unreachable', 'no destination'],
      ['rejected', 'tcp-reset', 'REJECT with tcp-reset'],
      ['unknown', null, 'cannot tell'],
    ]);
    assert.deepEqual(probabilitySums(t), ['1']);
  });

  it('branches under assumptions keep the probability invariant', () => {
    const a = { table: 'test', chain: 'X', rule: 1, line: 0, reason: 'state' };
    const t = run('tcp 172.16.0.9 -> 10.96.0.1:80', [
      interceptor('INPUT', 99, () => [
        { ...resend('10.0.0.5', 80), assumptions: [{ ...a, assumed: 'matches' }] },
        { ...resend('10.0.0.7', 80), assumptions: [{ ...a, assumed: 'does not match' }] },
      ]),
    ]);
    assert.equal(t.unknown, true);
    assert.deepEqual(probabilitySums(t), ['1', '1']);
  });

  it('a packet re-sent to the node itself loops back and is not taken a second time', () => {
    const calls: number[] = [];
    const t = run('tcp 172.16.0.9 -> 10.96.0.1:80', [
      interceptor('INPUT', 99, () => [resend('192.168.0.1', 8080)], calls),
    ]);
    assert.deepEqual(
      t.outcomes.map(o => [o.disposition, o.packet.dst, o.packet.dport]),
      [['local', '192.168.0.1', 8080]],
    );
    assert.deepEqual(calls, [80], 'only the first pass was offered to the interceptor');
  });

  it("OUTPUT interceptors take the node's own packets after nat OUTPUT", () => {
    const t = run('tcp 192.168.0.1 -> 10.96.0.1:80', [interceptor('OUTPUT', -98, () => [resend('10.0.0.5', 80)])]);
    assert.equal(t.from, 'local');
    assert.deepEqual(
      t.outcomes.map(o => [o.disposition, o.dnat, o.snat]),
      [['output', '10.0.0.5:80', '192.168.0.1']],
    );
  });
});
