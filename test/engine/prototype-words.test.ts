/**
 * Words of a dump that name a property every JavaScript object has (`constructor`, `toString`,
 * `__proto__`) are words like any other: tables of known names, protocols and service names are looked up
 * as own keys only. Each verdict is what iptables-nft-restore --test 1.8.9 says of the line (and
 * iptables-legacy-restore --test for the protocol): found by running them on these lines.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseIptables } from '../../src/engine/api.ts';

/** The codes of a file's diagnostics, with their 0-based lines; never a thrown error. */
function codes(text: string): [string, number][] {
  return parseIptables(text, { file: 'rules' }).diagnostics.map(d => [d.code, d.range.start.line]);
}

describe('words named like object properties', () => {
  it('`*constructor` is an unknown table ("table name \'constructor\' invalid"), not a crash', () => {
    for (const name of ['constructor', 'toString', '__proto__'])
      assert.deepEqual(codes(`*${name}\nCOMMIT\n`), [['unknown-table', 0]], name);
  });

  it('`-p constructor` is no protocol ("unknown protocol \\"constructor\\" specified")', () => {
    assert.deepEqual(codes('*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -p constructor -j ACCEPT\nCOMMIT\n'), [
      ['bad-argument', 2],
    ]);
  });

  it('`--dport constructor` is no service ("invalid port/service `constructor\' specified")', () => {
    assert.deepEqual(
      codes('*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -p tcp -m tcp --dport constructor -j ACCEPT\nCOMMIT\n'),
      [['bad-port', 2]],
    );
  });

  it('`--icmp-type constructor` is no ICMP type ("Unknown ICMP type `constructor\'"), nor is `__proto__`', () => {
    for (const [proto, option] of [
      ['icmp', '--icmp-type'],
      ['ipv6-icmp', '--icmpv6-type'],
    ] as const)
      for (const name of ['constructor', '__proto__', 'hasOwnProperty']) {
        const text = `*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -p ${proto} ${option} ${name} -j ACCEPT\nCOMMIT\n`;
        const ds = parseIptables(text, { file: 'rules', family: proto === 'icmp' ? 4 : 6 }).diagnostics;
        assert.deepEqual(
          ds.map(d => [d.code, d.range.start.line]),
          [['bad-argument', 2]],
          `${option} ${name}`,
        );
      }
  });
});
