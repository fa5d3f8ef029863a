/**
 * The fast manifest reader (src/engine/kube/manifest/fast-yaml.ts) against the `yaml` package: whenever it
 * reads a text, its values and ranges are yaml's; whenever yaml reports an error, it gives up.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  type FastMap,
  type FastScalar,
  type FastSeq,
  fastYamlDocuments,
  readFastYaml,
} from '../../src/engine/kube/manifest/fast-yaml.ts';
import { readManifests } from '../../src/engine/kube/manifest/read.ts';
import { fromFast, yamlDocs } from './fast-yaml-compare.ts';

function yamlFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yamlFiles(p, out);
    else if (/\.ya?ml$/.test(name)) out.push(p);
  }
  return out;
}

/** The fast reader's documents equal yaml's (empty documents aside: neither reads anything from them). */
function agree(text: string): 'read' | 'gave-up' {
  const fast = readFastYaml(text);
  if (fast === null) return 'gave-up';
  const theirs = yamlDocs(text);
  assert.ok(theirs, `yaml reports errors the fast reader did not see:\n${text}`);
  const isEmpty = (x: unknown) => x === null || (typeof x === 'object' && 'v' in x && x.v === null);
  assert.deepEqual(
    fast.map(fromFast).filter(x => !isEmpty(x)),
    theirs.filter(x => !isEmpty(x)),
    text,
  );
  return 'read';
}

// A generated manifest-like document, rendered in one of several styles, with comments and blank lines.
type Tree = string | number | boolean | null | Tree[] | { [k: string]: Tree };
const scalarArb = fc.oneof(
  fc.constantFrom(
    '80',
    '-1',
    '0x1F',
    '0o17',
    '1.5',
    '1e3',
    '.inf',
    'true',
    'False',
    'null',
    '~',
    'a b',
    'x:y',
    'k:{"a":1}:',
  ),
  fc.stringMatching(/^[a-z0-9.\-/]{1,8}$/),
  fc.integer({ min: -5, max: 70000 }),
  fc.boolean(),
);
const treeArb: fc.Arbitrary<Tree> = fc.letrec<{ tree: Tree }>(tie => ({
  tree: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalarArb,
    fc.array(tie('tree'), { maxLength: 3 }),
    fc.dictionary(fc.stringMatching(/^[a-z][a-zA-Z0-9./-]{0,6}$/), tie('tree'), { maxKeys: 4 }),
  ),
})).tree;

function quote(s: string, style: number): string {
  if (style === 1) return `'${s.replace(/'/g, "''")}'`;
  if (style === 2) return JSON.stringify(s);
  return s;
}

function flow(t: Tree, style: number): string {
  if (Array.isArray(t)) return `[${t.map(x => flow(x, style)).join(', ')}]`;
  if (t !== null && typeof t === 'object')
    return `{${Object.entries(t)
      .map(([k, v]) => `${k}: ${flow(v, style)}`)
      .join(', ')}}`;
  return typeof t === 'string' ? quote(t, style % 3) : String(t);
}

function block(t: Tree, indent: number, rnd: () => number, out: string[], prefix: string): void {
  const pad = ' '.repeat(indent);
  const junk = () => {
    const r = rnd();
    if (r < 0.1) out.push('');
    else if (r < 0.2) out.push(`${' '.repeat(Math.floor(rnd() * (indent + 4)))}# note`);
  };
  if (Array.isArray(t) && t.length && rnd() < 0.8) {
    const seqIndent = prefix === 'map' && rnd() < 0.5 ? indent - 2 : indent;
    for (const item of t) {
      junk();
      if (
        item !== null &&
        typeof item === 'object' &&
        !Array.isArray(item) &&
        Object.keys(item).length &&
        rnd() < 0.7
      ) {
        const lines: string[] = [];
        block(item, seqIndent + 2, rnd, lines, 'seq');
        const first = lines.findIndex(l => l.trim() && !l.trim().startsWith('#'));
        lines[first] = `${' '.repeat(seqIndent)}- ${lines[first]!.slice(seqIndent + 2)}`;
        out.push(...lines);
      } else if (item === null && rnd() < 0.5) {
        out.push(`${' '.repeat(seqIndent)}-`);
      } else out.push(`${' '.repeat(seqIndent)}- ${flow(item, Math.floor(rnd() * 3))}`);
    }
    return;
  }
  if (t !== null && typeof t === 'object' && !Array.isArray(t) && Object.keys(t).length && rnd() < 0.8) {
    for (const [k, v] of Object.entries(t)) {
      junk();
      const key = quote(k, rnd() < 0.8 ? 0 : 1 + Math.floor(rnd() * 2));
      const nested = v !== null && typeof v === 'object' && (Array.isArray(v) ? v.length : Object.keys(v).length);
      if (nested && rnd() < 0.7) {
        out.push(`${pad}${key}:${rnd() < 0.1 ? ' # c' : ''}`);
        block(v, indent + 2, rnd, out, 'map');
      } else if (v === null && rnd() < 0.5) out.push(`${pad}${key}:${rnd() < 0.3 ? '   ' : ''}`);
      else if (typeof v === 'string' && rnd() < 0.15)
        out.push(`${pad}${key}: |${rnd() < 0.5 ? '-' : ''}`, `${pad}  ${v}`, `${pad}  second line`);
      else out.push(`${pad}${key}: ${flow(v, Math.floor(rnd() * 3))}${rnd() < 0.1 ? '  # trailing' : ''}`);
    }
    return;
  }
  out.push(`${pad}${flow(t, 0)}`);
}

