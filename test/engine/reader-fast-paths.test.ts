/**
 * The reader's fast paths (a plain `:CHAIN POLICY [p:b]` declared without the tokenizer; a `-A` rule's chain
 * found among guesses — the previous rules' chains and the chains declared after them — before a lookup)
 * must read a dump exactly as the general path does. A line with a tab instead of its first space takes the
 * general path (both fast paths refuse tabs) and has the same positions, so the two readings of every
 * generated dump are compared: diagnostics, and each chain's rules in order.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parseIptables } from '../../src/engine/api.ts';
import type { Ruleset } from '../../src/engine/model.ts';
import { IptRule } from '../../src/engine/iptables/rule-node.ts';

const NAMES = ['A', 'B', 'C', 'KUBE-SVC-X', 'KUBE-SEP-1', 'KUBE-SEP-2', 'INPUT', 'OUTPUT', 'DNAT', 'X'.repeat(30)];
const name = fc.constantFrom(...NAMES);

const line = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .tuple(name, fc.constantFrom('-', 'ACCEPT', 'DROP', 'BOGUS'), fc.constantFrom('[0:0]', '[1:2]', '[x]', '[0:0'))
      .map(([n, p, c]) => `:${n} ${p} ${c}`),
  },
  {
    weight: 8,
    arbitrary: fc.tuple(name, name, fc.constantFrom('-j', '-g')).map(([c, t, j]) => `-A ${c} -s 10.0.0.1 ${j} ${t}`),
  },
  fc.tuple(name, name).map(([c, t]) => `-A ${c} -m comment --comment "to ${t}" -j ${t}`),
  { weight: 2, arbitrary: name.map(n => `-N ${n}`) },
  { weight: 2, arbitrary: name.map(n => `-X ${n}`) },
  fc.tuple(name, name).map(([a, b]) => `-E ${a} ${b}`),
  name.map(n => `-F ${n}`),
  fc.tuple(name, fc.nat(3)).map(([n, k]) => `-D ${n} ${k}`),
  fc.tuple(name, name).map(([c, t]) => `-I ${c} -j ${t}`),
  fc.constantFrom(':', ': - [0:0]', ':A  - [0:0]', ':A - [0:0] ', ':A -', ':A', 'COMMIT', '*filter', '*nat'),
);

const dump = fc
  .tuple(fc.constantFrom('filter', 'nat'), fc.array(line, { maxLength: 40 }))
  .map(([t, lines]) => [`*${t}`, ...lines, 'COMMIT', ''].join('\n'));

/** What the reader made of a dump: its diagnostics and every chain's rules as written. */
function reading(rs: Ruleset): unknown {
  const tables = [...rs.tables.values()].map(t => ({
    name: t.name,
    chains: [...t.chains.entries()].map(([key, c]) => ({
      key,
      name: c.name,
      policy: c.policy,
      counters: c.counters,
      range: c.range,
      rules: c.rules.map(r => (r instanceof IptRule ? `${r.line}:${r.raw.replace(/\t/g, ' ')}` : '?')),
    })),
  }));
  return { diagnostics: rs.diagnostics, tables, rules: rs.ruleCount };
}

/** The same dump with a tab for the first space of each declaration and rule line (the general path). */
function tabbed(text: string): string {
  return text
    .split('\n')
    .map(l => (/^(:|-A )/.test(l) ? l.replace(' ', '\t') : l))
    .join('\n');
}

describe('reader fast paths', () => {
  it('read a dump as the general path does (declarations, chains found by guess, -N/-X/-E/-F/-D/-I between)', () => {
    fc.assert(
      fc.property(dump, text => {
        const fast = parseIptables(text, { file: 'rules' });
        const general = parseIptables(tabbed(text), { file: 'rules' });
        assert.deepEqual(reading(fast), reading(general));
      }),
      { seed: 18, numRuns: 1000 },
    );
  });

  it('finds the chain of kube-proxy interleaved rules (a KUBE-SVC rule, then each KUBE-SEP chain in turn)', () => {
    const text = [
      '*nat',
      ':KUBE-SVC-X - [0:0]',
      ':KUBE-SEP-1 - [0:0]',
      ':KUBE-SEP-2 - [0:0]',
      ':KUBE-SVC-Y - [0:0]',
      ':KUBE-SEP-3 - [0:0]',
      '-A KUBE-SVC-X -m statistic --mode random --probability 0.5 -j KUBE-SEP-1',
      '-A KUBE-SEP-1 -s 10.0.0.1/32 -j KUBE-MARK-MASQ',
      '-A KUBE-SEP-1 -p tcp -m tcp -j DNAT --to-destination 10.0.0.1:80',
      '-A KUBE-SVC-X -j KUBE-SEP-2',
      '-A KUBE-SEP-2 -p tcp -m tcp -j DNAT --to-destination 10.0.0.2:80',
      '-A KUBE-SVC-Y -j KUBE-SEP-3',
      '-A KUBE-SEP-3 -p tcp -m tcp -j DNAT --to-destination 10.0.0.3:80',
      // KUBE-SEP-2, declared after KUBE-SEP-1, is deleted and made again: the rules go to the new chain.
      '-X KUBE-SEP-2',
      '-N KUBE-SEP-2',
      '-A KUBE-SEP-1 -j RETURN',
      '-A KUBE-SEP-2 -j ACCEPT',
      '-A KUBE-SVC-X -j KUBE-SEP-2',
      // KUBE-SEP-3, declared after KUBE-SVC-Y, is renamed: a rule for it names no chain any more.
      '-E KUBE-SEP-3 KUBE-SEP-9',
      '-A KUBE-SVC-Y -j RETURN',
      '-A KUBE-SEP-3 -j ACCEPT',
      'COMMIT',
      '',
    ].join('\n');
    assert.deepEqual(
      reading(parseIptables(text, { file: 'rules' })),
      reading(parseIptables(tabbed(text), { file: 'rules' })),
    );
    const rs = parseIptables(text, { file: 'rules' });
    const nat = rs.tables.get('nat')!;
    assert.deepEqual(
      [...nat.chains.values()].map(c => [c.name, c.rules.length]),
      [
        ['PREROUTING', 0],
        ['INPUT', 0],
        ['OUTPUT', 0],
        ['POSTROUTING', 0],
        ['KUBE-SVC-X', 3],
        ['KUBE-SEP-1', 3],
        ['KUBE-SVC-Y', 2],
        ['KUBE-SEP-2', 1],
        ['KUBE-SEP-9', 1],
        ['KUBE-SEP-3', 1],
      ],
    );
  });
});
