/**
 * Why-not through an indexed chain (eval/chain-index.ts): the rules the destination index skips are still
 * explained one by one, in chain order, with the words the plain walk gives, and they still count as rule
 * evaluations (the step budget and `budget.steps` see the same walk).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { tracePacket, type Trace } from '../../src/engine/api.ts';
import { parseClean } from '../helpers/fixtures.ts';

/** 60 Service-like rules (enough to be indexed by destination), a few with a source, one random branch. */
function rules(): string {
  const lines = ['*nat', ':PREROUTING ACCEPT [0:0]', ':SVC - [0:0]', ':HIT - [0:0]', '-A PREROUTING -j SVC'];
  for (let i = 1; i <= 60; i++) {
    if (i === 10) lines.push('-A SVC -s 192.168.0.0/16 -d 10.0.0.10/32 -p tcp -m tcp --dport 80 -j HIT');
    else if (i === 11) lines.push('-A SVC -s 172.18.0.0/16 -d 10.0.0.11/32 -p tcp -m tcp --dport 80 -j HIT');
    else if (i === 20) lines.push('-A SVC -m statistic --mode random --probability 0.5 -j MARK --set-xmark 0x1/0x1');
    else lines.push(`-A SVC -d 10.0.0.${i}/32 -p tcp -m comment --comment "svc ${i}" -m tcp --dport 80 -j HIT`);
  }
  lines.push(
    '-A HIT -m mark --mark 0x1/0x1 -j DNAT --to-destination 10.1.0.2:8080',
    '-A HIT -j DNAT --to-destination 10.1.0.1:8080',
    'COMMIT',
    '',
  );
  return lines.join('\n');
}

function trace(dst: string, budget?: number, explain: true | 'grouped' = true): Trace {
  const r = tracePacket(
    parseClean(rules()),
    { protocol: 'tcp', src: '172.18.0.9', dst, dport: 80 },
    { node: { addresses: ['172.18.0.4'] }, explain, ...(budget ? { budget } : {}) },
  );
  if (!r.ok) throw new Error(r.error);
  return r.trace;
}

/** What the checks compare: the path's steps, the SVC rules it missed, and a few reasons. */
function summary(t: Trace) {
  return t.outcomes.map(o => ({
    probability: o.probabilityExact,
    reason: o.reason,
    steps: o.steps.map(s => `${s.chain}#${s.rule}`),
    missed: o.misses.filter(m => m.chain === 'SVC').map(m => m.rule),
    why: [1, 10, 11, 41].map(n => o.misses.find(m => m.chain === 'SVC' && m.rule === n)?.reason ?? null),
  }));
}

const upTo = (n: number, skip?: number) => Array.from({ length: n }, (_, k) => k + 1).filter(k => k !== skip);

// Expected values are those of the plain walk (every rule evaluated in turn), which why-not used before the
// destination index served it too.
describe('why-not through a destination-indexed chain', () => {
  const why = [
    '-d 10.0.0.1/32 ∌ 10.0.0.42',
    '-s 192.168.0.0/16 ∌ 172.18.0.9', // the source is checked first
    '-d 10.0.0.11/32 ∌ 10.0.0.42', // its source matches: the destination fails
    '-d 10.0.0.41/32 ∌ 10.0.0.42',
  ];

  it('explains every rule before the match, in order, on both paths of a random branch', () => {
    const t = trace('10.0.0.42');
    assert.deepEqual(summary(t), [
      {
        probability: '1/2',
        reason: null,
        steps: ['PREROUTING#1', 'SVC#20', 'SVC#42', 'HIT#1'],
        missed: upTo(41, 20),
        why,
      },
      { probability: '1/2', reason: null, steps: ['PREROUTING#1', 'SVC#42', 'HIT#2'], missed: upTo(41), why },
    ]);
    assert.match(t.outcomes[1]!.misses.find(m => m.rule === 20)!.reason, /: not chosen$/);
    // Every rule evaluation counts, skipped or not: 1 + 20 + 2 × 22 + 1 + 2.
    assert.deepEqual(t.budget, { steps: 68, paths: 2, exhausted: null });
  });

  it('runs out of steps at the same skipped rule as the plain walk', () => {
    const t = trace('10.0.0.42', 8);
    assert.equal(t.outcomes.length, 1);
    assert.equal(
      t.outcomes[0]!.reason,
      "stopped after 8 rule evaluations, at nat SVC rule 8 (line 13): the trace's step budget ran out (a ruleset whose paths multiply, e.g. chains jumped to many times over; the rest of this path is not traced)",
    );
    assert.deepEqual(summary(t)[0]!.missed, upTo(7));
    assert.equal(t.budget?.steps, 9);
  });
});

// `--why-not=grouped` (eval/miss-log.ts): the same record, consecutive alike misses and each stretch the
// index skipped as one entry, checked against the full list of the same trace.
describe('why-not grouped', () => {
  for (const dst of ['10.0.0.42', '10.0.0.60', '10.0.0.10', '10.0.0.5', '10.9.9.9'])
    it(`stands for exactly the full list, in order (to ${dst})`, () => {
      const full = trace(dst);
      const grouped = trace(dst, undefined, 'grouped');
      assert.deepEqual(grouped.budget, full.budget);
      assert.equal(grouped.outcomes.length, full.outcomes.length);
      full.outcomes.forEach((o, k) => {
        const g = grouped.outcomes[k]!;
        assert.deepEqual(g.misses, []);
        let at = 0;
        for (const e of g.missesGrouped!) {
          const run = o.misses.slice(at, at + e.count);
          at += e.count;
          assert.equal(run.length, e.count);
          assert.deepEqual(
            run.map(m => [m.hook, m.table, m.chain, m.rule, m.line]),
            run.map((_, i) => [e.hook, e.table, e.chain, e.rule + i, e.line + i]),
          );
          assert.deepEqual([e.lastRule, e.lastLine], [run.at(-1)!.rule, run.at(-1)!.line]);
          if (e.reason === `-d ∌ ${dst}: each rule's -d is another address`)
            for (const m of run) assert.match(m.reason, new RegExp(`^-d \\S+ ∌ ${dst.replace(/\./g, '\\.')}$`));
          else for (const m of run) assert.equal(m.reason, e.reason);
        }
        assert.equal(at, o.misses.length);
      });
    });

  it('writes the stretches the index skipped as one entry each', () => {
    const t = trace('10.0.0.42', undefined, 'grouped');
    const svc = t.outcomes[1]!.missesGrouped!.filter(m => m.chain === 'SVC');
    const run = "-d ∌ 10.0.0.42: each rule's -d is another address";
    assert.deepEqual(
      svc.map(m => [m.rule, m.lastRule, m.count, m.reason]),
      [
        [1, 9, 9, run],
        [10, 10, 1, '-s 192.168.0.0/16 ∌ 172.18.0.9'],
        [11, 11, 1, '-d 10.0.0.11/32 ∌ 10.0.0.42'],
        [12, 19, 8, run],
        [20, 20, 1, 'random 0.5 (kernel: 1073741824/2^31): not chosen'],
        [21, 41, 21, run],
      ],
    );
  });
});
