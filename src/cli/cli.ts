#!/usr/bin/env node
/** Process entry of the CLI bundle (dist/cli.js): wires `run` to argv, stdout and the exit code. */
import { run } from './main.ts';

// When the reader of our output goes away (`packetlens diff … | head -4`), writing fails with EPIPE.
// That is not an error of ours: stop writing and end quietly with the command's own exit status, as
// `git log | head` does, instead of printing an unhandled-error stack trace into a CI log.
let closed = false;
const onStreamError = (e: NodeJS.ErrnoException): void => {
  if (e.code === 'EPIPE' || e.code === 'ERR_STREAM_DESTROYED') {
    closed = true;
    process.exit(process.exitCode ?? 0);
  }
  throw e;
};
process.stdout.on('error', onStreamError);
process.stderr.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code !== 'EPIPE' && e.code !== 'ERR_STREAM_DESTROYED') throw e;
});

// Output lines are written in chunks of about 1 MB, not one write per line: `trace --packets --json` prints
// ~16 KB per packet and one write(2) each cost a tenth of its time. Pending output is written before anything
// on stderr, so the two streams keep their order.
let pending: string[] = [];
let pendingBytes = 0;
const flush = (): void => {
  if (pending.length === 0) return;
  const text = pending.join('');
  pending = [];
  pendingBytes = 0;
  if (!closed && !process.stdout.destroyed) process.stdout.write(text);
};
let code = 1;
try {
  code = run(process.argv.slice(2), {
    out: line => {
      pending.push(`${line}\n`);
      pendingBytes += line.length + 1;
      if (pendingBytes >= 1 << 20) flush();
    },
    err: line => {
      flush();
      if (!process.stderr.destroyed) process.stderr.write(`${line}\n`);
    },
  });
} finally {
  flush(); // also when run() throws: what it printed comes before the stack trace
}
process.exitCode = code;
