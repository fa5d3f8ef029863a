/**
 * A table's rules are rows of integers until something reads a chain's `rules` (rule-store.ts,
 * `IptChain` in rule-node.ts, issue 18): `packetlens check` reads and validates a 320k-rule dump without
 * making one object per rule, and a chain's rules, once asked for, are the rules as written — whichever
 * way the line was read (the `-A` fast path, the tokenizer, `-I`/`-D`/`-R`/`-E` edits, appends after a
 * chain was already read).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { generateKubeProxyDump } from '../../bench/generate.ts';
import { parseIptables } from '../../src/engine/api.ts';
import { validateRules } from '../../src/engine/iptables/resolve.ts';
import { IptChain } from '../../src/engine/iptables/rule-node.ts';
import type { Chain, Rule } from '../../src/engine/model.ts';

/** What a rule says about where it was written. */
function place(r: Rule): unknown {
  const t = (r as { targetRef?: unknown }).targetRef;
  return {
    index: r.index,
    chain: r.chain,
    line: r.line,
    spec: r.raw.slice(r.specStart),
    range: [r.range.start.character, r.range.end.character],
    counters: r.counters,
    target: t,
  };
}

const EDITED = [
  '*filter',
  ':INPUT ACCEPT [0:0]',
  ':A - [0:0]',
  ':B - [0:0]',
  '[3:180] -A INPUT -s 10.0.0.1/32 -j A',
  '-A B -p tcp -j "A"',
  '-A INPUT\t-j A',
  '-A A -j RETURN',
  '-I INPUT 2 -d 10.0.0.2/32 -j DROP',
  '-A INPUT -m comment --comment "a -j ACCEPT in words" -j ACCEPT',
  '-E B C',
  '-A C -g A',
  '-D INPUT 1',
  '-A INPUT -p udp',
  'COMMIT',
  '',
].join('\n');

