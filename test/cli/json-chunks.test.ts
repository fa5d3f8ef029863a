/**
 * `trace --json --why-not` writes the misses the outcomes share once (src/cli/json.ts `jsonTraceChunks`):
 * the line must be byte for byte `JSON.stringify(toJsonTrace(…))`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { tracePacket, type PacketInput } from '../../src/engine/api.ts';
import { jsonTraceChunks, toJsonTrace } from '../../src/cli/json.ts';
import { parseClean } from '../helpers/fixtures.ts';

/** 400 Service-like rules before the packet's, and a four-way random split after it (forks share the misses). */
function rules(): string {
  const lines = ['*nat', ':PREROUTING ACCEPT [0:0]', ':SVC - [0:0]', ':SPLIT - [0:0]', '-A PREROUTING -j SVC'];
  for (let i = 1; i <= 400; i++)
    lines.push(`-A SVC -d 10.0.${i >> 8}.${i & 255}/32 -p tcp -m comment --comment "svc \\"${i}\\" ∌" -j SPLIT`);
  for (let k = 4; k > 1; k--)
    lines.push(
      `-A SPLIT -m statistic --mode random --probability ${(1 / k).toFixed(11)} -j DNAT --to-destination 10.1.0.${k}:80`,
    );
  lines.push('-A SPLIT -j DNAT --to-destination 10.1.0.1:80', 'COMMIT', '');
  return lines.join('\n');
}

const text = (chunks: readonly (string | Uint8Array)[]) =>
  chunks.map(c => (typeof c === 'string' ? c : new TextDecoder().decode(c))).join('');

describe('trace --json with why-not, written in shared pieces', () => {
  const rs = parseClean(rules());
  const input: PacketInput = { protocol: 'tcp', src: '172.18.0.9', dst: '10.0.1.100', dport: 80, name: 'p "1"' };
  const r = tracePacket(rs, input, { node: { addresses: ['172.18.0.4'] }, explain: true });
  if (!r.ok) throw new Error(r.error);
  const trace = r.trace;

  it('shares the misses before the fork among the outcomes', () => {
    assert.equal(trace.outcomes.length, 4);
    const [a, b] = [trace.outcomes[0]!.misses, trace.outcomes[1]!.misses];
    assert.ok(a.length > 350 && a[0] === b[0] && a[349] === b[349]);
  });

  for (const opts of [
    { misses: true, events: false },
    { misses: true, events: true },
    { misses: false, events: false },
  ])
    it(`gives the bytes of JSON.stringify (${JSON.stringify(opts)})`, () => {
      const chunks = jsonTraceChunks(trace, input, opts);
      if (opts.misses) assert.ok(chunks.some(c => typeof c !== 'string')); // the shared path was taken
      assert.equal(text(chunks), JSON.stringify(toJsonTrace(trace, input, opts)));
      const live = { agrees: true, note: 'x' };
      assert.equal(
        text(jsonTraceChunks(trace, input, opts, { live })),
        JSON.stringify({ ...(toJsonTrace(trace, input, opts) as object), live }),
      );
    });
});
