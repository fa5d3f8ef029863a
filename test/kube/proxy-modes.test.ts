/**
 * kube-proxy modes are one interface (src/engine/kube/modes/types.ts): each lives in its own folder and is
 * registered in modes/index.ts; nothing outside the modes asks which mode it is.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { PROXY_MODES } from '../../src/engine/kube/modes/index.ts';

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap(n => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? tsFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

describe('proxy modes', () => {
  it('each registered mode has its own folder under src/engine/kube/modes', () => {
    for (const m of PROXY_MODES) assert.ok(statSync(join('src/engine/kube/modes', m.name, 'mode.ts')).isFile(), m.name);
  });

  it('no code outside a mode folder branches on a mode name', () => {
    const offenders: string[] = [];
    for (const f of tsFiles('src')) {
      if (f.startsWith(join('src/engine/kube/modes'))) continue;
      readFileSync(f, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (
            /\bmode\w*\s*[!=]==\s*'(ipvs|iptables|nftables)'|'(ipvs|iptables|nftables)'\s*[!=]==\s*\w*mode/i.test(line)
          )
            offenders.push(`${f}:${i + 1}: ${line.trim()}`);
        });
    }
    // Reading a setting's value is not a branch on behaviour: settings.ts and the manifest reader validate names.
    const allowed =
      /src\/editor\/settings\.ts|src\/engine\/kube\/manifest\/read\.ts|src\/engine\/kube\/model\/build\.ts/;
    assert.deepEqual(
      offenders.filter(o => !allowed.test(o)),
      [],
    );
  });
});