describe('rules as rows', () => {
  it('check validates every rule without making rule objects', () => {
    const rs = parseIptables(generateKubeProxyDump(30, 3), { file: 'kube.rules', lazy: true });
    validateRules(rs, { release: true });
    const chains = [...rs.tables.values()].flatMap(t => [...t.chains.values()]);
    assert.ok(chains.length > 100);
    const made = chains.filter(c => !(c instanceof IptChain) || !c.inRows).map(c => c.name);
    assert.deepEqual(made, [], 'chains whose rules became objects during check');
    // Asked for afterwards, the rules are all there, numbered.
    let total = 0;
    for (const c of chains) {
      c.rules.forEach((r, i) => assert.equal(r.index, i + 1));
      total += c.rules.length;
    }
    assert.equal(total, rs.ruleCount);
  });

  it('a chain’s rules are those written, through every command and path', () => {
    const rs = parseIptables(EDITED, { file: 'rules', lazy: true });
    const chains = rs.tables.get('filter')!.chains;
    assert.deepEqual([...chains.keys()], ['INPUT', 'FORWARD', 'OUTPUT', 'A', 'C']);
    const of = (c: Chain | undefined) => c!.rules.map(place);
    assert.deepEqual(of(chains.get('INPUT')), [
      {
        index: 1,
        chain: 'INPUT',
        line: 8,
        spec: '-d 10.0.0.2/32 -j DROP',
        range: [0, 33],
        counters: null,
        target: { kind: 'jump', name: 'DROP', start: 26, end: 33 },
      },
      {
        index: 2,
        chain: 'INPUT',
        line: 6,
        spec: '-j A',
        range: [0, 13],
        counters: null,
        target: { kind: 'jump', name: 'A', start: 9, end: 13 },
      },
      {
        index: 3,
        chain: 'INPUT',
        line: 9,
        spec: '-m comment --comment "a -j ACCEPT in words" -j ACCEPT',
        range: [0, 62],
        counters: null,
        target: { kind: 'jump', name: 'ACCEPT', start: 53, end: 62 },
      },
      {
        index: 4,
        chain: 'INPUT',
        line: 13,
        spec: '-p udp',
        range: [0, 15],
        counters: null,
        target: null,
      },
    ]);
    assert.deepEqual(of(chains.get('C')), [
      {
        index: 1,
        chain: 'C',
        line: 5,
        spec: '-p tcp -j "A"',
        range: [0, 18],
        counters: null,
        target: { kind: 'jump', name: 'A', start: 12, end: 18 },
      },
      {
        index: 2,
        chain: 'C',
        line: 11,
        spec: '-g A',
        range: [0, 9],
        counters: null,
        target: { kind: 'goto', name: 'A', start: 5, end: 9 },
      },
    ]);
    assert.deepEqual(of(chains.get('A')), [
      {
        index: 1,
        chain: 'A',
        line: 7,
        spec: '-j RETURN',
        range: [0, 14],
        counters: null,
        target: { kind: 'jump', name: 'RETURN', start: 5, end: 14 },
      },
    ]);
    assert.equal(rs.ruleCount, 7);
    assert.deepEqual(rs.diagnostics, []);
  });

  it('keeps a rule’s [packets:bytes] prefix and reads the line without its \\r', () => {
    const text = '*filter\r\n:INPUT ACCEPT [0:0]\r\n[3:180] -A INPUT -s 10.0.0.1/32 -j DROP\r\nCOMMIT\r\n';
    const rs = parseIptables(text, { file: 'rules', lazy: true });
    const [rule] = rs.tables.get('filter')!.chains.get('INPUT')!.rules;
    assert.deepEqual(place(rule!), {
      index: 1,
      chain: 'INPUT',
      line: 2,
      spec: '-s 10.0.0.1/32 -j DROP',
      range: [0, 39],
      counters: { packets: '3', bytes: '180' },
      target: { kind: 'jump', name: 'DROP', start: 32, end: 39 },
    });
    assert.equal(rule!.raw, '[3:180] -A INPUT -s 10.0.0.1/32 -j DROP');
  });

  it('a rule goes to its own table’s chain of that name, and to no chain renamed away', () => {
    // The fast path remembers the previous line's chain (find-target.ts): a new table or a command between
    // two rules must make it look the name up again.
    const text = [
      '*mangle',
      ':INPUT ACCEPT [0:0]',
      '-A INPUT -j ACCEPT',
      'COMMIT',
      '*filter',
      ':INPUT ACCEPT [0:0]',
      ':A - [0:0]',
      '-A INPUT -j DROP',
      '-A A -j RETURN',
      '-E A B',
      '-A A -j ACCEPT',
      'COMMIT',
      '',
    ].join('\n');
    const rs = parseIptables(text, { file: 'rules', lazy: true });
    const lines = (t: string, c: string) =>
      rs.tables
        .get(t)!
        .chains.get(c)
        ?.rules.map(r => r.line);
    assert.deepEqual(lines('mangle', 'INPUT'), [2]);
    assert.deepEqual(lines('filter', 'INPUT'), [7]);
    assert.deepEqual(lines('filter', 'B'), [8]);
    assert.deepEqual(lines('filter', 'A'), [10]);
    assert.deepEqual(
      rs.diagnostics.map(d => [d.code, d.range.start.line]),
      [['unknown-chain', 10]],
    );
  });

  it('a user chain named like a property of every object is no built-in chain', () => {
    // DNAT is allowed in nat PREROUTING and OUTPUT and in user chains reached from them
    // (iptables-nft-restore --test and iptables-legacy-restore --test 1.8.9 accept this file); the check
    // for built-in chains once asked `name in {PREROUTING: …}`, which is true for `constructor`.
    const text = [
      '*nat',
      ':PREROUTING ACCEPT [0:0]',
      ':constructor - [0:0]',
      '-A PREROUTING -j constructor',
      '-A constructor -p tcp -j DNAT --to-destination 10.0.0.1:80',
      'COMMIT',
      '',
    ].join('\n');
    assert.deepEqual(parseIptables(text, { file: 'rules' }).diagnostics, []);
  });
});
