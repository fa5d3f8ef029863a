/**
 * The built CLI (`dist/cli.js`, what `npx packetlens` runs): esbuild builds it, then it traces the example.
 * In the slow suite (`npm run test:slow`): no unit test builds dist/ (scripts/run-tests.mjs).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
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

  it('keeps its exit statuses and stderr when the command runs in its heap-capped worker', () => {
    const usage = spawnSync(process.execPath, ['dist/cli.js', 'trace'], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(usage.status, 2);
    assert.match(usage.stderr, /trace takes one rules file/);
    const same = spawnSync(process.execPath, ['dist/cli.js', 'diff', EXAMPLE, EXAMPLE], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    assert.equal(same.status, 0, same.stderr);
  });

  it('stops with a clear message, exit 2, when an input needs more memory than its heap cap (issue 12)', () => {
    // A packet that misses 150,000 rules of INPUT: tracing it compiles every one (about 1 KB each), far above
    // a 32 MB cap and far below the default 768 MB one.
    const lines = ['*filter', ':INPUT ACCEPT [0:0]'];
    for (let i = 0; i < 150_000; i++)
      lines.push(
        `-A INPUT -s 10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}/32 -p tcp -m tcp --dport ${i % 60000} -j ACCEPT`,
      );
    lines.push('COMMIT', '');
    const file = join(mkdtempSync(join(tmpdir(), 'packetlens-heap-')), 'big.rules');
    writeFileSync(file, lines.join('\n'));
    const trace = ['dist/cli.js', 'trace', file, '--packet', 'tcp 192.168.9.9 -> 10.0.0.1:22', '--node-ip', '10.0.0.1'];
    const capped = spawnSync(process.execPath, trace, {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, PACKETLENS_HEAP_MB: '32' },
    });
    assert.equal(capped.status, 2, capped.stderr);
    assert.match(capped.stderr, /packetlens: stopped: this input needs more than 32 MB of memory/);
    const whole = spawnSync(process.execPath, trace, { cwd: ROOT, encoding: 'utf8' });
    assert.equal(whole.status, 0, whole.stderr);
    assert.match(whole.stdout, /100% {2}local/);
  });
});