function render(docs: Tree[], seed: number): string {
  let s = seed;
  const rnd = () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
  const parts = docs.map(d => {
    const out: string[] = [];
    block(d, 0, rnd, out, '');
    return out.join('\n');
  });
  return parts.join(rnd() < 0.5 ? '\n---\n' : '\n---\n\n# next\n') + (rnd() < 0.7 ? '\n' : '');
}

describe('fast YAML reader agrees with the yaml package', () => {
  it('reads every manifest of the repository, as yaml does', () => {
    const files = [...yamlFiles('examples'), ...yamlFiles('test/fixtures')];
    assert.ok(files.length > 50);
    const read = files.filter(f => agree(readFileSync(f, 'utf8')) === 'read');
    // Every manifest in the repository is inside the subset: a regression here means a slower editor.
    assert.deepEqual(
      files.filter(f => !read.includes(f)),
      [],
    );
  });

  it('readManifests gives the same objects, positions and diagnostics either way', () => {
    const files = [...yamlFiles('examples'), ...yamlFiles('test/fixtures')].map(f => ({
      file: f,
      text: readFileSync(f, 'utf8'),
    }));
    const fast = readManifests(files);
    const slow = readManifests(files, { fastYaml: false });
    assert.ok(fast.objects.length > 100);
    assert.deepEqual(fast, slow);
  });

  it('generated documents: same values and ranges, or gives up', () => {
    let read = 0;
    fc.assert(
      fc.property(fc.array(treeArb, { minLength: 1, maxLength: 3 }), fc.nat(), (docs, seed) => {
        if (agree(render(docs, seed)) === 'read') read++;
      }),
      { seed: 18, numRuns: 600 },
    );
    assert.ok(read > 300, `only ${read} of 600 generated documents read fast`);
  });

  it('mutated documents: never disagrees with yaml (errors make it give up)', () => {
    const base = readFileSync('test/fixtures/diff/manifests/old/services.yaml', 'utf8');
    fc.assert(
      fc.property(
        fc.nat(base.length),
        fc.constantFrom(
          ' ',
          '  ',
          '-',
          ':',
          '#',
          '"',
          "'",
          '[',
          '{',
          '}',
          '\n',
          '\n ',
          '|',
          '&a ',
          '*a',
          '!',
          '? ',
          ',',
        ),
        fc.nat(3),
        (at, ins, del) => {
          agree(base.slice(0, at) + ins + base.slice(at + del));
        },
      ),
      { seed: 18, numRuns: 1500 },
    );
  });

  it('hand-picked edge cases', () => {
    const cases = [
      'a:\n  b: x\n    # c\nz: 2',
      '- a\n  # c\n- b',
      'a:  # c\nb: 1',
      'a: |\n  foo\n\n  bar\n\nb: |-\n   x\n   y\n  \nc: 1\n',
      'a: [1, {e: f}]  \n\n# foo\nz:\n- 1\n-\n- k: v\n  l: w\n---\n- x\n',
      'a:\n  b: x\n# c\n',
      "k: \"\\u00e9\\x41\\t\\\\\"\nl: 'it''s'\n",
      '  a: 1\n  b: 2\n',
      'a: b: c\n',
      'a:\n  - x\n  y: 1\n',
      'f:spec:\n  k:{"port":80,"protocol":"TCP"}:\n    .: {}\n',
    ];
    for (const c of cases) agree(c);
    assert.equal(agree('f:spec:\n  k:{"port":80,"protocol":"TCP"}:\n    .: {}\n'), 'read');
  });

  it('a List of 20,000 Services is read whole and fast', () => {
    const items = Array.from(
      { length: 20_000 },
      (_, i) =>
        `- apiVersion: v1\n  kind: Service\n  metadata:\n    name: s${i}\n  spec:\n    ports:\n    - port: 80\n`,
    );
    const text = `apiVersion: v1\nkind: List\nitems:\n${items.join('')}`;
    const set = readManifests([{ file: 'list.yaml', text }]);
    assert.equal(set.objects.length, 20_000);
    assert.deepEqual(set.diagnostics, []);
  });

  it("streams a List's items: each is handed over as it is read, the document keeps none", () => {
    const text = 'apiVersion: v1\nitems:\n- a: 1\n  b: [x]\n- c: {d: 2}\n-\nkind: List\nother:\n- 9\n';
    const seen: unknown[] = [];
    const docs = fastYamlDocuments(text, item => seen.push(fromFast(item)));
    assert.ok(docs);
    const [doc] = [...docs];
    const yamlItems = (yamlDocs(text)![0] as { m: [unknown, { s: unknown[] }][] }).m[1]![1].s;
    assert.deepEqual(seen, yamlItems);
    // The document's `items` is an empty sequence with the range of the whole one; other sequences are whole.
    const pairs = (doc as FastMap).items;
    assert.equal(pairs[1]!.value.fast, 'seq');
    assert.equal((pairs[1]!.value as FastSeq).items.length, 0);
    assert.equal(((pairs[3]!.value as FastSeq).items[0] as FastScalar).value, 9);
  });

  it('reads the items of a List whose kind comes after them (kubectl), and no items of a document that is not a List', () => {
    const svc = '- apiVersion: v1\n  kind: Service\n  metadata: {name: s}\n  spec: {ports: [{port: 80}]}\n';
    const list = readManifests([{ file: 'l.yaml', text: `apiVersion: v1\nitems:\n${svc}kind: List\n` }]);
    assert.deepEqual(
      list.objects.map(o => o.kind),
      ['Service'],
    );
    const notList = readManifests([{ file: 'n.yaml', text: `apiVersion: v1\nitems:\n${svc}kind: Thing\n` }]);
    assert.deepEqual(notList.objects, []);
    assert.deepEqual(notList.diagnostics, []);
  });
});
