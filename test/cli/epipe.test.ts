// The CLI's output pipe closing early (`packetlens trace … | head -c 100`) must end the process quietly:
// no "Error: write EPIPE" stack trace on stderr, which in a CI log reads like a crash (issue 15).
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

const ROOT = join(import.meta.dirname, '..', '..');
const EXAMPLE = join(ROOT, 'examples', 'seed-003', 'node-myk8s-worker.rules');

describe('the CLI process when its output pipe closes', () => {
  it('stops quietly, without an EPIPE stack trace', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'packetlens-epipe-'));
    try {
      const packets = join(dir, 'p.jsonl');
      const line = '{"protocol":"tcp","src":"172.18.0.100","dst":"172.18.255.200","dport":80}\n';
      writeFileSync(packets, line.repeat(3000));
      const child = spawn(
        process.execPath,
        [
          '--import',
          'tsx',
          join(ROOT, 'src', 'cli', 'cli.ts'),
          'trace',
          EXAMPLE,
          '--packets',
          packets,
          '--node-ip',
          '172.18.0.4',
          '--json',
        ],
        { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stderr = '';
      child.stderr.setEncoding('utf8');
      child.stderr.on('data', (d: string) => (stderr += d));
      // Read the first chunk, then close our end of the pipe, as `head -c 100` does.
      child.stdout.once('data', () => child.stdout.destroy());
      const status = await new Promise<number | null>(resolve => child.on('close', c => resolve(c)));
      assert.doesNotMatch(stderr, /EPIPE|Unhandled|at .*\.js/, stderr);
      assert.equal(status, 0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
