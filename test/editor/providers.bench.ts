/**
 * Measures the editor features' logic on the 320k-rule kube-proxy dump (10,000 Services × 10 endpoints,
 * bench/generate.ts), without VS Code: what each provider computes after the first parse.
 *   node --import tsx test/editor/providers.bench.ts [services] [endpoints]
 */
import { generateKubeProxyDump } from '../../bench/generate.ts';
import { chainLenses } from '../../src/editor/chain-lens.ts';
import { dumpDiagnosticSteps } from '../../src/editor/diagnostics.ts';
import { traceDiagram } from '../../src/editor/diagram.ts';
import { analyzeDump } from '../../src/editor/dump-index.ts';
import { foldingRanges } from '../../src/editor/folding.ts';
import { hoverAt } from '../../src/editor/hover/hover.ts';
import { chainAt, referencesOf, renameChain } from '../../src/editor/navigation.ts';
import { fieldsFromText } from '../../src/editor/packet-fields.ts';
import { suggestPackets } from '../../src/editor/packet-suggest.ts';
import { traceText } from '../../src/editor/run-trace.ts';
import { outline } from '../../src/editor/symbols.ts';
import { lensTitle, traceLineVerdicts } from '../../src/editor/trace-lens.ts';

const services = Number(process.argv[2] ?? 10000);
const endpoints = Number(process.argv[3] ?? 10);
const rows: [string, string][] = [];

function time<T>(label: string, f: () => T, note = (_: T) => ''): T {
  const t0 = performance.now();
  const v = f();
  const ms = performance.now() - t0;
  const n = note(v);
  rows.push([label, `${ms.toFixed(1)} ms${n ? `  (${n})` : ''}`]);
  return v;
}

const text = time(
  'generate dump',
  () => generateKubeProxyDump(services, endpoints),
  t => `${(t.length / 1048576).toFixed(1)} MB`,
);
const lines = text.split('\n');
const idx = time(
  'parse (lazy) + index',
  () => analyzeDump(text, { file: 'kube.rules' }),
  i => `${i.ruleset.ruleCount.toLocaleString('en-US')} rules, ${i.lines.lineCount.toLocaleString('en-US')} lines`,
);
time(
  'references of every chain (first use)',
  () => idx.references(),
  m => `${[...m.values()].reduce((n, t) => n + t.size, 0).toLocaleString('en-US')} chains referenced`,
);
time(
  'CodeLens model: chain lenses (first, once per parse)',
  () => chainLenses(idx),
  l => `${l.length.toLocaleString('en-US')} chains`,
);
time(
  'CodeLens provider: lens objects from the cached model',
  () =>
    chainLenses(idx).flatMap(l => [
      { range: l.range, lens: l, part: 'refs' },
      { range: l.range, lens: l, part: 'trace' },
    ]),
  l => `${l.length.toLocaleString('en-US')} lenses`,
);

const find = (needle: string, from = 0) => {
  for (let i = from; i < lines.length; i++) if (lines[i]!.includes(needle)) return i;
  throw new Error(needle);
};
const lastSvcDecl = lines
  .map((l, i) => (l.startsWith(':KUBE-SVC-') ? i : -1))
  .filter(i => i >= 0)
  .pop()!;
const svcName = lines[lastSvcDecl]!.slice(1).split(' ')[0]!;
const hoverAtWord = (label: string, line: number, word: string) =>
  time(
    label,
    () => hoverAt(idx, line, lines[line]!.indexOf(word) + 1),
    h => `${h?.markdown.length ?? 0} chars`,
  );
hoverAtWord('hover: Service chain (10 endpoint shares)', lastSvcDecl, 'KUBE-SVC');
hoverAtWord('hover: same chain again', lastSvcDecl, 'KUBE-SVC');
const sepRule = find('-j DNAT', lines.length - 200);
hoverAtWord('hover: endpoint chain name', sepRule, 'KUBE-SEP');
hoverAtWord('hover: DNAT target', sepRule, 'DNAT');
const statRule = find('--probability', lines.length - 200);
hoverAtWord('hover: random rule (branch, share)', statRule, '--probability');
const svcRule = find('-A KUBE-SERVICES -d', find('-A KUBE-SERVICES -d') + Math.floor(services / 2));
hoverAtWord('hover: KUBE-SERVICES rule', svcRule, '--dport');

const PACKET = 'tcp 203.0.113.10 -> 10.96.39.15:80';
const trace = time(
  'trace with why-not (explain)',
  () => traceText(idx, PACKET, { addresses: ['192.0.2.1'] }),
  r =>
    r.ok
      ? `${r.trace.outcomes.length} outcomes, ${r.trace.outcomes.reduce((n, o) => n + o.misses.length, 0).toLocaleString('en-US')} misses`
      : r.error,
);
if (!trace.ok) throw new Error(trace.error);
const verdicts = time(
  'CodeLens model: trace lenses',
  () => traceLineVerdicts(trace.trace),
  v => `${v.size.toLocaleString('en-US')} lines`,
);
time(
  'CodeLens titles for those lines',
  () => [...verdicts.values()].map(v => lensTitle(v, trace.trace.outcomes.length)).length,
);
time(
  'flow diagram model',
  () => traceDiagram(trace.trace, 'kube.rules', PACKET, fieldsFromText(PACKET)!),
  d => `${d.outcomes.length} outcomes`,
);
time(
  'packet suggestions for "10.96.3"',
  () => suggestPackets(idx, 'tcp 1.2.3.4 -> 10.96.3', 40),
  s => `${s.length}`,
);
time(
  'outline',
  () => outline(idx),
  s => `${s.reduce((n, t) => n + t.children.length, 0).toLocaleString('en-US')} chain symbols`,
);
time(
  'folding',
  () => foldingRanges(idx),
  f => `${f.length.toLocaleString('en-US')} folds`,
);
const at = chainAt(idx, lastSvcDecl, 2)!;
time(
  'find references of a chain (text scan of the table)',
  () => referencesOf(idx, at, true),
  r => `${r.length}`,
);
time(
  'rename edits for a chain',
  () => renameChain(idx, lastSvcDecl, 2, 'KUBE-SVC-RENAMED'),
  r => (r.ok ? `${r.edits.length} edits` : r.message),
);
{
  // What the extension does: the same work in steps; the longest step is how long hovers may wait.
  const steps = dumpDiagnosticSteps(idx, { maxRulesForFullCheck: 1e9, maxDiagnostics: 5000 });
  let longest = 0;
  let n = 0;
  const t0 = performance.now();
  for (;;) {
    const s0 = performance.now();
    const r = steps.next();
    longest = Math.max(longest, performance.now() - s0);
    n++;
    if (r.done) {
      rows.push([
        'diagnostics: validate every rule + lint',
        `${(performance.now() - t0).toFixed(1)} ms  (${r.value.diagnostics.length} diagnostics, ${n} steps, longest step ${longest.toFixed(1)} ms)`,
      ]);
      break;
    }
  }
}
const mem = process.memoryUsage();

const width = Math.max(...rows.map(r => r[0].length));
console.log(
  `editor logic on ${services} Services × ${endpoints} endpoints (${svcName} hovered), Node ${process.version}`,
);
for (const [k, v] of rows) console.log(`${k.padEnd(width)}  ${v}`);
console.log(
  `${'heap used / rss'.padEnd(width)}  ${(mem.heapUsed / 1048576).toFixed(0)} / ${(mem.rss / 1048576).toFixed(0)} MB`,
);
