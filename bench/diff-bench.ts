/**
 * The diff benchmark (`npm run bench` runs it last; `node --import tsx bench/diff-bench.ts` alone): two
 * 320k-rule kube-proxy dumps (10k ClusterIP Services × 10 endpoints) that differ in exactly 10 Services,
 * each of which lost its last endpoint. The engine must compare them in under 10 s and name exactly those
 * 10 Services. Timing is measured on the esbuild bundle in its own process; the figures are printed, and a
 * wrong list of Services is reported as a failure.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { dropLastEndpoint } from './diff-measure.ts';
import { generateKubeProxyDump, serviceAt } from './generate.ts';
import { atMost, target } from './targets.ts';

const SERVICES = 10000;
const ENDPOINTS = 10;
const BUDGET_MS = 10_000;
/** Spread over the dump: first and last Services, and both ends of KUBE-SERVICES' namespaces. */
const CHANGED = [7, 1234, 2500, 3333, 4096, 5000, 6001, 7777, 8888, 9999];

export async function runDiffBench(): Promise<void> {
  const outDir = join('bench', 'out');
  mkdirSync(outDir, { recursive: true });
  const measure = join(outDir, 'diff-measure.cjs');
  await build({
    entryPoints: ['bench/diff-measure.ts'],
    outfile: measure,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    logLevel: 'warning',
  });
  const oldText = generateKubeProxyDump(SERVICES, ENDPOINTS);
  const oldFile = join(outDir, `diff-old-${SERVICES}x${ENDPOINTS}.rules`);
  const newFile = join(outDir, `diff-new-${SERVICES}x${ENDPOINTS}.rules`);
  writeFileSync(oldFile, oldText);
  writeFileSync(newFile, dropLastEndpoint(oldText, CHANGED, ENDPOINTS));
  const r = spawnSync(process.execPath, [measure, '--measure', oldFile, newFile], {
    encoding: 'utf8',
    maxBuffer: 1 << 20,
  });
  if (r.status !== 0) {
    console.error(r.stderr);
    process.exitCode = 1;
    return;
  }
  const row = JSON.parse(r.stdout.trim().split('\n').pop()!) as { services: string[]; totalMs: number } & Record<
    string,
    unknown
  >;
  const expected = CHANGED.map(i => serviceAt(i, ENDPOINTS).name).sort();
  const exact = JSON.stringify([...row.services].sort()) === JSON.stringify(expected);
  console.log(
    `\npacketlens diff bench (two kube-proxy dumps, ${SERVICES} Services × ${ENDPOINTS} endpoints, ${CHANGED.length} Services lose an endpoint)\n`,
  );
  console.log(
    'rules (old/new) | read ms | parse ms (both) | diff ms | total ms | changed chains | classes traced | changed classes | peak RSS MB',
  );
  console.log(
    [
      `${(row.rules as number[]).join('/')}`,
      row.readMs,
      row.parseMs,
      row.diffMs,
      row.totalMs,
      row.changedChains,
      row.classesTraced,
      row.changes,
      row.peakRssMB,
    ].join(' | '),
  );
  console.log(
    `\n${row.summary}; ${exact ? `exactly the ${CHANGED.length} changed Services` : `WRONG Services: ${row.services.join(', ')} (expected ${expected.join(', ')})`}; ${row.totalMs <= BUDGET_MS ? 'within' : 'OVER'} the ${BUDGET_MS / 1000} s budget`,
  );
  console.log(JSON.stringify(row));
  const what = 'diff of two 320k-rule dumps, 10 Services lose an endpoint (read + parse + compare), exact';
  if (row.approximate || !exact)
    target(what, false, `${row.approximate ? 'approximate' : 'WRONG Services'}; ${row.totalMs} ms`);
  else atMost(what, row.totalMs, 5000, 'ms', String(row.summary));
  if (!exact) process.exitCode = 1;
}

if (process.argv[1]?.endsWith('diff-bench.ts')) void runDiffBench();
