/**
 * The comparison's budgets (issue 12: bounded memory whatever the inputs): the classes it traces and the
 * changed classes it keeps. Past either, the report is explicitly partial — approximate, with a line that
 * says what was not traced and how many classes — and never "identical". Changes that fare alike share
 * their fates (retain.ts), so a change every Service crosses does not keep a copy per class.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { diffRulesets, formatDiffText, parseIptables } from '../../src/engine/api.ts';
import { generateKubeProxyDump } from '../../bench/generate.ts';
import { masqBit, masqBitBoth } from '../../bench/diff-variants.ts';
import { cli } from '../helpers/cli.ts';
import { tempFile } from '../helpers/fixtures.ts';

const node = { addresses: ['172.18.0.4'] };
const base = generateKubeProxyDump(12, 2);

function compare(newText: string, options: { maxClasses?: number; maxRetained?: number } = {}) {
  const a = parseIptables(base, { file: 'old', lazy: true });
  const b = parseIptables(newText, { file: 'new', lazy: true });
  const r = diffRulesets(a, b, { node, ...options });
  assert.ok(r.ok, r.ok ? '' : r.error);
  return r.report;
}

describe('diff budgets', () => {
  it('without a limit reached, KUBE-MARK-MASQ changing its bit alone is exact, and alike classes share their fates', () => {
    const report = compare(masqBit(base));
    assert.equal(report.proven, true, report.approximations.join('; '));
    assert.equal(report.verdict, 'changed');
    assert.equal(report.services.length, 12);
    // The classes of one Service that changed the same way hold one list of fates, not a copy each.
    const byFates = new Map<string, (typeof report.changes)[number]>();
    let pairs = 0;
    for (const c of report.changes) {
      const k = JSON.stringify([c.old, c.oldRules]);
      const first = byFates.get(k);
      if (!first) byFates.set(k, c);
      else {
        pairs++;
        assert.equal(c.old, first.old, 'equal fates are one object');
        assert.equal(c.oldRules, first.oldRules, 'equal rule lists are one object');
      }
    }
    assert.ok(pairs > 0, 'some classes fare alike');
  });

  it('the text view shows a few Services that changed alike in full and names the rest in one line', () => {
    const report = compare(masqBit(base));
    const lines = formatDiffText(report).split('\n');
    const full = lines.filter(l => /^Service \S+ {2}\(\d+ class(es)?\)$/.test(l));
    assert.equal(full.length, 3, full.join('\n'));
    const folded = lines.find(l => l.startsWith('and 9 more groups'));
    assert.match(
      folded ?? '',
      /^and 9 more groups \(\d+ classes\) changed in the same aspects \[snat, masquerade\] by the same rules as the ones above: Service ns\d+\/svc-\d+:http, /,
    );
    // Every Service is named once: shown in full or in the folded line.
    for (const s of report.services)
      assert.ok(
        lines.some(l => l.includes(`Service ${s}`)),
        s,
      );
  });

  it('past the class budget the report is approximate and says how many classes were not traced', () => {
    const report = compare(masqBit(base), { maxClasses: 40 });
    assert.equal(report.approximate, true);
    assert.equal(report.identical, false);
    assert.ok(report.classesTraced <= 40, `${report.classesTraced} classes traced`);
    const line = report.approximations.find(a => a.startsWith('more than 40 packet classes'));
    assert.match(line ?? '', /^more than 40 packet classes: \d+ more class(es were|was) found and not traced/);
    assert.match(report.summary, /\(at least: the comparison stopped at a limit\)$|^no change found \(approximate\)$/);
  });

  it('past the report budget the comparison stops: approximate, with the changes kept and the classes left', () => {
    const full = compare(masqBit(base));
    const report = compare(masqBit(base), { maxRetained: 30 });
    assert.equal(report.approximate, true);
    assert.equal(report.identical, false);
    assert.equal(report.verdict, 'changed');
    assert.ok(report.changes.length < full.changes.length, `${report.changes.length} of ${full.changes.length}`);
    assert.ok(report.classesTraced < full.classesTraced);
    const line = report.approximations.find(a => a.startsWith('the comparison stopped at its report budget'));
    assert.match(
      line ?? '',
      /^the comparison stopped at its report budget \(30 fates and rules kept\) after \d+ changed class(es)?: \d+ packet class(es were|was) still to trace/,
    );
    assert.match(
      report.summary,
      /^\d+ packet classes change · \d+ Services affected \(at least: the comparison stopped at a limit\)$/,
    );
  });

  it('a budget reached before any change is found is never called identical', () => {
    const report = compare(masqBitBoth(base), { maxClasses: 5 });
    assert.equal(report.identical, false);
    assert.equal(report.approximate, true);
    assert.notEqual(report.verdict, 'identical');
  });

  it('packetlens diff --max-classes sets the class budget (a positive whole number)', () => {
    const old = tempFile('old.rules', base, 'packetlens-budget-');
    const neu = tempFile('new.rules', masqBit(base), 'packetlens-budget-');
    const r = cli('diff', old, neu, '--node-ip', '172.18.0.4', '--max-classes', '40', '--json');
    assert.equal(r.code, 1);
    const report = JSON.parse(r.out[0]!);
    assert.equal(report.approximate, true);
    assert.ok(report.approximations.some((a: string) => a.startsWith('more than 40 packet classes')));
    const bad = cli('diff', old, neu, '--max-classes', '0');
    assert.equal(bad.code, 2);
    assert.match(bad.err.join('\n'), /--max-classes must be a positive whole number/);
  });
});
