/**
 * `trace --json` without why-not writes each step once per line (src/cli/json-steps.ts), and the walker
 * records one step for a rule that does the same thing on several paths (eval/walk.ts `shared`): the line
 * must still be byte for byte `JSON.stringify(toJsonTrace(…))`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseRuleset, tracePacket, type PacketInput, type Trace } from '../../src/engine/api.ts';
import { jsonTraceChunks, toJsonTrace } from '../../src/cli/json.ts';
import { parseClean } from '../helpers/fixtures.ts';

/** kube-proxy's shape: a Service split four ways at random, each endpoint DNATed, then masqueraded. */
function kubeRules(): string {
  const sep = (k: number) => `KUBE-SEP-${'ABCD'[k - 1]}`;
  const lines = [
    '*nat',
    ':PREROUTING ACCEPT [0:0]',
    ':POSTROUTING ACCEPT [0:0]',
    ':KUBE-SERVICES - [0:0]',
    ':KUBE-MARK-MASQ - [0:0]',
    ':KUBE-POSTROUTING - [0:0]',
    ':KUBE-SVC-X - [0:0]',
    ...[1, 2, 3, 4].map(k => `:${sep(k)} - [0:0]`),
    '-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
    '-A POSTROUTING -m comment --comment "kubernetes postrouting rules" -j KUBE-POSTROUTING',
    '-A KUBE-MARK-MASQ -j MARK --or-mark 0x4000',
    '-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN',
    '-A KUBE-POSTROUTING -j MARK --xor-mark 0x4000',
    '-A KUBE-POSTROUTING -m comment --comment "masquerade \\"all\\" ∌" -j MASQUERADE --random-fully',
    '-A KUBE-SERVICES -d 10.96.0.1/32 -p tcp -m comment --comment "ns/svc:http cluster IP" -m tcp --dport 80 -j KUBE-SVC-X',
    '-A KUBE-SVC-X ! -s 10.0.0.0/8 -d 10.96.0.1/32 -p tcp -m tcp --dport 80 -j KUBE-MARK-MASQ',
  ];
  for (let k = 1; k <= 4; k++) {
    const stat = k < 4 ? ` -m statistic --mode random --probability ${(1 / (5 - k)).toFixed(11)}` : '';
    lines.push(`-A KUBE-SVC-X${stat} -j ${sep(k)}`);
    lines.push(`-A ${sep(k)} -s 10.0.0.${k}/32 -j KUBE-MARK-MASQ`);
    lines.push(`-A ${sep(k)} -p tcp -m tcp -j DNAT --to-destination 10.0.0.${k}:8080`);
  }
  lines.push('COMMIT', '');
  return lines.join('\n');
}

const text = (chunks: readonly (string | Uint8Array)[]) =>
  chunks.map(c => (typeof c === 'string' ? c : new TextDecoder().decode(c))).join('');

function traced(rs: Parameters<typeof tracePacket>[0], input: PacketInput, events = false): Trace {
  const r = tracePacket(rs, input, { node: { addresses: ['172.18.0.4'] }, explain: false, events });
  if (!r.ok) throw new Error(r.error);
  return r.trace;
}

describe('trace --json, steps written once', () => {
  const rs = parseClean(kubeRules());
  const input: PacketInput = { protocol: 'tcp', src: '172.18.0.9', dst: '10.96.0.1', dport: 80, name: 'p "1" ∌' };
  const trace = traced(rs, input);

  it('records one step for a rule that does the same on every path (POSTROUTING)', () => {
    assert.equal(trace.outcomes.length, 4);
    const last = trace.outcomes.map(o => o.steps[o.steps.length - 1]!);
    assert.match(last[0]!.verdict, /^MASQUERADE/);
    for (const s of last) assert.equal(s, last[0]);
    // Steps that differ stay apart: each outcome's DNAT is its own.
    const dnat = trace.outcomes.map(o => o.steps.find(s => s.verdict.startsWith('DNAT'))!);
    assert.equal(new Set(dnat).size, 4);
  });

  for (const events of [false, true])
    it(`gives the bytes of JSON.stringify (events ${events})`, () => {
      const t = traced(rs, input, events);
      const opts = { misses: false, events };
      const chunks = jsonTraceChunks(t, input, opts);
      assert.ok(chunks.some(c => typeof c !== 'string')); // steps went as encoded pieces
      assert.equal(text(chunks), JSON.stringify(toJsonTrace(t, input, opts)));
      const live = { agrees: true, note: 'x' };
      assert.equal(
        text(jsonTraceChunks(t, input, opts, { live })),
        JSON.stringify({ ...(toJsonTrace(t, input, opts) as object), live }),
      );
    });

  it('encodes a step shared by outcomes once', () => {
    const chunks = jsonTraceChunks(trace, input, { misses: false, events: false });
    const masq = chunks.filter(c => typeof c !== 'string' && new TextDecoder().decode(c).includes('MASQUERADE'));
    assert.equal(masq.length, 4);
    assert.equal(new Set(masq.map(c => (c as Uint8Array).buffer)).size, 1);
    assert.equal(new Set(masq.map(c => (c as Uint8Array).byteOffset)).size, 1);
  });

  it('writes outcomes without steps, and nftables steps, as JSON.stringify does', () => {
    const dropped = parseClean('*filter\n:INPUT DROP [0:0]\nCOMMIT\n');
    const p: PacketInput = { protocol: 'tcp', src: '1.2.3.4', dst: '172.18.0.4', dport: 22 };
    const t = traced(dropped, p);
    assert.equal(t.outcomes[0]!.steps.length, 0);
    const opts = { misses: false, events: false };
    assert.equal(text(jsonTraceChunks(t, p, opts)), JSON.stringify(toJsonTrace(t, p, opts)));
    const nft = parseRuleset(
      'table ip nat {\n chain pre {\n  type nat hook prerouting priority dstnat; policy accept;\n  tcp dport 80 numgen random mod 2 vmap { 0 : jump a, 1 : jump b }\n }\n chain a {\n  dnat to 10.0.0.1:8080\n }\n chain b {\n  dnat to 10.0.0.2:8080\n }\n}\n',
    ).ruleset;
    const q: PacketInput = { protocol: 'tcp', src: '1.2.3.4', dst: '172.18.0.4', dport: 80 };
    const u = traced(nft, q);
    assert.equal(u.outcomes.length, 2);
    assert.ok(u.outcomes[0]!.steps.some(s => s.family === 'ip'));
    assert.equal(text(jsonTraceChunks(u, q, opts)), JSON.stringify(toJsonTrace(u, q, opts)));
  });
});
