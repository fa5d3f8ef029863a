/**
 * The diff benchmark's measured half, bundled with esbuild so it measures the engine as it ships. Run as
 * `node bench/out/diff-measure.cjs --measure OLD NEW`: reads both dumps, parses them (lazily, as the CLI
 * does), compares them and prints one JSON line with the times, the classes traced and the Services the
 * report names. It also exports `dropLastEndpoint`, which derives the second dump from the first.
 */
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { diffRulesets, parseIptables } from '../src/engine/api.ts';
import { serviceAt } from './generate.ts';

/**
 * The dump kube-proxy would write after the last endpoint of each chosen Service went away: its KUBE-SEP
 * chain is gone and the KUBE-SVC chain spreads over one endpoint fewer (`1/(n-k)` probabilities).
 */
export function dropLastEndpoint(text: string, chosen: readonly number[], endpoints: number): string {
  const names = new Set(chosen.map(i => serviceAt(i, endpoints).name));
  const jumps = new Map<string, { idx: number; ep: string; svc: string; sep: string }[]>();
  const lines = text.split('\n');
  lines.forEach((l, idx) => {
    const m =
      /^-A (KUBE-SVC-\S+) -m comment --comment "(\S+) -> (\S+):8080"(?: -m statistic --mode random --probability \S+)? -j (KUBE-SEP-\S+)$/.exec(
        l,
      );
    if (!m || !names.has(m[2]!)) return;
    const list = jumps.get(m[2]!) ?? [];
    list.push({ idx, ep: m[3]!, svc: m[1]!, sep: m[4]! });
    jumps.set(m[2]!, list);
  });
  const gone = new Set<string>();
  const replace = new Map<number, string | null>();
  for (const [name, eps] of jumps) {
    const kept = eps.slice(0, -1);
    gone.add(eps[eps.length - 1]!.sep);
    replace.set(eps[eps.length - 1]!.idx, null);
    kept.forEach((e, k) => {
      const stat =
        k < kept.length - 1 ? ` -m statistic --mode random --probability ${(1 / (kept.length - k)).toFixed(11)}` : '';
      replace.set(e.idx, `-A ${e.svc} -m comment --comment "${name} -> ${e.ep}:8080"${stat} -j ${e.sep}`);
    });
  }
  const out: string[] = [];
  lines.forEach((l, idx) => {
    const r = replace.get(idx);
    if (r !== undefined) {
      if (r !== null) out.push(r);
      return;
    }
    if (l.startsWith(':KUBE-SEP-') && gone.has(l.slice(1, l.indexOf(' ')))) return;
    if (l.startsWith('-A KUBE-SEP-') && gone.has(l.slice(3, l.indexOf(' ', 3)))) return;
    out.push(l);
  });
  return out.join('\n');
}

function measure(oldFile: string, newFile: string): void {
  const t0 = performance.now();
  const texts = [readFileSync(oldFile, 'utf8'), readFileSync(newFile, 'utf8')];
  const t1 = performance.now();
  const [a, b] = texts.map((t, i) => parseIptables(t, { file: i === 0 ? oldFile : newFile, lazy: true }));
  const t2 = performance.now();
  const r = diffRulesets(a!, b!, { node: { addresses: ['172.18.0.4'] } });
  const t3 = performance.now();
  if (!r.ok) throw new Error(r.error);
  const cpu = process.cpuUsage();
  console.log(
    JSON.stringify({
      rules: [a!.ruleCount, b!.ruleCount],
      readMs: Math.round(t1 - t0),
      parseMs: Math.round(t2 - t1),
      diffMs: Math.round(t3 - t2),
      totalMs: Math.round(t3 - t0),
      changedChains: r.report.changedChains.length,
      classesTraced: r.report.classesTraced,
      changes: r.report.changes.length,
      services: r.report.services,
      summary: r.report.summary,
      verdict: r.report.verdict,
      identical: r.report.identical,
      approximate: r.report.approximate,
      cpuMs: Math.round((cpu.user + cpu.system) / 1000),
      peakRssMB: Math.round(process.resourceUsage().maxRSS / 1024),
    }),
  );
}

if (process.argv[2] === '--measure') measure(process.argv[3]!, process.argv[4]!);
