/** File reading for the CLI: errors name the file and the reason, and oversized inputs are refused. */
import { readFileSync, statSync } from 'node:fs';
import { DEFAULT_MAX_BYTES } from '../engine/api.ts';
import { UsageError } from './args.ts';

export function readTextFile(file: string, maxBytes = DEFAULT_MAX_BYTES): string {
  let size: number;
  try {
    size = statSync(file).size;
  } catch (e) {
    throw new UsageError(`${file}: cannot read: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }
  if (size > maxBytes)
    throw new UsageError(`${file}: ${(size / 1048576).toFixed(0)} MiB is above the ${maxBytes / 1048576} MiB limit`);
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    throw new UsageError(`${file}: cannot read: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }
}
