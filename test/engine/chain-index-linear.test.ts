/**
 * A long chain is walked through its index (eval/chain-index.ts: by destination address, or by protocol
 * and port) — and must give what walking it rule by rule gives. The same rules are traced twice: in one
 * chain long enough to be indexed, and cut into pieces too short to be (each ending in `-g` to the next, so
 * a RETURN still returns to the caller). Outcomes, matched rules in order and, with why-not, every miss with
 * its reason must agree, rule for rule, on random chains whose rules overlap: many rules per address, rules
 * without an address (kept in every candidate list), `! -d`, `-s` (which the kernel checks before `-d`),
 * port ranges, `-m comment`, random branches, RETURN and marks.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { type Trace, parseIptables, tracePacket } from '../../src/engine/api.ts';

const DSTS = ['10.96.0.1', '10.96.0.2', '10.96.0.3', '10.96.1.7'];
const PORTS = [53, 80, 443, 8080];
const PIECE = 40; // under the index's 48-rule minimum

/** A chain mostly of rules with one destination address (kube-proxy's KUBE-SERVICES), indexed by it. */
const byDst = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom(...DSTS).map(d => `-d ${d}/32`) },
  { weight: 1, arbitrary: fc.constantFrom(...DSTS).map(d => `! -d ${d}/32`) },
  { weight: 1, arbitrary: fc.constant('-d 10.96.0.0/16') },
  { weight: 1, arbitrary: fc.constant('') },
);
/** A chain mostly of rules without one (a port-keyed chain, indexed by protocol and port when that works). */
const byPort = fc.oneof(
  { weight: 8, arbitrary: fc.constant('') },
  { weight: 1, arbitrary: fc.constantFrom(...DSTS).map(d => `-d ${d}/32`) },
);

const spec = (dst: fc.Arbitrary<string>, portKeyed: boolean) =>
  fc.record({
    dst,
    src: fc.oneof(
      { weight: 4, arbitrary: fc.constant('') },
      { weight: 1, arbitrary: fc.constantFrom('-s 192.0.2.0/24', '! -s 10.0.0.0/8', '-s 198.51.100.9/32') },
    ),
    proto: portKeyed ? fc.constantFrom('-p tcp', '-p udp') : fc.constantFrom('-p tcp', '-p udp', ''),
    port: fc.oneof(
      { weight: portKeyed ? 12 : 4, arbitrary: fc.constantFrom(...PORTS).map(p => ({ kind: 'one' as const, p })) },
      {
        weight: 1,
        arbitrary: fc.tuple(fc.constantFrom(...PORTS), fc.nat(500)).map(([p, w]) => ({ kind: 'range' as const, p, w })),
      },
      { weight: 1, arbitrary: fc.constant({ kind: 'none' as const }) },
    ),
    comment: fc.boolean(),
    stat: fc.oneof(
      { weight: 4, arbitrary: fc.constant(null) },
      { weight: 1, arbitrary: fc.integer({ min: 1, max: 99 }) },
    ),
    target: fc.constantFrom('-j LEAF1', '-j LEAF2', '-j MARK --set-xmark 0x1/0x1', '-j RETURN', '-j ACCEPT', '-j DROP'),
  });

type Spec = ReturnType<typeof spec> extends fc.Arbitrary<infer T> ? T : never;

function ruleText(r: Spec, i: number): string {
  const words = [r.src, r.dst, r.proto];
  if (r.comment) words.push(`-m comment --comment "rule ${i} \\"x\\""`);
  if (r.proto && r.port.kind === 'one') words.push(`-m ${r.proto.slice(3)} --dport ${r.port.p}`);
  if (r.proto && r.port.kind === 'range')
    words.push(`-m ${r.proto.slice(3)} --dport ${r.port.p}:${r.port.p + r.port.w}`);
  if (r.stat !== null)
    words.push(`-m statistic --mode random --probability 0.${String(r.stat).padStart(2, '0')}000000000`);
  words.push(r.target);
  return words.filter(Boolean).join(' ');
}

