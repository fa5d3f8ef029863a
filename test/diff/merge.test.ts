/**
 * `mergeAdjacent` (report.ts) joins changed classes whose boxes touch in one field. It used to rescan every
 * pair after each join (4,018 changes at 1,000 Services took 2 s); it now finds partners through an index.
 * The report must not move: the same joins in the same order as the greedy rescan, kept here as the
 * reference, on random lists of boxes that touch in many ways.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { type Box, boxExtent, mergeBoxes, wholeBox } from '../../src/engine/diff/box.ts';
import type { ClassEnv } from '../../src/engine/diff/classes.ts';
import { mergeAdjacent } from '../../src/engine/diff/report.ts';
import type { ClassChange } from '../../src/engine/diff/types.ts';
import type { PacketInput } from '../../src/engine/eval/packet-spec.ts';

const env: ClassEnv = { family: 4, nodeAddrs: [], routeCuts: [], srcRouteCuts: [], uplink: 'eth0' };
const input = { protocol: 'tcp', src: '0.0.0.1', dst: '0.0.0.1', sport: 1, dport: 1, from: 'outside' } as PacketInput;
type Entry = { box: Box; input: PacketInput; affinity: readonly string[] };

/** The greedy rescan mergeAdjacent did before: the first pair (i < j) that joins, until none does. */
function reference(list: Box[]): Box[] {
  const out = [...list];
  let merged = true;
  while (merged) {
    merged = false;
    for (let i = 0; i < out.length && !merged; i++)
      for (let j = i + 1; j < out.length && !merged; j++) {
        const m = mergeBoxes(out[i]!, out[j]!);
        if (!m) continue;
        out[i] = m;
        out.splice(j, 1);
        merged = true;
      }
  }
  return out;
}

function changeOf(box: Box): ClassChange {
  return {
    class: { packet: 'p', extent: boxExtent(4, box, input, [], 'eth0'), origin: 'changed' },
    group: { kind: 'chain', table: 'nat', chain: 'X' },
    aspects: ['disposition'],
    old: [],
    new: [],
    oldRules: [],
    newRules: [],
    approximate: false,
  };
}

/** Cells of a small grid (and a few intervals across cells), so that boxes touch in several ways at once. */
const CELLS = [
  [0, 1],
  [2, 2],
  [3, 5],
  [6, 7],
  [1, 2],
];
const span = fc
  .integer({ min: 0, max: 9 })
  .map(k => CELLS[k < 8 ? k % 4 : 4]!)
  .map(([lo, hi]) => ({ lo: BigInt(lo!), hi: BigInt(hi!) }));
const box = fc.record({ src: span, dst: span, dport: span, proto: fc.constantFrom(6, 6, 6, 17) }).map(b => ({
  ...wholeBox(4, 'outside', { proto: b.proto }),
  src: b.src,
  dst: b.dst,
  dport: b.dport,
}));

describe('mergeAdjacent', () => {
  it('joins the same boxes in the same order as the greedy rescan', () => {
    fc.assert(
      fc.property(fc.array(box, { minLength: 2, maxLength: 40 }), boxesIn => {
        const changes = boxesIn.map(changeOf);
        const boxes = new Map<ClassChange, Entry>(
          changes.map((c, i) => [c, { box: boxesIn[i]!, input, affinity: [] }]),
        );
        mergeAdjacent(changes, boxes, env, () => 'same');
        const got = changes.map(c => boxes.get(c)!.box);
        assert.deepEqual(got, reference(boxesIn));
        assert.deepEqual(
          changes.map(c => c.class.extent),
          got.map(b => boxExtent(4, b, input, [], 'eth0')),
        );
      }),
      { seed: 18, numRuns: 400 },
    );
  });
});
