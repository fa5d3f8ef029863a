/**
 * The nftables linter's invariant (ARCHITECTURE.md, src/engine/lint/): a rule it calls shadowed never matches
 * in any trace. Checked on hand-written chains where the earlier rule covers the later one, and on near
 * misses the linter must leave alone (a mark set in between, a numgen match, a jump in between, a rule with
 * fewer criteria after one with more).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { lintNft, parseRuleset, tracePacket, parsePacketText } from '../../src/engine/api.ts';

const RULESET = [
  'table inet t {',
  '\tchain side {',
  '\t\tmeta mark set 0x1',
  '\t}',
  '\tchain in {',
  '\t\ttype filter hook input priority 0; policy accept;',
  '\t\ttcp dport 22 accept',
  '\t\ttcp dport 22 ip saddr 10.0.0.1 drop',
  '\t\tmeta mark 0x1 drop',
  '\t\tjump side',
  '\t\tmeta mark 0x1 drop',
  '\t\tnumgen random mod 2 0 udp dport 53 drop',
  '\t\tnumgen random mod 2 0 udp dport 53 accept',
  '\t\tudp dport 53 ip saddr 10.0.0.1 reject',
  '\t\tudp dport 53 drop',
  '\t\tudp dport 123 counter drop',
  '\t\tudp dport 123 ip saddr 10.0.0.9 accept',
  '\t}',
  '}',
  '',
].join('\n');

const PACKETS = [
  'tcp 10.0.0.1:4000 -> 10.0.0.2:22',
  'tcp 10.0.0.9:4000 -> 10.0.0.2:22',
  'udp 10.0.0.1:4000 -> 10.0.0.2:53',
  'udp 10.0.0.9:4000 -> 10.0.0.2:53',
  'udp 10.0.0.9:4000 -> 10.0.0.2:123',
  'tcp 10.0.0.9:4000 -> 10.0.0.2:80',
];

describe('nft linter: shadowed rules', () => {
  it('names exactly the rules an earlier rule takes every packet from, and none of them ever matches', () => {
    const parsed = parseRuleset(RULESET, { file: 't.nft' });
    assert.deepEqual(
      parsed.diagnostics.filter(d => d.severity === 'error'),
      [],
    );
    const shadowed = lintNft(parsed.nft!).filter(d => d.code === 'shadowed-rule');
    const lines = RULESET.split('\n');
    // 0-based lines: `tcp dport 22 ip saddr 10.0.0.1 drop` and `udp dport 123 ip saddr 10.0.0.9 accept`.
    assert.deepEqual(
      shadowed.map(d => lines[d.range.start.line]!.trim()),
      ['tcp dport 22 ip saddr 10.0.0.1 drop', 'udp dport 123 ip saddr 10.0.0.9 accept'],
    );
    const never = new Set(shadowed.map(d => d.range.start.line + 1));
    for (const text of PACKETS) {
      const p = parsePacketText(text);
      assert.ok(p.ok);
      const r = tracePacket(parsed.ruleset, p.input, { node: { addresses: ['10.0.0.2'] } });
      assert.ok(r.ok, text);
      for (const o of r.trace.outcomes)
        for (const s of o.steps) assert.ok(!never.has(s.line), `${text}: the shadowed line ${s.line} matched`);
    }
  });
});
