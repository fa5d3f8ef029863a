import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readManifests } from '../../src/engine/kube/manifest/read.ts';

const read = (text: string, file = 'm.yaml') => readManifests([{ file, text }]);
const service = (i: number) =>
  `- {apiVersion: v1, kind: Service, metadata: {name: s${i}}, spec: {ports: [{port: 80}]}}`;

describe('manifest reader limits name their cause', () => {
  it('a List that is simply large (no aliases) is a partial answer, not an "alias bomb"', () => {
    // The anchor puts the file outside the fast reader's subset (fast-yaml.ts), which reads a plain List of
    // any length whole (test/kube/fast-yaml.test.ts): this is the `yaml` package's path and its node budget.
    const set = read(
      `apiVersion: v1\nkind: &k List\nitems:\n${Array.from({ length: 5000 }, (_, i) => service(i)).join('\n')}\n`,
      'list.yaml',
    );
    const limit = set.diagnostics.filter(d => d.code === 'yaml-alias-limit' || d.code === 'input-too-large');
    assert.equal(limit.length, 1, JSON.stringify(set.diagnostics.slice(0, 3)));
    const d = limit[0]!;
    assert.equal(d.code, 'input-too-large');
    assert.doesNotMatch(d.message, /alias/);
    const n = set.objects.length;
    assert.ok(n > 0 && n < 5000, `${n} objects`);
    // Items start on line 4, one Service a line: the first object not read (n, counting from 0) is on line 4 + n.
    assert.equal(
      d.message,
      `list.yaml: this document is larger than the reader's limit of 100000 node reads per document; ${n} objects were read and the rest, from line ${4 + n}, was not read: the answer is partial`,
    );
    // The Service the budget stopped half-way is dropped, not kept with its unread fields missing.
    assert.ok(
      !set.diagnostics.some(x => x.code === 'missing-field' || x.code === 'service-without-ports'),
      JSON.stringify(set.diagnostics.slice(0, 3)),
    );
  });

  it('an alias bomb is still called one', () => {
    const text = `apiVersion: v1\nkind: List\ndefs:\n  s: &s {apiVersion: v1, kind: Service, metadata: {name: a}, spec: {ports: [{port: 80}]}}\nitems: [${Array(50_000).fill('*s').join(', ')}]\n`;
    const set = read(text, 'bomb.yaml');
    const d = set.diagnostics.find(x => x.code === 'yaml-alias-limit');
    assert.ok(d, JSON.stringify(set.diagnostics.slice(0, 3)));
    assert.match(
      d.message,
      /^bomb\.yaml: this document expands aliases beyond 100000 nodes \(an alias bomb\?\); the rest of it was not read/,
    );
    assert.ok(!set.diagnostics.some(x => x.code === 'input-too-large'));
  });
});
