/**
 * `tracePacket(…, { events: false })` (what `trace --json` without `--events` asks for) keeps no events
 * but counts them (eval/path.ts `EventCount`): every other part of the trace must be the same, including
 * what depends on how many events a path recorded — the records budget that decides whether a fork is
 * followed (eval/walk.ts `mayFork`).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Trace, type TraceOptions, parseIptables, tracePacket } from '../../src/engine/api.ts';
import { kernelFixtures, nodeFor, packetFor } from '../kernel/oracle-harness.ts';
import { parseClean } from '../helpers/fixtures.ts';

function withoutEvents(t: Trace): Trace {
  return { ...t, outcomes: t.outcomes.map(o => ({ ...o, events: [] })) };
}

function both(run: (opts: TraceOptions) => Trace): { kept: Trace; counted: Trace } {
  return { kept: run({ events: true }), counted: run({ events: false }) };
}

describe('a trace that only counts its events', () => {
  it('is the trace that keeps them, minus the events, on every kernel fixture probe', () => {
    let n = 0;
    for (const f of kernelFixtures()) {
      const rs = parseIptables(f.rules, { file: `${f.name}/rules` });
      for (const r of f.run.results)
        for (const explain of [true, false]) {
          const input = packetFor(f.run, r.probe);
          const { kept, counted } = both(opts => {
            const t = tracePacket(rs, input, { node: nodeFor(f.run), explain, ...opts });
            if (!t.ok) throw new Error(t.error);
            return t.trace;
          });
          assert.ok(kept.outcomes.some(o => o.events.length > 0));
          assert.ok(counted.outcomes.every(o => o.events.length === 0));
          assert.deepEqual(counted, withoutEvents(kept), `${f.name} ${r.probe.name}`);
          n++;
        }
    }
    assert.ok(n >= 300, `${n} traces`);
  });

  it('forks within the same records budget: events count towards it', () => {
    // Eight random splits in a row: each fork copies the path's record, events included; a records
    // budget this small stops following forks part way, at a point that depends on the events counted.
    const lines = ['*mangle', ':PREROUTING ACCEPT [0:0]'];
    for (let i = 0; i < 8; i++)
      lines.push(
        `-A PREROUTING -m statistic --mode random --probability 0.5 -j MARK --set-xmark 0x${1 << i}/0x${1 << i}`,
      );
    lines.push('-A PREROUTING -m mark --mark 0x0/0xff -j DROP', 'COMMIT', '');
    const rs = parseClean(lines.join('\n'));
    const input = { protocol: 'tcp', src: '192.0.2.1', dst: '198.51.100.1', dport: 80 };
    const { kept, counted } = both(opts => {
      const t = tracePacket(rs, input, { node: { addresses: ['198.51.100.1'] }, maxRecords: 90, ...opts });
      if (!t.ok) throw new Error(t.error);
      return t.trace;
    });
    assert.ok(kept.budget?.exhausted?.includes('memory budget'), kept.budget?.exhausted ?? 'no budget ran out');
    assert.deepEqual(counted, withoutEvents(kept));
  });
});