const LEAVES = [
  ':LEAF1 - [0:0]',
  ':LEAF2 - [0:0]',
  '-A LEAF1 -m mark --mark 0x1/0x1 -j DNAT --to-destination 10.1.0.1:8080',
  '-A LEAF1 -p tcp -j DNAT --to-destination 10.1.0.2:8080',
  '-A LEAF2 -j MARK --set-xmark 0x2/0x2',
];

/** The rules in one chain, and in pieces; `orig` maps a line of either dump to `SVC#n` (n the rule's place). */
function dumps(specs: string[]): { whole: string; pieces: string; orig: Map<string, string> } {
  const orig = new Map<string, string>();
  const head = ['*nat', ':PREROUTING ACCEPT [0:0]'];
  const whole = [...head, ':SVC - [0:0]', ...LEAVES.slice(0, 2), '-A PREROUTING -j SVC'];
  specs.forEach((s, i) => {
    whole.push(`-A SVC ${s}`);
    orig.set(`whole:${whole.length}`, `SVC#${i + 1}`);
  });
  whole.push(...LEAVES.slice(2), 'COMMIT', '');
  const n = Math.ceil(specs.length / PIECE);
  const pieces = [...head, ...Array.from({ length: n }, (_, k) => `:P${k} - [0:0]`), ...LEAVES.slice(0, 2)];
  pieces.push('-A PREROUTING -j P0');
  specs.forEach((s, i) => {
    const k = Math.floor(i / PIECE);
    pieces.push(`-A P${k} ${s}`);
    orig.set(`pieces:${pieces.length}`, `SVC#${i + 1}`);
    if (i % PIECE === PIECE - 1 && k + 1 < n) pieces.push(`-A P${k} -g P${k + 1}`);
  });
  pieces.push(...LEAVES.slice(2), 'COMMIT', '');
  return { whole: whole.join('\n'), pieces: pieces.join('\n'), orig };
}

/** A trace in the original rules' names: the jump into the chain and the pieces' own `-g` steps left out. */
function view(t: Trace, side: 'whole' | 'pieces', orig: Map<string, string>) {
  const name = (x: { chain: string; rule: number; line: number }) =>
    orig.get(`${side}:${x.line}`) ?? `${x.chain}#${x.rule}`;
  return t.outcomes.map(o => ({
    p: o.probabilityExact,
    disposition: o.disposition,
    dnat: o.dnat,
    mark: o.packet.mark,
    assumptions: o.assumptions.length,
    steps: o.steps
      .filter(s => s.chain !== 'PREROUTING' && !/^goto P\d+$/.test(s.verdict))
      .map(s => `${name(s)} ${s.verdict}`),
    misses: o.misses.map(m => `${name(m)}: ${m.reason}`),
  }));
}

describe('an indexed chain gives what the rule-by-rule walk gives', () => {
  it('on random overlapping chains, with and without why-not', () => {
    let indexed = 0;
    fc.assert(
      fc.property(
        fc.boolean().chain(keyed => fc.array(spec(keyed ? byDst : byPort, !keyed), { minLength: 48, maxLength: 130 })),
        fc.constantFrom(...DSTS, '10.96.9.9'),
        fc.constantFrom('tcp', 'udp'),
        fc.constantFrom(...PORTS, 300, 9000),
        fc.constantFrom('192.0.2.5', '198.51.100.9', '10.0.0.5'),
        (specs, dst, protocol, dport, src) => {
          const { whole, pieces, orig } = dumps(specs.map(ruleText));
          const input = { protocol, src, dst, dport };
          for (const explain of [true, false]) {
            const a = tracePacket(parseIptables(whole), input, { node: { addresses: ['172.18.0.4'] }, explain });
            const b = tracePacket(parseIptables(pieces), input, { node: { addresses: ['172.18.0.4'] }, explain });
            assert.ok(a.ok && b.ok);
            assert.deepEqual(view(a.trace, 'whole', orig), view(b.trace, 'pieces', orig));
            // The whole chain was walked through an index: fewer rule evaluations than rules before its end.
            if (!explain && a.trace.budget!.steps < specs.length) indexed++;
          }
        },
      ),
      { numRuns: 120 },
    );
    assert.ok(indexed > 20, `only ${indexed} traces used an index`);
  });
});
