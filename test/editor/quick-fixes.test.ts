import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { dumpDiagnostics } from '../../src/editor/diagnostics.ts';
import { quickFixes } from '../../src/editor/quick-fixes.ts';
import { parseIptables } from '../../src/engine/api.ts';
import { analyze, applyEdits, dump } from './helpers.ts';

const FILTER = ['*filter', ':INPUT ACCEPT [0:0]', ':FORWARD ACCEPT [0:0]', ':OUTPUT ACCEPT [0:0]'];
const OPTS = { maxRulesForFullCheck: 1000, maxDiagnostics: 1000 };

/** Applies the first fix for the first diagnostic with `code`; returns the new text. */
function fix(text: string, code: string): { text: string; title: string } {
  const idx = analyze(text);
  const d = dumpDiagnostics(idx, OPTS).diagnostics.find(x => x.code === code);
  assert.ok(d, `no ${code} diagnostic`);
  const fixes = quickFixes(idx, d);
  assert.ok(fixes.length > 0, `no fix for ${code}`);
  return { text: applyEdits(text, fixes[0]!.edits), title: fixes[0]!.title };
}

const codes = (text: string) => dumpDiagnostics(analyze(text), OPTS).diagnostics.map(d => d.code);

describe('diagnostics and quick fixes', () => {
  it('the editor shows parser, rule-option and lint diagnostics together, lint ones faded', () => {
    const text = dump([
      ...FILTER,
      ':SPARE - [0:0]',
      '-A INPUT -s 10.0.0.300 -j ACCEPT',
      '-A INPUT -m u32 --u32 "0=1" -j NOWHERE-CHAIN',
      '-A INPUT -j ACCEPT',
      '-A INPUT -p tcp -j DROP',
      'COMMIT',
    ]);
    const d = dumpDiagnostics(analyze(text), OPTS).diagnostics;
    assert.deepEqual(
      d.map(x => x.code),
      ['unused-chain', 'bad-address', 'unknown-module', 'undeclared-target', 'shadowed-rule'],
    );
    assert.deepEqual(
      d.filter(x => x.unnecessary).map(x => x.code),
      ['unused-chain', 'shadowed-rule'],
    );
    assert.deepEqual(
      d.find(x => x.code === 'shadowed-rule')!.related.map(r => r.range.start.line),
      [7],
    );
  });

  it("above the size limit, only the parser's diagnostics, and a note saying why", () => {
    const text = dump([...FILTER, ':SPARE - [0:0]', '-A INPUT -s 10.0.0.300 -j ACCEPT', 'COMMIT']);
    const r = dumpDiagnostics(analyze(text), { maxRulesForFullCheck: 0, maxDiagnostics: 10 });
    assert.deepEqual(r.diagnostics, []);
    assert.match(r.notes[0]!, /not checked.*packetlens\.limits\.fullCheckMaxRules/);
    const capped = dumpDiagnostics(
      analyze(dump([...FILTER, '-A INPUT -j A-1', '-A INPUT -j A-2', '-A INPUT -j A-3', 'COMMIT'])),
      { maxRulesForFullCheck: 100, maxDiagnostics: 2 },
    );
    assert.equal(capped.diagnostics.length, 2);
    assert.match(capped.notes[0]!, /1 more diagnostics/);
  });

  it("declares a missing chain after the table's declarations", () => {
    const r = fix(
      dump([...FILTER, ':A - [0:0]', '-A INPUT -j A', '-A INPUT -j KUBE-MISSING', 'COMMIT']),
      'undeclared-target',
    );
    assert.equal(r.title, 'Declare chain KUBE-MISSING in table filter');
    assert.match(r.text, /:A - \[0:0\]\n:KUBE-MISSING - \[0:0\]\n-A INPUT -j A/);
    assert.ok(!codes(r.text).includes('undeclared-target'));
  });

  it('removes a rule that never matches', () => {
    const r = fix(
      dump([...FILTER, '-A INPUT -p tcp -j ACCEPT', '-A INPUT -p tcp --dport 22 -j DROP', 'COMMIT']),
      'shadowed-rule',
    );
    assert.equal(r.title, 'Remove rule 2 of INPUT (it never matches)');
    assert.equal(r.text, dump([...FILTER, '-A INPUT -p tcp -j ACCEPT', 'COMMIT']));
  });

  it('removes an unused chain with its rules', () => {
    const r = fix(
      dump([
        ...FILTER,
        ':OLD - [0:0]',
        ':KEEP - [0:0]',
        '-A INPUT -j KEEP',
        '-A OLD -s 1.2.3.4 -j DROP',
        '-A OLD -j RETURN',
        'COMMIT',
      ]),
      'unused-chain',
    );
    assert.equal(r.title, 'Remove unused chain OLD and its 2 rules');
    assert.equal(r.text, dump([...FILTER, ':KEEP - [0:0]', '-A INPUT -j KEEP', 'COMMIT']));
    assert.deepEqual(parseIptables(r.text).diagnostics, []);
  });

  it('rewrites the deprecated negation, fixes a user chain policy, adds a missing COMMIT', () => {
    const neg = fix(dump([...FILTER, '-A INPUT -s ! 10.0.0.1 -j DROP', 'COMMIT']), 'deprecated-syntax');
    assert.match(neg.text, /-A INPUT ! -s 10\.0\.0\.1 -j DROP/);
    const opt = fix(dump([...FILTER, '-A INPUT -p tcp --dport ! 22 -j DROP', 'COMMIT']), 'deprecated-syntax');
    assert.match(opt.text, /-A INPUT -p tcp ! --dport 22 -j DROP/);
    assert.deepEqual(parseIptables(opt.text).diagnostics, []);
    const pol = fix(dump([...FILTER, ':MINE ACCEPT [0:0]', '-A INPUT -j MINE', 'COMMIT']), 'policy-on-user-chain');
    assert.match(pol.text, /:MINE - \[0:0\]/);
    const commit = fix(
      dump([...FILTER, '-A INPUT -j ACCEPT', '*nat', ':PREROUTING ACCEPT [0:0]', 'COMMIT']),
      'missing-commit',
    );
    assert.match(commit.text, /-A INPUT -j ACCEPT\nCOMMIT\n\*nat/);
    assert.deepEqual(parseIptables(commit.text).diagnostics, []);
  });

  it('offers nothing where there is no obvious repair', () => {
    const idx = analyze(
      dump([...FILTER, ':A - [0:0]', ':B - [0:0]', '-A INPUT -j A', '-A A -j B', '-A B -j A', 'COMMIT']),
    );
    const loop = dumpDiagnostics(idx, OPTS).diagnostics.find(d => d.code === 'jump-loop')!;
    assert.deepEqual(quickFixes(idx, loop), []);
  });
});
