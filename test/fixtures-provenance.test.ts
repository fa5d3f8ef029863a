/**
 * Every fixture names where its truth came from (ARCHITECTURE.md, "every fixture says where its expected
 * values came from"): test/fixtures/README.md indexes every folder of test/fixtures, each folder has its own
 * README.md or SOURCE.md, and each member of a folder is named there, has its own README.md / SOURCE.md, or
 * carries a `source` (kube-proxy cases: `test`) field in a JSON file of its own.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ROOT } from './helpers/fixtures.ts';

const FIXTURES = join(ROOT, 'test', 'fixtures');
const DOCS = ['README.md', 'SOURCE.md'];
const isDir = (p: string) => statSync(p).isDirectory();
const docsOf = (dir: string) =>
  DOCS.map(n => join(dir, n))
    .filter(existsSync)
    .map(p => readFileSync(p, 'utf8'))
    .join('\n');

/** Whether a member folder states its origin itself: its own README/SOURCE, or a JSON with `source`/`test`. */
function statesOrigin(dir: string): boolean {
  if (DOCS.some(n => existsSync(join(dir, n)))) return true;
  return readdirSync(dir)
    .filter(n => n.endsWith('.json'))
    .some(n => {
      try {
        const v = JSON.parse(readFileSync(join(dir, n), 'utf8')) as Record<string, unknown>;
        return typeof v.source === 'string' || typeof v.test === 'string';
      } catch {
        return false;
      }
    });
}

const collections = readdirSync(FIXTURES).filter(n => isDir(join(FIXTURES, n)));

describe('fixture provenance (test/fixtures/README.md)', () => {
  it('the index names every fixture folder, and each has its own README.md or SOURCE.md', () => {
    assert.ok(collections.length >= 8, collections.join());
    const index = readFileSync(join(FIXTURES, 'README.md'), 'utf8');
    assert.deepEqual(
      collections.filter(c => !index.includes(`\`${c}/\``)),
      [],
      'folders missing from test/fixtures/README.md',
    );
    assert.deepEqual(
      collections.filter(c => docsOf(join(FIXTURES, c)) === ''),
      [],
      'folders without README.md or SOURCE.md',
    );
  });

  it('every member of a fixture folder names its origin', () => {
    const silent: string[] = [];
    for (const c of collections) {
      const dir = join(FIXTURES, c);
      const docs = docsOf(dir);
      for (const m of readdirSync(dir)) {
        if (DOCS.includes(m)) continue;
        const p = join(dir, m);
        const named = new RegExp(`(^|[^\\w.-])${m.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}($|[^\\w-])`, 'm').test(docs);
        if (!named && !(isDir(p) && statesOrigin(p))) silent.push(`${c}/${m}`);
      }
    }
    assert.deepEqual(silent, [], 'name these in their folder README.md (or give them their own)');
  });
});
