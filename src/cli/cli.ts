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

const code = run(process.argv.slice(2), {
  out: line => {
    if (!closed && !process.stdout.destroyed) process.stdout.write(`${line}\n`);
  },
  err: line => {
    if (!process.stderr.destroyed) process.stderr.write(`${line}\n`);
  },
});
process.exitCode = code;
