/**
 * The built CLI (`dist/cli.js`, what `npx packetlens` runs): esbuild builds it, then it traces the example.
 * In the slow suite (`npm run test:slow`): no unit test builds dist/ (scripts/run-tests.mjs).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ROOT } from '../helpers/fixtures.ts';

const EXAMPLE = join(ROOT, 'examples', 'seed-003', 'node-myk8s-worker.rules');

describe('the built CLI (dist/cli.js, what `npx packetlens` runs)', () => {
  it('runs from the bundle', () => {
    const b = spawnSync(process.execPath, ['esbuild.mjs'], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(b.status, 0, b.stderr);
    const r = spawnSync(
      process.execPath,
      [
        'dist/cli.js',
        'trace',
        EXAMPLE,
        '--packet',
        'tcp 172.18.0.100 -> 172.18.255.200:80',
        '--node-ip',
        '172.18.0.4',
        '--json',
      ],
      { cwd: ROOT, encoding: 'utf8' },
    );
    assert.equal(r.status, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).outcomes.length, 2);
  });
});
