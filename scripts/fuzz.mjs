#!/usr/bin/env node
// The long fuzz campaign (issue 12, deliverable 4): `npm run fuzz -- [--inputs 1000000] [--size 2000]
// [--minutes M] [--reset]`. Inputs come in chunks (test/fuzz/campaign.ts), each a fixed seed, each run in
// its own process under a watchdog (a hang or a crash is a finding, not the end of the campaign). The
// state in .cache/fuzz/state.json lets a stopped campaign resume where it was; failures are saved in
// .cache/fuzz/failures/. Run it niced on a shared machine: `nice -n 19 npm run fuzz -- --minutes 60`.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const target = Number(opt('inputs', '1000000'));
const size = Number(opt('size', '2000'));
const minutes = Number(opt('minutes', 'Infinity'));
const OUT = '.cache/fuzz';
const STATE = join(OUT, 'state.json');
mkdirSync(OUT, { recursive: true });
const fresh = { nextChunk: 0, inputs: 0, ms: 0, chunks: 0, hangs: [], failures: [], started: new Date().toISOString() };
const state = existsSync(STATE) && !args.includes('--reset') ? JSON.parse(readFileSync(STATE, 'utf8')) : fresh;
const deadline = Date.now() + minutes * 60_000;
const save = () =>
  writeFileSync(STATE, `${JSON.stringify({ ...state, updated: new Date().toISOString() }, null, 1)}\n`);

while (state.inputs < target && Date.now() < deadline) {
  const chunk = state.nextChunk;
  const t0 = Date.now();
  const r = spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      '--max-old-space-size=1024',
      'test/fuzz/campaign.ts',
      '--chunk',
      String(chunk),
      '--size',
      String(size),
      '--out',
      OUT,
    ],
    {
      encoding: 'utf8',
      timeout: 20 * 60_000,
      maxBuffer: 64 << 20,
    },
  );
  const line = (r.stdout ?? '').trim().split('\n').pop() ?? '';
  if (r.status === 0 && line.startsWith('{')) {
    const res = JSON.parse(line);
    state.inputs += res.inputs;
    state.ms += res.ms;
    for (const f of res.failures) state.failures.push({ chunk, ...f });
  } else {
    // A crash (out of memory, an exception outside the property) or the watchdog: the chunk is a finding.
    state.hangs.push({
      chunk,
      status: r.status,
      signal: r.signal,
      ms: Date.now() - t0,
      stderr: (r.stderr ?? '').slice(-800),
    });
  }
  state.chunks++;
  state.nextChunk = chunk + 1;
  save();
  console.log(
    `chunk ${chunk}: ${state.inputs} inputs so far, ${state.failures.length} failures, ${state.hangs.length} crashes/hangs, ${(state.ms / 1000).toFixed(0)} s of checking`,
  );
}
console.log(
  `fuzz campaign: ${state.inputs} inputs in ${state.chunks} chunks (${(state.ms / 3600000).toFixed(2)} h of checking); ${state.failures.length} failures, ${state.hangs.length} crashes or hangs; state in ${STATE}`,
);
process.exit(state.failures.length || state.hangs.length ? 1 : 0);
