/** Runs the CLI in-process and captures what it prints. */
import { run } from '../../src/cli/main.ts';

export interface CliResult {
  readonly code: number;
  readonly out: string[];
  readonly err: string[];
}

export function cli(...argv: string[]): CliResult {
  const out: string[] = [];
  const err: string[] = [];
  const code = run(argv, { out: l => out.push(l), err: l => err.push(l) });
  return { code, out, err };
}
