/**
 * The diff benchmark (`npm run bench` runs it last; `node --import tsx bench/diff-bench.ts` alone): two
 * 320k-rule kube-proxy dumps (10k ClusterIP Services × 10 endpoints) that differ in exactly 10 Services,
 * each of which lost its last endpoint. The engine must compare them in under 10 s and name exactly those
 * 10 Services. Timing is measured on the esbuild bundle in its own process; the figures are printed, and a
 * wrong list of Services is reported as a failure.
 *
 * Then issue 18's worst cases (bench/diff-variants.ts) on the same 320k-rule dump, each in its own process
 * stopped after WORST_TIMEOUT_MS: time (wall and CPU, read and parse included), peak RSS, and whether the
 * answer is exact (proven, never approximate) and the expected one; the target is ≤ 5 s and exact.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { dropLastEndpoint } from './diff-measure.ts';
import { generateKubeProxyDump, serviceAt } from './generate.ts';
import { atMost, target } from './targets.ts';
import { WORST_CASES } from './diff-variants.ts';

const SERVICES = 10000;
const ENDPOINTS = 10;
const BUDGET_MS = 10_000;
const WORST_BUDGET_MS = 5_000;
const WORST_TIMEOUT_MS = Number(process.env.DIFF_WORST_TIMEOUT_MS ?? 60_000);
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
  // `node --import tsx bench/diff-bench.ts --worst`: the worst cases alone.
  if (process.argv.includes('--worst')) return worstCases(measure, oldText, outDir);
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
  worstCases(measure, oldText, outDir);
}

/** Issue 18 item 3: each worst case timed in its own process, with whether its answer is exact and right. */
function worstCases(measure: string, base: string, outDir: string): void {
  console.log(
    `\ndiff worst cases (issue 18 item 3; ${SERVICES} Services × ${ENDPOINTS} endpoints; target ≤ 5 s and exact)\n`,
  );
  console.log(
    'case | rules | wall ms (read+parse+diff) | diff ms | CPU ms | peak RSS MB | classes traced | verdict | exact | target',
  );
  for (const [name, c] of Object.entries(WORST_CASES)) {
    const oldFile = join(outDir, 'diff-worst-old.rules');
    const newFile = join(outDir, 'diff-worst-new.rules');
    writeFileSync(oldFile, c.old(base));
    writeFileSync(newFile, c.new(base));
    const r = spawnSync(process.execPath, [measure, '--measure', oldFile, newFile], {
      encoding: 'utf8',
      maxBuffer: 1 << 20,
      timeout: WORST_TIMEOUT_MS,
    });
    const what = `diff worst case, ${name} (320k rules, read + parse + compare), exact`;
    if (r.status !== 0) {
      const why = r.signal
        ? `stopped after ${WORST_TIMEOUT_MS / 1000} s`
        : `failed: ${r.stderr.trim().split('\n').pop()}`;
      console.log(`${name} | | | | | | | ${why} | | NOT met`);
      target(what, false, why);
      continue;
    }
    const row = JSON.parse(r.stdout.trim().split('\n').pop()!) as {
      rules: number[];
      totalMs: number;
      diffMs: number;
      cpuMs: number;
      peakRssMB: number;
      classesTraced: number;
      verdict: string;
      approximate: boolean;
      identical: boolean;
    };
    const exact = !row.approximate && (row.verdict === 'identical') === c.same;
    const met = exact && row.totalMs <= WORST_BUDGET_MS;
    const figures = `CPU ${row.cpuMs} ms, peak ${row.peakRssMB} MB, ${row.classesTraced} classes, ${row.verdict}`;
    if (!exact)
      target(what, false, `${row.approximate ? 'approximate' : 'WRONG answer'}; ${row.totalMs} ms; ${figures}`);
    else atMost(what, row.totalMs, WORST_BUDGET_MS, 'ms', figures);
    console.log(
      [
        name,
        row.rules.join('/'),
        row.totalMs,
        row.diffMs,
        row.cpuMs,
        row.peakRssMB,
        row.classesTraced,
        row.verdict,
        row.approximate ? 'approximate' : (row.verdict === 'identical') === c.same ? 'exact' : 'WRONG',
        met ? 'met' : `NOT met${exact ? ` (${(row.totalMs / WORST_BUDGET_MS).toFixed(1)}× the budget)` : ''}`,
      ].join(' | '),
    );
  }
}

if (process.argv[1]?.endsWith('diff-bench.ts')) void runDiffBench();
