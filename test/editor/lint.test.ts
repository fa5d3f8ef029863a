import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { lintRuleset, parseIptables, tracePacket } from '../../src/engine/api.ts';
import { kernelFixtures } from '../kernel/oracle-harness.ts';
import { dump, seedText } from './helpers.ts';

const lint = (lines: string[]) =>
  lintRuleset(parseIptables(dump(lines), { lazy: true })).map(
    d => `${d.range.start.line + 1} ${d.code}${d.relatedLine !== null ? ` by ${d.relatedLine + 1}` : ''}`,
  );

const FILTER = ['*filter', ':INPUT ACCEPT [0:0]', ':FORWARD ACCEPT [0:0]', ':OUTPUT ACCEPT [0:0]'];

describe('linter (src/engine/lint)', () => {
  it('reports user chains nothing jumps to, except kube-proxy/kubelet canaries', () => {
    assert.deepEqual(
      lint([
        ...FILTER,
        ':UNUSED - [0:0]',
        ':USED - [0:0]',
        ':KUBE-PROXY-CANARY - [0:0]',
        '-A INPUT -j USED',
        '-A UNUSED -j DROP',
        'COMMIT',
      ]),
      ['5 unused-chain'],
    );
  });

  it('counts gotos as references', () => {
    assert.deepEqual(lint([...FILTER, ':G - [0:0]', '-A INPUT -g G', 'COMMIT']), []);
  });

  it('finds a rule whose criteria are a superset of an earlier terminating rule (literal shadowing)', () => {
    assert.deepEqual(
      lint([
        ...FILTER,
        '-A INPUT -p tcp -j ACCEPT',
        '-A INPUT -s 10.0.0.0/8 -p tcp -m tcp --dport 22 -j DROP',
        '-A INPUT -p udp -j DROP',
        'COMMIT',
      ]),
      ['6 shadowed-rule by 5'],
    );
  });

  it('reads criteria, not spelling: implicit and explicit tcp, /32 and bare hosts, option order', () => {
    assert.deepEqual(
      lint([
        ...FILTER,
        '-A INPUT -d 10.1.1.1 -p tcp --dport 80 -j REJECT',
        '-A INPUT -p tcp -m tcp --dport 80 -d 10.1.1.1/32 -j ACCEPT',
        'COMMIT',
      ]),
      ['6 shadowed-rule by 5'],
    );
  });

  it('does not count a non-terminating earlier rule, a random one, or one with other criteria', () => {
    assert.deepEqual(
      lint([
        ...FILTER,
        '-A INPUT -p tcp -j LOG --log-prefix "tcp "',
        '-A INPUT -p tcp -m statistic --mode random --probability 0.5 -j DROP',
        '-A INPUT -p tcp -m statistic --mode random --probability 0.5 -j DROP',
        '-A INPUT -p tcp --dport 22 -j ACCEPT',
        '-A INPUT -p tcp --dport 23 -j ACCEPT',
        '-A INPUT ! -p tcp -j ACCEPT',
        'COMMIT',
      ]),
      [],
    );
  });

  it('the target and its options are not criteria', () => {
    assert.deepEqual(
      lint([
        ...FILTER,
        '-A INPUT -p tcp -j REJECT --reject-with tcp-reset',
        '-A INPUT -p tcp -j REJECT --reject-with icmp-port-unreachable',
        'COMMIT',
      ]),
      ['6 shadowed-rule by 5'],
    );
  });

  it('a rule that changes the packet in between ends shadowing by rules reading that state, not by header-only ones', () => {
    const rows = [
      ...FILTER,
      ':SET - [0:0]',
      '-A INPUT -m mark --mark 0x1 -j DROP',
      '-A INPUT -p udp -j ACCEPT',
      '-A INPUT -j SET',
      '-A INPUT -m mark --mark 0x1 -p tcp -j ACCEPT',
      '-A INPUT -p udp --dport 53 -j DROP',
      '-A SET -j MARK --set-mark 0x1',
      'COMMIT',
    ];
    assert.deepEqual(lint(rows), ['10 shadowed-rule by 7']);
  });

  it('RETURN and gotos end the chain for their packets; a jump does not', () => {
    assert.deepEqual(
      lint([
        ...FILTER,
        ':X - [0:0]',
        ':Y - [0:0]',
        '-A INPUT -j X',
        '-A X -s 1.2.3.4 -j RETURN',
        '-A X -s 1.2.3.4 -p tcp -j DROP',
        '-A X -d 5.6.7.8 -j Y',
        '-A X -d 5.6.7.8 -j DROP',
        '-A Y -j ACCEPT',
        'COMMIT',
      ]),
      ['9 shadowed-rule by 8'],
    );
  });

  it('an unconditional terminating rule shadows every rule after it', () => {
    assert.deepEqual(
      lint([...FILTER, '-A OUTPUT -j ACCEPT', '-A OUTPUT -p tcp -j DROP', '-A OUTPUT -o lo -j DROP', 'COMMIT']),
      ['6 shadowed-rule by 5', '7 shadowed-rule by 5'],
    );
  });

  it('finds nothing in the seed dump', () => {
    assert.deepEqual(lintRuleset(parseIptables(seedText(), { lazy: true })), []);
  });

  it('never reports a rule the Linux kernel matched, or the chain holding it (kernel oracle fixtures)', () => {
    const fixtures = kernelFixtures();
    assert.ok(fixtures.length >= 10);
    for (const f of fixtures) {
      const rs = parseIptables(f.rules, { lazy: true });
      const findings = lintRuleset(rs);
      const hits = f.run.results.flatMap(r => r.probe_rule_hits);
      assert.ok(hits.length > 0, f.name);
      for (const h of hits) {
        const rule = rs.tables.get(h.table)?.chains.get(h.chain)?.rules[h.rule - 1];
        assert.ok(rule, `${f.name}: ${h.table} ${h.chain} #${h.rule}`);
        const wrong = findings.filter(
          d =>
            (d.code === 'shadowed-rule' && d.range.start.line === rule.line) ||
            (d.code === 'unused-chain' && d.table === h.table && d.chain === h.chain),
        );
        assert.deepEqual(
          wrong.map(d => d.message),
          [],
          `${f.name}: the kernel matched ${h.table} ${h.chain} #${h.rule}`,
        );
      }
    }
  });

  it('a rule reported as shadowed never matches in any trace (random rulesets and packets)', () => {
    const criteria = [
      '',
      '-p tcp',
      '-p udp',
      '-p tcp --dport 22',
      '-p tcp -m tcp --dport 80',
      '-s 10.0.0.0/8',
      '-s 10.1.0.0/16 -p tcp',
      '-m mark --mark 0x1',
      '-d 10.9.9.9',
      '! -p tcp',
    ];
    const targets = ['-j ACCEPT', '-j DROP', '-j RETURN', '-j MARK --set-mark 0x1', '-j LOG', '-j SUB', '-j REJECT'];
    const ruleArb = fc
      .tuple(fc.constantFrom(...criteria), fc.constantFrom(...criteria), fc.constantFrom(...targets))
      .map(([a, b, t]) => `-A INPUT ${a} ${b} ${t}`.replace(/\s+/g, ' '));
    const packetArb = fc.record({
      proto: fc.constantFrom('tcp', 'udp'),
      src: fc.constantFrom('10.1.2.3', '10.200.0.1', '192.0.2.1'),
      dst: fc.constantFrom('10.9.9.9', '10.9.9.8'),
      dport: fc.constantFrom(22, 80, 443),
      mark: fc.constantFrom('0x0', '0x1'),
    });
    let reported = 0;
    fc.assert(
      fc.property(
        fc.array(ruleArb, { minLength: 1, maxLength: 8 }),
        fc.array(packetArb, { minLength: 1, maxLength: 6 }),
        (rules, packets) => {
          const text = dump([...FILTER, ':SUB - [0:0]', ...rules, '-A SUB -j MARK --set-mark 0x1', 'COMMIT']);
          const rs = parseIptables(text, { lazy: true });
          const shadowed = new Set(
            lintRuleset(rs)
              .filter(d => d.code === 'shadowed-rule')
              .map(d => d.range.start.line + 1),
          );
          reported += shadowed.size;
          for (const p of packets) {
            const r = tracePacket(
              rs,
              { protocol: p.proto, src: p.src, dst: p.dst, dport: p.dport, mark: p.mark, from: 'outside' },
              { node: { addresses: ['10.9.9.9'] } },
            );
            assert.ok(r.ok);
            for (const o of r.trace.outcomes)
              for (const s of o.steps)
                assert.ok(!shadowed.has(s.line), `line ${s.line} was reported shadowed but matched:\n${text}`);
          }
        },
      ),
      { numRuns: 300 },
    );
    // The property is not vacuous: the generator does produce shadowed rules.
    assert.ok(reported > 50, `only ${reported} shadowed rules were generated`);
  });
});
