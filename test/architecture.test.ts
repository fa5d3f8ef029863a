/**
 * ARCHITECTURE.md's boundaries, checked on the import graph (issue 16). Every `import … from`, `export … from`,
 * `import x = require()`, `require()`, dynamic `import()` and `import('…').T` type of every .ts/.mjs file under
 * src/, webview/, test/, scripts/ and bench/ is read with TypeScript's own parser (comments and strings are not
 * imports), resolved to a file, and each rule the map names is asserted here. Type-only imports count: a
 * type-only cycle still means two folders cannot be read, changed or moved apart.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, posix } from 'node:path';
import { describe, it } from 'node:test';
import ts from 'typescript';
import { ROOT } from './helpers/fixtures.ts';

const ROOTS = ['src', 'webview', 'test', 'scripts', 'bench'];

interface Edge {
  /** Importing file, repository-relative with `/`. */
  from: string;
  spec: string;
  /** Repository-relative file for a relative specifier; undefined for a package or built-in. */
  to?: string;
  typeOnly: boolean;
}

function sources(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(join(ROOT, dir))) {
    const p = posix.join(dir, name);
    if (name === 'node_modules' || p === 'test/fixtures' || p === 'bench/out') continue;
    if (statSync(join(ROOT, p)).isDirectory()) sources(p, out);
    else if (/\.(ts|mjs)$/.test(name)) out.push(p);
  }
  return out;
}

function literal(node: ts.Node | undefined): string | undefined {
  return node && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) ? node.text : undefined;
}

