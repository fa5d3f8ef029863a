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

function trace(dst: string, budget?: number): Trace {
  const r = tracePacket(
    parseClean(rules()),
    { protocol: 'tcp', src: '172.18.0.9', dst, dport: 80 },
    { node: { addresses: ['172.18.0.4'] }, explain: true, ...(budget ? { budget } : {}) },
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
