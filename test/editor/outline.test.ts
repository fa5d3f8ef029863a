import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { foldingRanges } from '../../src/editor/folding.ts';
import { outline } from '../../src/editor/symbols.ts';
import { analyze, lineOf, seedText } from './helpers.ts';

describe('outline and folding', () => {
  const seed = seedText();
  const idx = analyze(seed);

  it('lists tables, then chains with rule counts; a chain selects its name on its first rule', () => {
    const syms = outline(idx);
    // Counted from the text: `:` declarations and `-A` lines per section (built-in chains always count).
    const sections = seed.split(/^\*/m).slice(1);
    const count = (sec: string, re: RegExp) => sec.split('\n').filter(l => re.test(l)).length;
    const expected = sections.map(sec => [
      sec.split('\n')[0]!,
      `${count(sec, /^:/)} chains · ${count(sec, /^-A /)} rules`,
    ]);
    assert.deepEqual(expected, [
      ['filter', '10 chains · 15 rules'],
      ['nat', '26 chains · 54 rules'],
    ]);
    assert.deepEqual(
      syms.map(s => [s.name, s.detail]),
      expected,
    );
    const nat = syms[1]!;
    const svc = nat.children.find(c => c.name === 'KUBE-SVC-DLGPAL4ZCYSJ7UPR')!;
    assert.equal(svc.detail, '3 rules');
    const first = lineOf(seed, '-A KUBE-SVC-DLGPAL4ZCYSJ7UPR');
    assert.deepEqual(svc.range.start, { line: first, character: 0 });
    assert.equal(svc.range.end.line, first + 2);
    assert.deepEqual(svc.selectionRange, {
      start: { line: first, character: 3 },
      end: { line: first, character: 3 + 'KUBE-SVC-DLGPAL4ZCYSJ7UPR'.length },
    });
    const pre = nat.children.find(c => c.name === 'PREROUTING')!;
    assert.equal(pre.detail, '1 rule · policy ACCEPT');
    // An empty chain's symbol is its declaration.
    const canary = nat.children.find(c => c.name === 'KUBE-KUBELET-CANARY')!;
    assert.equal(canary.range.start.line, lineOf(seed, ':KUBE-KUBELET-CANARY - [0:0]'));
    for (const t of syms)
      for (const c of t.children)
        assert.ok(c.range.start.line >= t.range.start.line && c.range.end.line <= t.range.end.line, c.name);
  });

  it("folds each table up to its COMMIT, its declarations, each chain's rules, and comment blocks", () => {
    const folds = foldingRanges(idx);
    const has = (start: number, end: number) => folds.some(f => f.start === start && f.end === end);
    const nat = lineOf(seed, '*nat');
    const commits = seed.split('\n').flatMap((l, i) => (l === 'COMMIT' ? [i] : []));
    assert.ok(has(nat, commits[1]!));
    assert.ok(has(nat + 1, lineOf(seed, ':KUBE-SVC-NPX46M4PTMTKRN6Y')));
    const svc = lineOf(seed, '-A KUBE-SVC-DLGPAL4ZCYSJ7UPR');
    assert.ok(has(svc, svc + 2));
    assert.ok(folds.some(f => f.kind === 'comment' && f.start === 0 && f.end === 5));
    assert.ok(!folds.some(f => f.start === lineOf(seed, '-A PREROUTING')), 'a one-rule chain has no fold');
  });
});