/** The specifiers of one file's source text, with whether each is erased at run time. */
function specifiers(file: string, text: string): { spec: string; typeOnly: boolean }[] {
  const sf = ts.createSourceFile(
    file,
    text,
    ts.ScriptTarget.Latest,
    false,
    file.endsWith('.mjs') ? ts.ScriptKind.JS : ts.ScriptKind.TS,
  );
  const out: { spec: string; typeOnly: boolean }[] = [];
  const add = (node: ts.Node | undefined, typeOnly: boolean, where: ts.Node) => {
    const spec = literal(node);
    // A computed specifier cannot be checked, so it is itself a finding.
    out.push({
      spec: spec ?? `<computed at ${file}:${sf.getLineAndCharacterOfPosition(where.getStart(sf)).line + 1}>`,
      typeOnly,
    });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      const c = node.importClause;
      const named = c?.namedBindings && ts.isNamedImports(c.namedBindings) ? c.namedBindings.elements : undefined;
      const typeOnly =
        !!c && (c.isTypeOnly || (!c.name && !!named && named.length > 0 && named.every(e => e.isTypeOnly)));
      add(node.moduleSpecifier, typeOnly, node);
    } else if (ts.isExportDeclaration(node)) {
      if (node.moduleSpecifier) {
        const named =
          node.exportClause && ts.isNamedExports(node.exportClause) ? node.exportClause.elements : undefined;
        add(
          node.moduleSpecifier,
          node.isTypeOnly || (!!named && named.length > 0 && named.every(e => e.isTypeOnly)),
          node,
        );
      }
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      add(node.moduleReference.expression, node.isTypeOnly, node);
    } else if (ts.isImportTypeNode(node)) {
      const arg = node.argument;
      add(ts.isLiteralTypeNode(arg) ? arg.literal : undefined, true, node);
    } else if (ts.isCallExpression(node)) {
      const dynamic = node.expression.kind === ts.SyntaxKind.ImportKeyword;
      const req = ts.isIdentifier(node.expression) && node.expression.text === 'require';
      if (dynamic || req) add(node.arguments[0], false, node);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

/** `./x.ts`, `./x.js` (TypeScript's convention for a .ts file), `./x` and `./x/index.ts`, relative to the importer. */
function resolveRelative(from: string, spec: string): string | undefined {
  const base = posix.join(posix.dirname(from), spec);
  const tries = [
    base,
    base.replace(/\.js$/, '.ts'),
    base.replace(/\.mjs$/, '.mts'),
    `${base}.ts`,
    `${base}.mjs`,
    `${base}/index.ts`,
  ];
  return tries.find(t => existsSync(join(ROOT, t)) && statSync(join(ROOT, t)).isFile());
}

function buildGraph(): { files: string[]; edges: Edge[] } {
  const files = ROOTS.flatMap(r => sources(r)).sort();
  const edges: Edge[] = [];
  for (const from of files) {
    for (const { spec, typeOnly } of specifiers(from, readFileSync(join(ROOT, from), 'utf8'))) {
      const to = spec.startsWith('.') ? resolveRelative(from, spec) : undefined;
      edges.push(to === undefined ? { from, spec, typeOnly } : { from, spec, to, typeOnly });
    }
  }
  return { files, edges };
}

const { files, edges } = buildGraph();
const out = new Map<string, Edge[]>();
for (const e of edges) out.set(e.from, [...(out.get(e.from) ?? []), e]);
const under = (dir: string) => (f: string) => f === dir || f.startsWith(`${dir}/`);
const inEngine = under('src/engine');
const isBuiltin = (spec: string) => spec.startsWith('node:') || builtinModules.includes(spec.split('/')[0]!);
const show = (e: Edge) => `${e.from} → '${e.spec}'${e.typeOnly ? ' (type)' : ''}`;

/** The import chain from `start` to the first file (or package) `bad` accepts, following every edge. */
function reach(start: string, bad: (e: Edge) => boolean): string | undefined {
  const parent = new Map<string, string>([[start, '']]);
  const queue = [start];
  while (queue.length > 0) {
    const f = queue.shift()!;
    for (const e of out.get(f) ?? []) {
      if (bad(e)) {
        const chain = [`'${e.spec}'`];
        for (let p = f; p !== ''; p = parent.get(p)!) chain.unshift(p);
        return chain.join(' → ');
      }
      if (e.to !== undefined && !parent.has(e.to)) {
        parent.set(e.to, f);
        queue.push(e.to);
      }
    }
  }
  return undefined;
}

/** The engine's folder of a file: the first path segment under src/engine (a top-level file is its own node). */
const engineFolder = (f: string) => f.slice('src/engine/'.length).split('/')[0]!;

/** Folder → folder edges inside src/engine with the file imports behind each. */
function folderGraph(): Map<string, Map<string, Edge[]>> {
  const g = new Map<string, Map<string, Edge[]>>();
  for (const e of edges) {
    if (!inEngine(e.from) || e.to === undefined || !inEngine(e.to)) continue;
    const a = engineFolder(e.from);
    const b = engineFolder(e.to);
    if (!g.has(a)) g.set(a, new Map());
    if (a === b) continue;
    const m = g.get(a)!;
    m.set(b, [...(m.get(b) ?? []), e]);
  }
  return g;
}

/** Tarjan's strongly connected components; returns the component index of each node. */
function components(nodes: string[], next: (n: string) => Iterable<string>): Map<string, number> {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const comp = new Map<string, number>();
  const stack: string[] = [];
  let counter = 0;
  let count = 0;
  const strong = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    for (const w of next(v)) {
      if (!index.has(w)) {
        strong(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (!comp.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      for (let w = stack.pop()!; ; w = stack.pop()!) {
        comp.set(w, count);
        if (w === v) break;
      }
      count++;
    }
  };
  for (const n of nodes) if (!index.has(n)) strong(n);
  return comp;
}

/**
 * Issue 16: the folder-level cycle edges inside src/engine that are grandfathered (none today). This list only shrinks: the
 * test fails on a cycle edge not listed here and on a listed edge that is no longer a cycle edge (delete
 * it). Remove one by moving the shared piece (a type, a table) into the folder both sides may import.
 */
const KNOWN_CYCLE_EDGES: readonly string[] = [
  // None left: the engine's folders are layered (ARCHITECTURE.md, "Layers"). The rules' modules take the
  // packet from net/packet.ts and what they may consult from matches/env.ts; the nft program a model rule
  // carries is typed in nft-program/, below both the model and the nftables front end; the nft executor is
  // part of the evaluator (eval/nft-exec.ts); hook names and families are the leaf hooks.ts.
];

describe('architecture: the import graph (ARCHITECTURE.md)', () => {
  it('reads every import, and every relative import resolves to a file', () => {
    assert.ok(files.length > 300, `only ${files.length} files found`);
    assert.ok(edges.length > 1000, `only ${edges.length} imports found`);
    const unresolved = edges.filter(e => e.spec.startsWith('.') && e.to === undefined).map(show);
    assert.deepEqual(unresolved, []);
    // Product code cannot hide an import from this test; the test runner and the e2e runner load files by
    // name on purpose.
    const computed = edges.filter(
      e => e.spec.startsWith('<computed') && (under('src')(e.from) || under('webview')(e.from)),
    );
    assert.deepEqual(
      computed.map(e => e.spec),
      [],
      'a computed import specifier cannot be checked',
    );
    // Belt and braces: TypeScript's pre-processor (a different code path) finds the same module names.
    for (const f of files) {
      const text = readFileSync(join(ROOT, f), 'utf8');
      const pre = ts.preProcessFile(text, true, true).importedFiles.map(i => i.fileName);
      assert.deepEqual(
        [
          ...new Set(
            specifiers(f, text)
              .map(s => s.spec)
              .filter(s => !s.startsWith('<computed')),
          ),
        ].sort(),
        [...new Set(pre)].sort(),
        f,
      );
    }
  });

  it('rule 1: src/engine imports no vscode, no Node built-in, nothing outside src/engine', () => {
    // The engine also runs in a browser (web extension): a package it uses must be pure JavaScript. Adding
    // one here is a decision, not an accident.
    const enginePackages = new Set(['yaml']);
    const bad = edges.filter(
      e =>
        inEngine(e.from) && (e.to === undefined ? !enginePackages.has(e.spec) || isBuiltin(e.spec) : !inEngine(e.to)),
    );
    assert.deepEqual(bad.map(show), []);
  });

  it('rule 2: src/editor reaches no vscode, not even through another file', () => {
    const bad = files
      .filter(under('src/editor'))
      .map(f => reach(f, e => e.spec === 'vscode'))
      .filter(c => c !== undefined);
    assert.deepEqual(bad, []);
  });

  it('rule 3: webview imports only webview/, src/shared types and its packages, and reaches nothing in src/engine', () => {
    const web = files.filter(under('webview'));
    const direct = edges
      .filter(e => under('webview')(e.from))
      .filter(e =>
        e.to === undefined
          ? isBuiltin(e.spec) || e.spec === 'vscode'
          : !under('webview')(e.to) && !(under('src/shared')(e.to) && e.typeOnly),
      );
    assert.deepEqual(direct.map(show), []);
    const reached = web.map(f => reach(f, e => e.to !== undefined && inEngine(e.to))).filter(c => c !== undefined);
    assert.deepEqual(reached, []);
  });

  it('rule 4: product code outside src/engine reaches the engine only through src/engine/api.ts', () => {
    // Tests may import engine internals (a unit test of one module); bench and scripts are tools.
    const product = (f: string) => under('src')(f) && !inEngine(f);
    const bad = edges.filter(
      e => product(e.from) && e.to !== undefined && inEngine(e.to) && e.to !== 'src/engine/api.ts',
    );
    assert.deepEqual(bad.map(show), []);
  });

  it('rule 6: the evaluator knows nothing about IPVS or Kubernetes (they plug in through eval/intercept.ts)', () => {
    const bad = edges.filter(
      e =>
        under('src/engine/eval')(e.from) &&
        e.to !== undefined &&
        (under('src/engine/ipvs')(e.to) || under('src/engine/kube')(e.to)),
    );
    assert.deepEqual(bad.map(show), []);
  });

  it('rule 7: tests of the front ends (test/cli, test/editor) reach the engine only through src/engine/api.ts', () => {
    // They test what the CLI and the editor do with the engine's public boundary, as the code they test
    // does; a unit test of one engine module lives beside the others of its folder (test/engine, test/nftables…).
    const bad = edges.filter(
      e =>
        (under('test/cli')(e.from) || under('test/editor')(e.from)) &&
        e.to !== undefined &&
        inEngine(e.to) &&
        e.to !== 'src/engine/api.ts',
    );
    assert.deepEqual(bad.map(show), []);
  });

  it('rule 8: a match module lives in src/engine/matches and is registered; a target in src/engine/targets', () => {
    // The one room for each: `defineMatch(…)` / `defineTarget(…)` in a file of its folder, imported by that
    // folder's registry.ts (an unregistered module is dead code the evaluator never consults).
    for (const [fn, dir] of [
      ['defineMatch', 'src/engine/matches'],
      ['defineTarget', 'src/engine/targets'],
    ] as const) {
      const call = new RegExp(`(?<!function )\\b${fn}\\s*(<[^;]*?>)?\\(`);
      const defining = files
        .filter(under('src'))
        .filter(f => f !== `${dir}/types.ts` && call.test(readFileSync(join(ROOT, f), 'utf8')));
      assert.ok(defining.length >= 5, `${fn}: only ${defining.length} files found`);
      assert.deepEqual(
        defining.filter(f => posix.dirname(f) !== dir),
        [],
        `${fn} outside ${dir}`,
      );
      const registered = new Set((out.get(`${dir}/registry.ts`) ?? []).map(e => e.to));
      assert.deepEqual(
        defining.filter(f => !registered.has(f)),
        [],
        `not imported by ${dir}/registry.ts`,
      );
    }
  });

  it('rule 9: only the composition root registers with VS Code (src/extension.ts and the manifest features it installs)', () => {
    const root = new Set(['src/extension.ts', 'src/vscode/kube-manifests.ts']);
    const bad = files
      .filter(f => under('src')(f) && !root.has(f))
      .filter(f =>
        /\b(languages|commands|window|workspace)\s*\.\s*register\w*\s*\(/.test(readFileSync(join(ROOT, f), 'utf8')),
      );
    assert.deepEqual(bad, []);
  });

  it('rule 10: the map is true: every path ARCHITECTURE.md and docs/ name exists, every engine folder is on the map', () => {
    const docs = [
      'ARCHITECTURE.md',
      ...readdirSync(join(ROOT, 'docs'))
        .filter(n => n.endsWith('.md'))
        .map(n => `docs/${n}`),
    ];
    const path = /(?<![\w./-])(?:src|test|docs|scripts|webview|bench|examples)\/[\w./-]*\w/g;
    const missing = docs.flatMap(d =>
      [...readFileSync(join(ROOT, d), 'utf8').matchAll(path)]
        .map(m => m[0])
        .filter(p => !existsSync(join(ROOT, p)))
        .map(p => `${d}: ${p}`),
    );
    assert.deepEqual(missing, []);
    // A docs/*.md page named anywhere (code comments, tests, README) exists.
    const named = [...files, 'README.md', 'ARCHITECTURE.md'].flatMap(f =>
      [...readFileSync(join(ROOT, f), 'utf8').matchAll(/(?<![\w/-])docs\/[\w-]+\.md/g)].map(m => `${f}: ${m[0]}`),
    );
    assert.deepEqual(
      named.filter(n => !existsSync(join(ROOT, n.split(': ')[1]!))),
      [],
    );
    const map = readFileSync(join(ROOT, 'ARCHITECTURE.md'), 'utf8');
    const folders = ['src', 'src/engine', 'src/engine/kube'].flatMap(d =>
      readdirSync(join(ROOT, d))
        .filter(n => statSync(join(ROOT, d, n)).isDirectory())
        .map(n => `${d}/${n}`),
    );
    assert.deepEqual(
      folders.filter(f => !map.includes(`${posix.basename(f)}/`)),
      [],
      'a folder missing from ARCHITECTURE.md',
    );
  });

  it("rule 11: the diff reaches verdicts only through tracePacket (eval/trace.ts) and the evaluator's value types", () => {
    // The class analysis decides which packets to trace, never what happens to them: no walker, pipeline or
    // rule matcher of the evaluator in src/engine/diff.
    const allowed = new Set(['trace.ts', 'trace-types.ts', 'packet-spec.ts', 'node.ts']);
    const bad = edges.filter(
      e =>
        under('src/engine/diff')(e.from) &&
        e.to !== undefined &&
        under('src/engine/eval')(e.to) &&
        !allowed.has(posix.basename(e.to)),
    );
    assert.deepEqual(bad.map(show), []);
  });

  it('rule 12: only the front ends read rule text (issue 13): no `.raw` outside src/engine/iptables and src/engine/nftables', () => {
    // Analyses, printers, hovers and the CLI read the model (a module's compiled spec and options through its
    // hooks, matches/knowledge.ts), never a rule's source line: a second reader of rule words drifts from the
    // parser. Every property read named `raw` counts (`String.raw` aside), so the check needs no type information.
    const frontEnd = (f: string) => under('src/engine/iptables')(f) || under('src/engine/nftables')(f);
    const readers: string[] = [];
    for (const f of files.filter(f => under('src')(f) && !frontEnd(f))) {
      const text = readFileSync(join(ROOT, f), 'utf8');
      if (!/\braw\b/.test(text)) continue;
      const sf = ts.createSourceFile(f, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
      const at = (n: ts.Node) => `${f}:${sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1}`;
      const visit = (n: ts.Node): void => {
        if (ts.isPropertyAccessExpression(n) && n.name.text === 'raw') {
          if (!(ts.isIdentifier(n.expression) && n.expression.text === 'String')) readers.push(at(n));
        } else if (ts.isElementAccessExpression(n) && literal(n.argumentExpression) === 'raw') readers.push(at(n));
        else if (
          ts.isBindingElement(n) &&
          ((n.propertyName && ts.isIdentifier(n.propertyName) ? n.propertyName.text : undefined) ??
            (ts.isIdentifier(n.name) ? n.name.text : undefined)) === 'raw'
        )
          readers.push(at(n));
        ts.forEachChild(n, visit);
      };
      visit(sf);
    }
    assert.deepEqual(readers, []);
  });

  it('rule 5: no new folder-level cycle inside src/engine (issue 16: the known ones only shrink)', () => {
    const g = folderGraph();
    const nodes = [...g.keys()].sort();
    const comp = components(nodes, n => [...(g.get(n)?.keys() ?? [])].sort());
    const cycleEdges = new Map<string, Edge[]>();
    for (const [a, m] of g)
      for (const [b, why] of m) if (comp.get(a) === comp.get(b)) cycleEdges.set(`${a} → ${b}`, why);
    const known = new Set(KNOWN_CYCLE_EDGES);
    const added = [...cycleEdges.keys()]
      .filter(k => !known.has(k))
      .map(k => `${k}: ${cycleEdges.get(k)!.map(show).join('; ')}`);
    assert.deepEqual(
      added,
      [],
      'a new folder-level cycle edge inside src/engine: import the shared piece from a lower folder instead',
    );
    const gone = KNOWN_CYCLE_EDGES.filter(k => !cycleEdges.has(k));
    assert.deepEqual(gone, [], 'these cycle edges are gone: delete them from KNOWN_CYCLE_EDGES');
  });
});
