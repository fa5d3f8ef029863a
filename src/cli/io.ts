/** File reading for the CLI: errors name the file and the reason, and oversized inputs are refused. */
import { isAscii } from 'node:buffer';
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
    // An ASCII file (every iptables-save dump without UTF-8 comments) decodes as latin1 into the same
    // string, 3-4 times faster than UTF-8 and into one byte per character instead of two.
    const bytes = readFileSync(file);
    return bytes.toString(isAscii(bytes) ? 'latin1' : 'utf8');
  } catch (e) {
    throw new UsageError(`${file}: cannot read: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }
}
