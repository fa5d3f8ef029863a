/**
 * Policy moved out of the VS Code glue (issue 16): which names are dumps (one copy, agreeing with
 * package.json's language contribution), how a diff side is labelled, and the promise cache the manifests
 * and comparisons share.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { DUMP_DIALOG_FILTERS, DUMP_GLOB, isDumpPath, sideLabel } from '../../src/editor/dump-files.ts';
import { PromiseCache } from '../../src/editor/promise-cache.ts';

const pkg = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8'));
const language = pkg.contributes.languages.find((l: { id: string }) => l.id === 'iptables-save');

describe('dump files', () => {
  it('name dumps exactly as package.json contributes the language', () => {
    for (const ext of language.extensions as string[]) {
      assert.ok(isDumpPath(`/w/node${ext}`), ext);
      assert.ok(DUMP_GLOB.includes(`*${ext}`), ext);
      assert.ok(DUMP_DIALOG_FILTERS['iptables-save dumps']!.includes(ext.slice(1)), ext);
    }
    for (const name of language.filenames as string[]) {
      assert.ok(isDumpPath(`/etc/iptables/${name}`), name);
      assert.ok(DUMP_GLOB.includes(name), name);
    }
    for (const pattern of language.filenamePatterns as string[]) {
      assert.ok(isDumpPath(`/w/${pattern.replace('*', '-2024-05-01.txt')}`), pattern);
      assert.ok(DUMP_GLOB.includes(pattern), pattern);
    }
    assert.ok(!isDumpPath('/w/rules.yaml'));
    assert.ok(!isDumpPath('/w/iptables-save/readme.md'));
  });

  it('label a diff side by its name, and git’s sides by their ref', () => {
    assert.equal(sideLabel({ scheme: 'file', path: '/w/a/node.rules', query: '' }), 'node.rules');
    assert.equal(
      sideLabel({ scheme: 'git', path: '/w/node.rules', query: '{"path":"/w/node.rules","ref":"~"}' }),
      'node.rules (HEAD)',
    );
    assert.equal(sideLabel({ scheme: 'git', path: '/w/node.rules', query: '{"ref":""}' }), 'node.rules (index)');
    assert.equal(sideLabel({ scheme: 'git', path: '/w/node.rules', query: '{"ref":"main"}' }), 'node.rules (main)');
    assert.equal(sideLabel({ scheme: 'git', path: '/w/node.rules', query: 'not json' }), 'node.rules (git)');
    assert.equal(
      sideLabel({ scheme: 'packetlens-dump', path: '/examples/a.rules', query: '' }),
      'a.rules (packetlens-dump)',
    );
  });
});

describe('PromiseCache', () => {
  it('makes one promise per key however many ask, forgets failures, and keeps at most max entries', async () => {
    const cache = new PromiseCache<string, number>(2);
    let made = 0;
    const make = (v: number) => () => {
      made++;
      return Promise.resolve(v);
    };
    const [a, b] = await Promise.all([cache.get('a', make(1)), cache.get('a', make(2))]);
    assert.deepEqual([a, b, made], [1, 1, 1]);
    await assert.rejects(cache.get('bad', () => Promise.reject(new Error('no'))));
    await new Promise(r => setTimeout(r, 0));
    assert.equal(cache.peek('bad'), undefined);
    assert.equal(await cache.get('bad', make(3)), 3);
    await cache.get('c', make(4));
    assert.equal(cache.size, 2);
    assert.equal(cache.peek('a'), undefined, 'the oldest entry went first');
  });
});
