/**
 * Property tests (fast-check): print(parse(x)) reads back the same; random and mutated dumps never throw or
 * hang and keep every line accounted for; traced outcome probabilities always sum to exactly 1; the chain
 * index changes speed, never answers.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parseIptables, printIptables, probabilitySums, tracePacket } from '../../src/engine/api.ts';
import { readFixture } from '../helpers/fixtures.ts';

const ip = fc
  .tuple(fc.integer({ min: 1, max: 223 }), fc.nat(255), fc.nat(255), fc.integer({ min: 1, max: 254 }))
  .map(p => p.join('.'));
const cidr = fc.tuple(ip, fc.integer({ min: 8, max: 32 })).map(([a, p]) => `${a}/${p}`);
const port = fc.integer({ min: 1, max: 65535 });
const chainName = fc.constantFrom('A', 'B', 'C', 'KUBE-SVC-X', 'KUBE-SEP-Y');

const matchPart = fc.oneof(
  cidr.map(c => `-s ${c}`),
  cidr.map(c => `! -d ${c}`),
  fc.tuple(fc.constantFrom('tcp', 'udp'), port).map(([p, n]) => `-p ${p} -m ${p} --dport ${n}`),
  fc.tuple(port, port).map(([a, b]) => `-p tcp -m multiport --dports ${Math.min(a, b)}:${Math.max(a, b)},22`),
  fc.constantFrom(
    '-m conntrack --ctstate NEW',
    '-m addrtype --dst-type LOCAL',
    '-m mark --mark 0x4000/0x4000',
    '-i eth+',
    '-o lo',
    '-m comment --comment "a b \\"c\\""',
  ),
  fc
    .integer({ min: 1, max: 99 })
    .map(n => `-m statistic --mode random --probability 0.${String(n).padStart(2, '0')}000000000`),
  fc.integer({ min: 2, max: 5 }).map(n => `-m statistic --mode nth --every ${n} --packet 0`),
  fc.constant('-m u32 --u32 "0>>22&0x3C@ 12>>26&0x3C@ 0=0x1"'),
);
const target = fc.oneof(
  fc.constantFrom(
    '-j ACCEPT',
    '-j DROP',
    '-j RETURN',
    '-j REJECT --reject-with icmp-port-unreachable',
    '-j MARK --set-xmark 0x4000/0x4000',
    '-j LOG --log-prefix "x: "',
  ),
  chainName.map(c => `-j ${c}`),
  chainName.map(c => `-g ${c}`),
);
const rule = fc
  .tuple(
    fc.constantFrom('INPUT', 'FORWARD', 'OUTPUT', 'A', 'B', 'C', 'KUBE-SVC-X', 'KUBE-SEP-Y'),
    fc.array(matchPart, { maxLength: 4 }),
    target,
  )
  .map(([c, ms, t]) => `-A ${c} ${ms.join(' ')} ${t}`.replace(/\s+/g, ' '));
const filterDump = fc
  .array(rule, { maxLength: 25 })
  .map(rules =>
    [
      '*filter',
      ':INPUT ACCEPT [0:0]',
      ':FORWARD DROP [0:0]',
      ':OUTPUT ACCEPT [0:0]',
      ':A - [0:0]',
      ':B - [0:0]',
      ':C - [0:0]',
      ':KUBE-SVC-X - [0:0]',
      ':KUBE-SEP-Y - [0:0]',
      ...rules,
      'COMMIT',
      '',
    ].join('\n'),
  );

describe('properties', () => {
  it('print(parse(x)) parses to the same rules and prints identically', () => {
    fc.assert(
      fc.property(filterDump, text => {
        const a = parseIptables(text);
        const printed = printIptables(a);
        const b = parseIptables(printed);
        assert.equal(printIptables(b), printed);
        assert.equal(b.ruleCount, a.ruleCount);
        assert.deepEqual(b.diagnostics.map(d => d.code).sort(), a.diagnostics.map(d => d.code).sort());
      }),
      { numRuns: 300 },
    );
  });

  it('never throws or hangs on random or mutated input', () => {
    const base = readFixture('kube-proxy', 'TestTracePacket', 'expected.rules');
    const mutated = fc
      .tuple(fc.nat(base.length), fc.nat(200), fc.string({ maxLength: 40 }))
      .map(([at, cut, ins]) => base.slice(0, at) + ins + base.slice(at + cut));
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ maxLength: 2000 }), fc.string({ unit: 'binary', maxLength: 500 }), mutated, filterDump),
        text => {
          const rs = parseIptables(text);
          for (const d of rs.diagnostics) assert.ok(d.range.start.line >= 0 && d.range.start.line <= rs.lineCount);
          const r = tracePacket(
            rs,
            { protocol: 'tcp', src: '10.0.0.2', dst: '172.30.0.44', dport: 80 },
            { node: { addresses: ['192.168.0.2'] }, budget: 200000 },
          );
          if (r.ok) for (const s of probabilitySums(r.trace)) assert.equal(s, '1');
        },
      ),
      { numRuns: 400 },
    );
  });

  it('outcome probabilities sum to exactly 1 and indexing never changes the answer', () => {
    const svc = fc.array(fc.tuple(ip, port, fc.integer({ min: 1, max: 6 })), { minLength: 30, maxLength: 120 });
    fc.assert(
      fc.property(svc, fc.nat(119), (services, pick) => {
        const lines = ['*nat', ':PREROUTING ACCEPT [0:0]', ':KUBE-SERVICES - [0:0]'];
        services.forEach((_, i) => lines.push(`:SVC${i} - [0:0]`));
        lines.push('-A PREROUTING -j KUBE-SERVICES');
        services.forEach(([addr, p], i) =>
          lines.push(`-A KUBE-SERVICES -d ${addr}/32 -p tcp -m tcp --dport ${p} -j SVC${i}`),
        );
        services.forEach(([, , n], i) => {
          for (let e = 0; e < n; e++) {
            const stat = e < n - 1 ? ` -m statistic --mode random --probability ${(1 / (n - e)).toFixed(11)}` : '';
            lines.push(`-A SVC${i} -p tcp${stat} -j DNAT --to-destination 10.1.${i}.${e + 1}:8080`);
          }
        });
        lines.push('COMMIT');
        const rs = parseIptables(lines.join('\n'));
        const [addr, p] = services[pick % services.length]!;
        const input = { protocol: 'tcp', src: '192.0.2.9', dst: addr, dport: p };
        const slow = tracePacket(rs, input, { explain: true });
        const fast = tracePacket(rs, input, { explain: false });
        assert.ok(slow.ok && fast.ok);
        assert.deepEqual(probabilitySums(fast.trace), ['1']);
        const view = (t: typeof fast) =>
          t.ok ? t.trace.outcomes.map(o => [o.probabilityExact, o.disposition, o.dnat, o.steps]) : null;
        assert.deepEqual(view(fast), view(slow));
      }),
      { numRuns: 150 },
    );
  });
});
