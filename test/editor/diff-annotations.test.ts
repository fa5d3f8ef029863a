/**
 * The effect of each changed hunk in a dump diff editor (src/editor/diff-annotations.ts): the headline a
 * changed rule causes stands on that rule's line, on its side. The pairs are test/fixtures/diff's: svc3's
 * endpoint 10.10.4.12:80 removed (its KUBE-SVC rules at old lines 106–107 become new line 103, its KUBE-SEP
 * chain at old lines 83–84 goes), filter FORWARD's policy ACCEPT → DROP (declared on line 9), a comment edit.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ANNOTATION_CHARS, hunkAnnotations } from '../../src/editor/diff-annotations.ts';
import { type DiffReport, diffRulesets } from '../../src/engine/api.ts';
import { parseClean, readFixture } from '../helpers/fixtures.ts';

function compare(name: string): DiffReport {
  const read = (side: string) => parseClean(readFixture('diff', name, `${side}.rules`), `${name}/${side}.rules`);
  const r = diffRulesets(read('old'), read('new'), { node: { addresses: ['172.18.0.4'] } });
  assert.ok(r.ok);
  return r.report;
}

const LOST = 'default/svc3:svc3-webport lost endpoint 10.10.4.12:80; its traffic now all goes to 10.10.1.11:80';

describe('hunk annotations in the diff editor', () => {
  it('puts the headline a changed rule causes on its line, on both sides', () => {
    const notes = hunkAnnotations(compare('endpoint-removed'));
    const at = (side: string, line1: number) => notes.find(n => n.side === side && n.line === line1 - 1);
    assert.equal(at('new', 103)?.text, LOST);
    for (const line of [106, 107, 84]) assert.equal(at('old', line)?.text, LOST, `old line ${line}`);
    assert.match(at('new', 103)!.hover, /lost endpoint 10\\\.10\\\.4\\\.12:80/, 'escaped markdown');
    // Nothing on lines the change does not touch.
    assert.ok(
      notes.every(n => [103, 106, 107, 83, 84].includes(n.line + 1)),
      JSON.stringify(notes),
    );
  });

  it('a policy change is annotated where the chain is declared', () => {
    const notes = hunkAnnotations(compare('kernel/forward-policy'));
    const decl = notes.find(n => n.side === 'new' && n.line === 8);
    assert.ok(decl, JSON.stringify(notes.slice(0, 5)));
    assert.match(decl.text, /^the policy of filter FORWARD changed from ACCEPT to DROP/);
    assert.ok(decl.text.length <= ANNOTATION_CHARS);
  });

  it('a change that changes no fate says so, proven', () => {
    const notes = hunkAnnotations(compare('reordered'));
    assert.ok(notes.length > 0);
    assert.ok(
      notes.every(n => n.text === 'no packet’s fate changes (proven)'),
      JSON.stringify(notes),
    );
  });
});
