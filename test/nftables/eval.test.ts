/**
 * nftables evaluation details that the kernel fixtures sample but cannot state exactly: numgen's exact
 * branch weights (net/netfilter/nft_numgen.c, `reciprocal_scale(get_random_u32(), modulus)`), unknowns as a
 * third answer, stated assumptions, and families that are read but not evaluated.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseRuleset, probabilitySums, tracePacket, type Trace } from '../../src/engine/api.ts';

function trace(text: string, packet: Parameters<typeof tracePacket>[1]): Trace {
  const parsed = parseRuleset(text, { file: 't.nft' });
  assert.deepEqual(
    parsed.diagnostics.filter(d => d.severity === 'error').map(d => d.message),
    [],
  );
  const r = tracePacket(parsed.ruleset, packet, { node: { addresses: ['172.18.0.4'] } });
  assert.ok(r.ok, r.ok ? '' : r.error);
  return r.trace;
}

const pkt = { protocol: 'tcp', src: '203.0.113.9', dst: '172.18.0.4', dport: 80, from: 'outside', in: 'eth0' } as const;

describe('nftables evaluation', () => {
  it('numgen random mod 3: the kernel draws value i for ⌈2^32(i+1)/3⌉ − ⌈2^32·i/3⌉ of the 2^32 random numbers', () => {
    const t = trace(
      'table ip t {\n chain c { type filter hook input priority 0; policy accept;\n  numgen random mod 3 vmap { 0 : drop, 1 : accept, 2 : jump x }\n }\n chain x { reject }\n}\n',
      pkt,
    );
    // 1431655766 / 2^32 for value 0 (reduced: 715827883/2147483648), 1431655765 / 2^32 for values 1 and 2.
    assert.deepEqual(t.outcomes.map(o => [o.disposition, o.probabilityExact]).sort(), [
      ['dropped', '715827883/2147483648'],
      ['local', '1431655765/4294967296'],
      ['rejected', '1431655765/4294967296'],
    ]);
    assert.deepEqual(probabilitySums(t), ['1']);
  });

  it('an expression it does not model forks into "matches" and "does not match", never a guess', () => {
    const t = trace(
      'table ip t {\n chain c { type filter hook input priority 0; policy accept;\n  jhash ip saddr mod 2 seed 0x1 == 0 drop\n }\n}\n',
      pkt,
    );
    assert.deepEqual(t.outcomes.map(o => [o.disposition, o.assumptions.map(a => a.assumed)]).sort(), [
      ['dropped', ['matches']],
      ['local', ['does not match']],
    ]);
    assert.equal(t.unknown, true);
  });

  it('limit is assumed not exceeded, and the trace says so', () => {
    const t = trace(
      'table inet t {\n chain c { type filter hook input priority 0; policy drop;\n  limit rate 10/second accept\n }\n}\n',
      pkt,
    );
    assert.equal(t.outcomes[0]!.disposition, 'local');
    assert.match(t.outcomes[0]!.notes.join('\n'), /assumed not exceeded/);
  });

  it('queue is unknown: a userspace program decides', () => {
    const t = trace(
      'table inet t {\n chain c { type filter hook input priority 0; policy accept;\n  tcp dport 80 queue num 1\n }\n}\n',
      pkt,
    );
    assert.equal(t.outcomes[0]!.disposition, 'unknown');
  });

  it('arp, bridge and netdev tables are read and the trace says they are not evaluated', () => {
    const t = trace(
      'table netdev n {\n chain i { type filter hook ingress device "eth0" priority 0; policy drop;\n }\n}\ntable inet t {\n chain c { type filter hook input priority 0; policy accept;\n }\n}\n',
      pkt,
    );
    assert.equal(t.outcomes[0]!.disposition, 'local');
    assert.match(t.warnings.join('\n'), /not evaluated: table netdev n/);
  });

  it('dnat ip to in an inet table rewrites IPv4 packets only', () => {
    const text =
      'table inet t {\n chain p { type nat hook prerouting priority dstnat; policy accept;\n  tcp dport 80 dnat ip to 10.1.0.5:8080\n }\n}\n';
    assert.equal(trace(text, pkt).outcomes[0]!.dnat, '10.1.0.5:8080');
  });
});

describe('nftables hostile values', () => {
  it('a shift far wider than the register is a diagnostic, not a giant number or an exception', () => {
    const parsed = parseRuleset(
      'table ip t {\n chain c { type filter hook input priority 0; policy accept;\n  meta mark set meta mark << 99999999999999999999 accept\n }\n}\n',
      { file: 't.nft' },
    );
    const r = tracePacket(parsed.ruleset, pkt, { node: { addresses: ['172.18.0.4'] } });
    assert.ok(r.ok);
    assert.ok(
      parsed.diagnostics.some(d => d.severity === 'error'),
      parsed.diagnostics.map(d => d.message).join('; '),
    );
  });
});

describe('nftables conntrack expressions', () => {
  // The kernel agrees: nforacle.py --nft on this ruleset delivered the probe to 10.1.0.5:80 with hits p#1 accept, f#1 accept.
  it('ct original daddr / proto-dst keep the address and port the client sent after a DNAT (nft_ct.c tuple)', () => {
    const text = [
      'table ip t {',
      ' chain p { type nat hook prerouting priority dstnat; policy accept;',
      '  tcp dport 8080 dnat to 10.1.0.5:80',
      ' }',
      ' chain f { type filter hook forward priority 0; policy drop;',
      '  ct original ip daddr 172.18.0.4 meta l4proto tcp ct original proto-dst 8080 ct status dnat ip daddr 10.1.0.5 accept',
      ' }',
      '}',
      '',
    ].join('\n');
    const t = trace(text, { ...pkt, dport: 8080 });
    assert.deepEqual(
      t.outcomes.map(o => [o.disposition, o.dnat, o.steps.at(-1)?.chain, o.steps.at(-1)?.verdict]),
      [['forwarded', '10.1.0.5:80', 'f', 'accept']],
    );
  });
});
