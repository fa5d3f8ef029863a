/** Reads manifest files and directories (recursively: *.yaml, *.yml, *.json) for the kube commands. */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from './args.ts';

const EXT = /\.(ya?ml|json)$/i;

export function readManifestFiles(paths: readonly string[]): { file: string; text: string }[] {
  const out: { file: string; text: string }[] = [];
  const visit = (p: string, explicit: boolean) => {
    let st;
    try {
      st = statSync(p);
    } catch (e) {
      throw new UsageError(`${p}: cannot read: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
    }
    if (st.isDirectory()) {
      for (const name of readdirSync(p).sort()) {
        if (name.startsWith('.') || name === 'node_modules') continue;
        visit(join(p, name), false);
      }
    } else if (explicit || EXT.test(p)) {
      if (st.size > 64 * 1024 * 1024)
        throw new UsageError(`${p}: ${(st.size / 1048576).toFixed(0)} MiB is too large for a manifest`);
      out.push({ file: p, text: readFileSync(p, 'utf8') });
    }
  };
  for (const p of paths) visit(p, true);
  if (out.length === 0) throw new UsageError(`no manifest files (*.yaml, *.yml, *.json) in ${paths.join(', ')}`);
  return out;
}
