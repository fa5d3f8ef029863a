import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readManifests } from '../../src/engine/kube/manifest/read.ts';
import { buildClusterModel } from '../../src/engine/kube/model/build.ts';

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

describe("the reader's budget (MANIFEST_BUDGET) keeps memory bounded and says the answer is partial", () => {
  const services = (n: number, from = 0) =>
    Array.from(
      { length: n },
      (_, i) =>
        `- apiVersion: v1\n  kind: Service\n  metadata: {name: s${from + i}}\n  spec: {clusterIP: 10.96.1.${from + i}, ports: [{port: 80}, {port: 81}]}\n`,
    ).join('');

  it('stops at the object past the budget, with a ranged diagnostic naming what was read and from which line', () => {
    // Each Service is 3 entries (itself and two ports): a budget of 10 holds three of them.
    const text = `apiVersion: v1\nkind: List\nitems:\n${services(5)}`;
    const set = readManifests([{ file: 'big.yaml', text }], { budget: 10 });
    assert.deepEqual(
      set.objects.map(o => (o as { name: string }).name),
      ['s0', 's1', 's2'],
    );
    const d = set.diagnostics.filter(x => x.code === 'input-too-large');
    assert.equal(d.length, 1, JSON.stringify(set.diagnostics));
    // The fourth Service starts on line 4 + 3 × 4.
    assert.equal(d[0]!.range.start.line, 15);
    assert.equal(
      d[0]!.message,
      "big.yaml: the manifests hold more than the reader's budget of 10 entries (an entry is an object, a Service port, an endpoint, a container port or a replica); 3 objects were read and the rest, from line 16, was not read: the answer is partial",
    );
    assert.equal(set.partial, d[0]!.message);
    assert.equal(buildClusterModel(set).partial, set.partial);
  });

  it('does not read later files once the budget is spent, and a set within it is whole', () => {
    const files = [
      { file: 'a.yaml', text: `apiVersion: v1\nkind: List\nitems:\n${services(3)}` },
      { file: 'b.yaml', text: `apiVersion: v1\nkind: List\nitems:\n${services(3, 3)}` },
    ];
    const cut = readManifests(files, { budget: 12 });
    assert.equal(cut.objects.length, 4);
    assert.match(cut.partial ?? '', /^b\.yaml: .* 4 objects were read and the rest, from line 8, was not read/);
    const whole = readManifests(files, { budget: 18 });
    assert.equal(whole.objects.length, 6);
    assert.equal(whole.partial, null);
    assert.ok(!whole.diagnostics.some(x => x.code === 'input-too-large'));
  });

  it('counts replicas, so a few lines asking for a million pods stop too', () => {
    const text = `apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: 100000, template: {metadata: {labels: {a: b}}}}\n`;
    const set = readManifests([{ file: 'd.yaml', text: [text, text, text].join('---\n') }]);
    assert.equal(set.objects.length, 1);
    assert.match(set.partial ?? '', /1 objects were read and the rest, from line 6, was not read/);
  });

  it('reads only the documents before the limit of a large file outside the fast reader (the yaml package)', () => {
    // The anchor leaves the fast reader's subset.
    const doc = (i: number) =>
      `apiVersion: v1\nkind: Service\nmetadata: {name: &n s${i}}\nspec: {clusterIP: 10.96.2.${i}, ports: [{port: 80}]}\n`;
    const text = Array.from({ length: 10 }, (_, i) => doc(i)).join('---\n');
    const set = readManifests([{ file: 'y.yaml', text }], { yamlMaxChars: doc(0).length * 3 + 10 });
    assert.equal(set.objects.length, 3);
    const d = set.diagnostics.find(x => x.code === 'input-too-large');
    assert.ok(d);
    // The fourth document's `---` line.
    assert.equal(d.range.start.line, 14);
    assert.match(d.message, /3 objects were read and the rest, from line 15, was not read: the answer is partial/);
  });
});
