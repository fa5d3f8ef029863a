/**
 * One nftables parse measurement in its own process (peak memory belongs to it alone): reads a ruleset
 * file, parses it with the front end its content calls for (NFT_PARSES times, default once: repeated parses
 * of a 40 MB script in one process measure the collector more than the parser), and prints one JSON line
 * with the median time, the first (cold) time, rules, chains, set elements and diagnostics; then the lowering to
 * the model and the trace time per packet for 1,000 packets to addresses of the `service-ips` map (each one
 * a numgen branch over the Service's endpoints), without and with why-not.
 */
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import type { NftParseResult } from '../src/engine/nftables/ast.ts';
import { parseNftAny } from '../src/engine/nftables/parse-nft.ts';
import { lowerNftRuleset } from '../src/engine/nftables/lower.ts';
import { tracePacket } from '../src/engine/eval/trace.ts';
import type { PacketInput } from '../src/engine/eval/packet-spec.ts';

const file = process.argv[2] as string;
const text = readFileSync(file, 'utf8');
const times: number[] = [];
let r: NftParseResult | null = null;
let format = '';
const parses = Math.max(1, Number(process.env.NFT_PARSES ?? 1));
for (let i = 0; i < parses; i++) {
  r = null; // let the previous AST go before reading again
  const t0 = performance.now();
  const res = parseNftAny(text);
  times.push(performance.now() - t0);
  r = res;
  format = res.format;
}
const rs = (r as NftParseResult).ruleset;
const t1 = performance.now();
const model = lowerNftRuleset(rs, text, file, []);
const lowerMs = performance.now() - t1;
// Packets to the Services' own addresses and ports, spread over the whole map.
const svc = rs.tables.flatMap(t => t.sets.filter(s => s.name === 'service-ips')).flatMap(s => s.elements);
const packets: PacketInput[] = [];
for (let i = 0; i < 1000 && svc.length; i++) {
  const e = svc[(i * 7919) % svc.length]!;
  const key = e.kind === 'mapping' ? e.key : e.kind === 'elem' && e.value.kind === 'mapping' ? e.value.key : e;
  if (key.kind !== 'concat') continue;
  const [a, , p] = key.items;
  if (a?.kind === 'value' && p?.kind === 'value')
    packets.push({
      protocol: 'tcp',
      src: '10.0.0.2',
      dst: String(a.value),
      dport: Number(p.value),
      from: 'outside',
      in: 'eth0',
    });
}
const traceMs = (explain: boolean): number => {
  const t0 = performance.now();
  for (const pkt of packets) tracePacket(model, pkt, { node: { addresses: ['172.18.0.4'] }, explain });
  return packets.length ? (performance.now() - t0) / packets.length : 0;
};
traceMs(false); // warm-up: the map index and the JIT
const tracePerPacketMs = traceMs(false);
const traceWhyNotPerPacketMs = traceMs(true);
const count = (f: (t: (typeof rs.tables)[number]) => number) => rs.tables.reduce((n, t) => n + f(t), 0);
console.log(
  JSON.stringify({
    file,
    format,
    megabytes: Number((text.length / 1048576).toFixed(1)),
    chains: count(t => t.chains.length),
    rules: count(t => t.chains.reduce((n, c) => n + c.rules.length, 0)),
    setElements: count(t => t.sets.reduce((n, s) => n + s.elements.length, 0)),
    diagnostics: (r as NftParseResult).diagnostics.length,
    firstParseMs: Math.round(times[0] as number),
    parseMedianMs: Math.round([...times].sort((a, b) => a - b)[times.length >> 1] as number),
    lowerMs: Math.round(lowerMs),
    tracedPackets: packets.length,
    tracePerPacketMs: Number(tracePerPacketMs.toFixed(3)),
    traceWhyNotPerPacketMs: Number(traceWhyNotPerPacketMs.toFixed(3)),
    peakRssMB: Math.round(process.resourceUsage().maxRSS / 1024),
  }),
);
