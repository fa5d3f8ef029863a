#!/usr/bin/env node
/** Process entry of the CLI bundle (dist/cli.js): wires `run` to argv, stdout and the exit code. */
import { run } from './main.ts';

const code = run(process.argv.slice(2), {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
});
process.exitCode = code;
