/**
 * One nftables parse measurement in its own process (peak memory belongs to it alone): reads a ruleset
 * file, parses it three times with the front end its content calls for, and prints one JSON line with the
 * median time, the first (cold) time, rules, chains, set elements and diagnostics. nft-eval's trace
 * timing can be added here once the lowering exists.
 */
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import type { NftParseResult } from '../src/engine/nftables/ast.ts';
import { parseNftAny } from '../src/engine/nftables/parse-nft.ts';

const file = process.argv[2] as string;
const text = readFileSync(file, 'utf8');
const times: number[] = [];
let r: NftParseResult | null = null;
let format = '';
for (let i = 0; i < 3; i++) {
  r = null; // let the previous AST go before reading again
  const t0 = performance.now();
  const res = parseNftAny(text);
  times.push(performance.now() - t0);
  r = res;
  format = res.format;
}
const rs = (r as NftParseResult).ruleset;
const count = (f: (t: (typeof rs.tables)[number]) => number) => rs.tables.reduce((n, t) => n + f(t), 0);
console.log(
  JSON.stringify({
    file,
    format,
    megabytes: Number((text.length / 1048576).toFixed(1)),
    chains: count((t) => t.chains.length),
    rules: count((t) => t.chains.reduce((n, c) => n + c.rules.length, 0)),
    setElements: count((t) => t.sets.reduce((n, s) => n + s.elements.length, 0)),
    diagnostics: (r as NftParseResult).diagnostics.length,
    firstParseMs: Math.round(times[0] as number),
    parseMedianMs: Math.round([...times].sort((a, b) => a - b)[1] as number),
    peakRssMB: Math.round(process.resourceUsage().maxRSS / 1024),
  }),
);
