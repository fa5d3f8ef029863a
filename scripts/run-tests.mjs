// Runs the test files in ONE Node process (TypeScript through tsx): test/entry.mjs imports the files and
// node:test runs what they register. One process instead of one per file: the time was process start-up.
//
// Suites (README, "Development"):
//   node scripts/run-tests.mjs           the unit suite (`npm test`): every test/**/*.test.ts except *.slow.test.ts
//   node scripts/run-tests.mjs --slow    the slow suite (`npm run test:slow`): every test/**/*.slow.test.ts —
//                                        whole-dump diff evidence (kernel fates, brute-force grids, benchmark
//                                        shape) and the bundle build; .ci/run runs it after the unit suite
//   node scripts/run-tests.mjs FILE…     only the files named (either suite)
// The real-editor suite (test/e2e, `npm run test:e2e`) and the live kernel oracle (`npm run test:kernel`) are
// separate. No unit test may build dist/: that is the slow suite's test/cli/bundle.slow.test.ts.
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

const args = process.argv.slice(2);
const slow = args.includes('--slow');
const named = args.filter(a => a.endsWith('.ts'));
const flags = args.filter(a => !a.endsWith('.ts') && a !== '--slow');
const isSlow = f => f.endsWith('.slow.test.ts');
const files = (named.length ? named : find('test').filter(f => isSlow(f) === slow)).map(f => resolve(f)).sort();
// A watchdog: a failed test that leaves a worker or a timer alive keeps node:test's process from ever
// exiting (it prints its summary at exit), and a landing gate once hung so for 15 minutes. The failure
// itself is printed as it happens; past the limit the run is stopped and fails. (--test-force-exit is no
// help here: with one entry file importing the others it exits after the first file's tests.)
const LIMIT_MS = 20 * 60 * 1000;
const r = spawnSync(process.execPath, ['--import', 'tsx', '--test-reporter=spec', ...flags, 'test/entry.mjs'], {
  stdio: 'inherit',
  env: { ...process.env, PACKETLENS_TEST_FILES: JSON.stringify(files) },
  timeout: LIMIT_MS,
  killSignal: 'SIGKILL',
});
if (r.error || r.signal) {
  console.error(
    `run-tests: the test process did not end within ${LIMIT_MS / 60000} minutes (${r.signal ?? r.error?.message}); stopped. A test above probably left a worker or timer alive after failing.`,
  );
  process.exit(1);
}
process.exit(r.status ?? 1);
