/**
 * One benchmark size, in its own process so that peak memory (maxRSS) belongs to it alone. Prints one JSON
 * line: parse time, rules, peak RSS, and per-packet trace times with and without why-not explanations.
 */
import { writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { parseIptables, tracePacket } from '../src/engine/api.ts';
import { generateKubeProxyDump, serviceAt } from './generate.ts';

const [services, endpoints, out] = [Number(process.argv[2]), Number(process.argv[3]), process.argv[4]];
const text = generateKubeProxyDump(services, endpoints);
if (out) writeFileSync(out, text);
const rssBefore = process.resourceUsage().maxRSS;
const parseMs: number[] = [];
let rs = parseIptables(text);
for (let i = 0; i < 3; i++) {
  const t0 = performance.now();
  rs = parseIptables(text, { file: 'bench.rules' });
  parseMs.push(performance.now() - t0);
}
const node = { addresses: ['172.18.0.4'] };
const packets = Array.from({ length: 1000 }, (_, k) => {
  const s = serviceAt((k * 7919) % services, endpoints);
  return { protocol: 'tcp', src: `172.18.${(k >> 8) & 255}.${k & 255}`, dst: s.clusterIP, dport: s.port };
});
function timeTraces(explain: boolean): { perPacketMs: number; outcomes: number } {
  let outcomes = 0;
  const t0 = performance.now();
  for (const p of packets) {
    const r = tracePacket(rs, p, { node, explain });
    if (!r.ok) throw new Error(r.error);
    outcomes += r.trace.outcomes.length;
  }
  return { perPacketMs: (performance.now() - t0) / packets.length, outcomes };
}
timeTraces(false); // warm-up: JIT and the lazily built chain indexes
const fast = timeTraces(false);
const explained = timeTraces(true);
parseMs.sort((a, b) => a - b);
console.log(
  JSON.stringify({
    services,
    endpoints,
    rules: rs.ruleCount,
    megabytes: +(text.length / 1048576).toFixed(1),
    parseMedianMs: +parseMs[1]!.toFixed(0),
    errors: rs.diagnostics.filter((d) => d.severity === 'error').length,
    traceMsPerPacket: +fast.perPacketMs.toFixed(4),
    traceWhyNotMsPerPacket: +explained.perPacketMs.toFixed(4),
    outcomesPerPacket: fast.outcomes / packets.length,
    peakRssMB: Math.round(process.resourceUsage().maxRSS / 1024),
    rssBeforeParseMB: Math.round(rssBefore / 1024),
  }),
);
