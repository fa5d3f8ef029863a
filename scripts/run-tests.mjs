// Runs every test/**/*.test.ts with Node's test runner (TypeScript through tsx). Node 20's runner does
// not expand globs itself, so the files are listed here. Extra arguments are passed to `node --test`.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function find(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (name === 'fixtures' || name === 'node_modules') continue;
    if (statSync(p).isDirectory()) find(p, out);
    else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

const files = find('test').sort();
const r = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', ...process.argv.slice(2), ...files], { stdio: 'inherit' });
process.exit(r.status ?? 1);
