// Runs every test/**/*.test.ts in ONE Node process (TypeScript through tsx): test/entry.mjs imports the
// files and node:test runs what they register. One process instead of one per file takes `npm test`'s
// test phase from ~29 s to ~9 s on the 2-core machine; the time was process start-up, not testing.
// `npm test -- test/engine/foo.test.ts …` runs only the files named. The real-editor suite (test/e2e,
// `npm run test:e2e`) and the kernel oracle (`npm run test:kernel`) are separate.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

function find(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (name === 'fixtures' || name === 'node_modules' || name === 'e2e') continue;
    if (statSync(p).isDirectory()) find(p, out);
    else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

const named = process.argv.slice(2).filter(a => a.endsWith('.ts'));
const flags = process.argv.slice(2).filter(a => !a.endsWith('.ts'));
const files = (named.length ? named : find('test')).map(f => resolve(f)).sort();
const r = spawnSync(process.execPath, ['--import', 'tsx', '--test-reporter=spec', ...flags, 'test/entry.mjs'], {
  stdio: 'inherit',
  env: { ...process.env, PACKETLENS_TEST_FILES: JSON.stringify(files) },
});
process.exit(r.status ?? 1);
