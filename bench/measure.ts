/**
 * One benchmark size, in its own process so that peak memory (maxRSS) belongs to it alone. Reads the dump
 * from disk and prints one JSON line: parse time (rules compiled on demand, as the CLI and the editor
 * read), the time to compile and validate every rule, peak RSS after parsing, and per-packet trace times
 * with and without why-not explanations.
 */
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { type Ruleset, parseIptables, tracePacket, validateRules } from '../src/engine/api.ts';
import { serviceAt } from './generate.ts';

const [file, services, endpoints] = [process.argv[2]!, Number(process.argv[3]), Number(process.argv[4])];
const text = readFileSync(file, 'utf8');
const rssAfterRead = process.resourceUsage().maxRSS;

function timeParse(): { ms: number; rs: Ruleset } {
  const t0 = performance.now();
  const rs = parseIptables(text, { file, lazy: true });
  return { ms: performance.now() - t0, rs };
}
const first = timeParse();
let rs = first.rs;
const firstParse = first.ms;
const peakAfterParse = process.resourceUsage().maxRSS;
const parseMs: number[] = [firstParse];
for (let i = 0; i < 2; i++) {
  rs = null as unknown as Ruleset; // let the previous ruleset go before reading again
  const r = timeParse();
  parseMs.push(r.ms);
  rs = r.rs;
}
const tv = performance.now();
validateRules(rs);
const validateMs = performance.now() - tv;
const peakAfterValidate = process.resourceUsage().maxRSS;

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
    parseMedianMs: Math.round(parseMs[1]!),
    validateAllMs: Math.round(validateMs),
    errors: rs.diagnostics.filter(d => d.severity === 'error').length,
    traceMsPerPacket: +fast.perPacketMs.toFixed(4),
    traceWhyNotMsPerPacket: +explained.perPacketMs.toFixed(4),
    outcomesPerPacket: fast.outcomes / packets.length,
    rssAfterReadMB: Math.round(rssAfterRead / 1024),
    peakRssAfterParseMB: Math.round(peakAfterParse / 1024),
    peakRssAfterValidateMB: Math.round(peakAfterValidate / 1024),
  }),
);
