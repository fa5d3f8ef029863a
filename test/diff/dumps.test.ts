/**
 * `diffRulesets` on pairs of kube-proxy dumps whose behavioural change is known
 * (test/fixtures/diff/README.md): each folder's expected.json says which chains differ, which Services or
 * chains are affected, the exact destinations and client kinds of the changed classes, what changes about
 * them, and the fates of sample classes with exact probabilities.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { DiffFate } from '../../src/engine/api.ts';
import { DIFF_FIXTURES as DIR, diffFixture } from './helpers.ts';

type Fate = [string, string | null, boolean, string];

interface Expected {
  readonly changedChains: [string, string, string][];
  readonly groups: Record<
    string,
    { destinations?: string[]; from: string[]; aspects: string[]; onlyAspects?: string[] }
  >;
  readonly samples: { packet: string; old: Fate[]; new: Fate[] }[];
}

const fates = (list: readonly DiffFate[]): Fate[] =>
  list
    .map(f => [f.disposition, f.dnat, f.masquerade, f.probabilityExact] as Fate)
    .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
const sorted = <T>(xs: Iterable<T>): T[] => [...xs].sort();

function check(name: string): void {
  const expected = JSON.parse(readFileSync(join(DIR, name, 'expected.json'), 'utf8')) as Expected;
  const report = diffFixture(name);
  assert.deepEqual(
    report.changedChains.map(c => [c.table, c.chain, c.change]),
    expected.changedChains,
    'changed chains',
  );
  assert.deepEqual(
    report.groups.map(g => g.title),
    Object.keys(expected.groups),
    'affected Services and chains, in report order',
  );
  assert.equal(report.identical, Object.keys(expected.groups).length === 0);
  assert.equal(report.services.length, report.groups.filter(g => g.key.kind === 'service').length);
  assert.match(
    report.summary,
    new RegExp(
      `^${report.changes.length} packet (class changes|classes change) · ${report.services.length} Services? affected$`,
    ),
  );
  assert.deepEqual(report.approximations, [], 'every match in these dumps is one the classes split on');
  if (expected.changedChains.length === 0)
    assert.equal(report.classesTraced, 0, 'nothing to trace when no chain differs');
  else assert.ok(report.classesTraced > 0, 'changed chains are traced, never trusted');
  for (const g of report.groups) {
    const want = expected.groups[g.title]!;
    const changes = g.changes.map(i => report.changes[i]!);
    if (want.destinations)
      assert.deepEqual(
        sorted(new Set(changes.map(c => `${c.class.extent.dst}:${c.class.extent.dport}`))),
        sorted(want.destinations),
        `${g.title}: destinations`,
      );
    assert.deepEqual(sorted(new Set(changes.map(c => c.class.extent.from))), want.from, `${g.title}: clients`);
    for (const c of changes) {
      for (const a of want.aspects)
        assert.ok(
          c.aspects.includes(a as never),
          `${g.title}: ${c.class.packet} changes ${a} (has ${c.aspects.join(', ')})`,
        );
      if (want.onlyAspects)
        for (const a of c.aspects)
          assert.ok(
            want.onlyAspects.includes(a),
            `${g.title}: ${c.class.packet} changes only ${want.onlyAspects.join(', ')} (has ${a})`,
          );
      assert.ok(c.oldRules.length + c.newRules.length > 0, `${c.class.packet}: the rules responsible are named`);
    }
  }
  for (const s of expected.samples) {
    const c = report.changes.find(x => x.class.packet === s.packet);
    assert.ok(c, `a class ${s.packet} is reported (classes: ${report.changes.map(x => x.class.packet).join('; ')})`);
    assert.deepEqual(
      fates(c.old),
      sorted(s.old.map(f => JSON.stringify(f))).map(f => JSON.parse(f) as Fate),
      `${s.packet}: old fates`,
    );
    assert.deepEqual(
      fates(c.new),
      sorted(s.new.map(f => JSON.stringify(f))).map(f => JSON.parse(f) as Fate),
      `${s.packet}: new fates`,
    );
  }
}

describe('diffRulesets on kube-proxy dump pairs', () => {
  for (const name of readdirSync(DIR, { withFileTypes: true })
    .filter(d => d.isDirectory() && !['manifests', 'kernel', 'kernel-nft', 'nft'].includes(d.name))
    .map(d => d.name)
    .sort()) {
    it(name, () => check(name));
  }

  it('names the rules responsible on each side with file:line', () => {
    const report = diffFixture('endpoint-added');
    const c = report.changes.find(x => x.class.packet === 'tcp 203.0.113.10:40000 -> 10.200.1.230:80')!;
    // Old: the 1/2 jump to the first endpoint (line 109). New: the re-weighted jumps and the new endpoint's DNAT.
    assert.deepEqual(
      c.oldRules.map(r => `${r.file}:${r.line} ${r.chain} #${r.rule}`),
      ['old.rules:109 KUBE-SVC-DLGPAL4ZCYSJ7UPR #2'],
    );
    assert.deepEqual(c.newRules.map(r => `${r.file}:${r.line} ${r.chain} #${r.rule}`).sort(), [
      'new.rules:112 KUBE-SVC-DLGPAL4ZCYSJ7UPR #2',
      'new.rules:113 KUBE-SVC-DLGPAL4ZCYSJ7UPR #3',
      'new.rules:85 KUBE-SEP-PXHLAW7W37ILZNFQ #2',
    ]);
    assert.match(
      c.newRules.find(r => r.rule === 3 && r.chain.startsWith('KUBE-SVC'))!.text,
      /--probability 0\.5000000000 -j KUBE-SEP-PXHLAW7W37ILZNFQ$/,
    );
  });

  it('the exact probabilities of each side add up to 1', () => {
    for (const name of ['endpoint-added', 'endpoint-removed', 'etp-local']) {
      for (const c of diffFixture(name).changes) {
        for (const side of [c.old, c.new]) {
          let num = 0n;
          let den = 1n;
          for (const f of side) {
            const [n, d] = f.probabilityExact.split('/').map(BigInt) as [bigint, bigint | undefined];
            num = num * (d ?? 1n) + n * den;
            den *= d ?? 1n;
          }
          assert.equal(num, den, `${name} ${c.class.packet}`);
        }
      }
    }
  });
});
