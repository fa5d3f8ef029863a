/**
 * `npm run bench` part 3: synthesis of 10k Services × 10 endpoints from manifests (bench/synth-measure.ts),
 * measured on the esbuild bundle in its own process.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { atMost } from './targets.ts';

/** Runs the measurement on the esbuild bundle in its own process and prints the figures. */
export async function runSynthBench(): Promise<void> {
  const outDir = join('bench', 'out');
  mkdirSync(outDir, { recursive: true });
  const bundle = join(outDir, 'synth-measure.cjs');
  await build({
    entryPoints: ['bench/synth-measure.ts'],
    outfile: bundle,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    logLevel: 'warning',
  });
  const r = spawnSync(process.execPath, [bundle, '--measure', '10000', '10'], { encoding: 'utf8' });
  if (r.status !== 0) {
    console.error(r.stderr);
    process.exitCode = 1;
    return;
  }
  const row = JSON.parse(r.stdout.trim().split('\n').pop()!) as Record<string, number>;
  console.log(
    '\npacketlens synth bench (10,000 Services × 10 endpoints as manifests → kube-proxy iptables rules for one node)\n',
  );
  console.log(
    `manifests ${row.manifestMB} MB, read YAML ${row.readYamlMs} ms; model ${row.modelMs} ms + kube-proxy rules ${row.rulesMs} ms + iptables-save view ${row.renderMs} ms = synthesize ${row.synthesizeMs} ms (${row.rules} rules, ${row.dumpMB} MB)`,
  );
  console.log(JSON.stringify(row));
  atMost(
    `read ${row.manifestMB} MB of manifests (10k Services + EndpointSlices) with positions`,
    row.readYamlMs ?? NaN,
    1000,
    'ms',
  );
  atMost(
    'synthesize 10k Services × 10 endpoints (model + rules + iptables-save view)',
    row.synthesizeMs ?? NaN,
    1000,
    'ms',
  );
}
