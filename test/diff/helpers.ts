/** Shared by the diff tests: reading a fixture pair of test/fixtures/diff and comparing it on seed 003's worker. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  type DiffReport,
  type NodeConfig,
  type PacketInput,
  type Ruleset,
  diffRulesets,
  parseIptables,
  tracePacket,
} from '../../src/engine/api.ts';
import { ROOT } from '../helpers/fixtures.ts';

export const DIFF_FIXTURES = join(ROOT, 'test', 'fixtures', 'diff');
/** myk8s-worker's address (examples/seed-003/nodes.yaml). */
export const NODE = { addresses: ['172.18.0.4'] };

export function readPair(name: string): [Ruleset, Ruleset] {
  const read = (f: string) =>
    parseIptables(readFileSync(join(DIFF_FIXTURES, name, f), 'utf8'), { file: f, lazy: true });
  return [read('old.rules'), read('new.rules')];
}

const reports = new Map<string, DiffReport>();

/**
 * The report for a fixture pair, computed once per test process: dumps.test.ts and the slow suite's
 * completeness grid ask for the same pairs (`npm test` runs every file in one process). Frozen, so a test
 * that changed it would throw instead of changing what the next test reads.
 */
export function diffFixture(name: string): DiffReport {
  const known = reports.get(name);
  if (known) return known;
  const [a, b] = readPair(name);
  const r = diffRulesets(a, b, { node: NODE });
  assert.ok(r.ok, r.ok ? '' : r.error);
  const report = deepFreeze(r.report);
  reports.set(name, report);
  return report;
}

function deepFreeze<T>(x: T): T {
  if (x !== null && typeof x === 'object' && !Object.isFrozen(x)) {
    Object.freeze(x);
    for (const v of Object.values(x)) deepFreeze(v);
  }
  return x;
}

/** Outcomes folded by what the diff compares, with exact probabilities summed (as fractions of 2^64). */
export function signature(
  fates: readonly {
    disposition: string;
    dnat: string | null;
    snat: string | null;
    masquerade: boolean;
    probabilityExact: string;
  }[],
): string {
  const sums = new Map<string, bigint>();
  for (const f of fates) {
    const [n, d] = f.probabilityExact.split('/').map(BigInt) as [bigint, bigint | undefined];
    // As the diff does (docs/diff.md): a dropped or rejected packet's translations are not part of its fate.
    const gone = f.disposition === 'dropped' || f.disposition === 'rejected';
    const k = JSON.stringify(gone ? [f.disposition, null, null, false] : [f.disposition, f.dnat, f.snat, f.masquerade]);
    sums.set(k, (sums.get(k) ?? 0n) + (n << 64n) / (d ?? 1n));
  }
  return JSON.stringify([...sums].map(([k, v]) => `${k}@${v}`).sort());
}

/**
 * Brute force: traces every packet under both rulesets; each one that fares differently must fare exactly
 * like a class the report lists. Returns how many differed.
 */
export function bruteForce(
  a: Ruleset,
  b: Ruleset,
  report: DiffReport,
  packets: readonly PacketInput[],
  node: NodeConfig,
  recent: string[] = [],
): number {
  const reported = new Set(report.changes.map(c => `${signature(c.old)} → ${signature(c.new)}`));
  let differing = 0;
  for (const p of packets) {
    const x = tracePacket(a, p, { node, explain: false, recent });
    const y = tracePacket(b, p, { node, explain: false, recent });
    assert.ok(x.ok && y.ok, `${JSON.stringify(p)}: ${x.ok ? '' : x.error} ${y.ok ? '' : y.error}`);
    const [sx, sy] = [signature(x.trace.outcomes), signature(y.trace.outcomes)];
    if (sx === sy) continue;
    differing++;
    assert.ok(
      reported.has(`${sx} → ${sy}`),
      `${JSON.stringify(p)} changes (${sx} → ${sy}) in a way no reported class does; reported: ${report.changes.map(c => c.class.packet).join('; ')}`,
    );
  }
  assert.equal(
    differing === 0,
    report.identical,
    `brute force finds ${differing} differing packets; the report says ${report.summary}`,
  );
  return differing;
}
