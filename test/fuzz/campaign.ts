/**
 * One chunk of the long fuzz campaign (scripts/fuzz.mjs runs the chunks, each in its own process under a
 * watchdog, and keeps the campaign's state so it can stop and resume). A chunk is `size` inputs of one
 * kind from a fixed seed, so any failure can be replayed: `--replay` re-runs one input by its index.
 *
 *   node --import tsx test/fuzz/campaign.ts --chunk N --size K [--out DIR]
 * Prints one JSON line: {"chunk","kind","seed","inputs","ms","failures":[{"index","error","file"}]}.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { checkDump, checkManifests, checkNft } from './check.ts';
import { dumpInput, manifestInput, nftInput } from './inputs.ts';

const KINDS = [
  { kind: 'iptables', arb: dumpInput, check: checkDump },
  { kind: 'iptables', arb: dumpInput, check: checkDump },
  { kind: 'iptables', arb: dumpInput, check: checkDump },
  { kind: 'nftables', arb: nftInput, check: checkNft },
  { kind: 'manifests', arb: manifestInput, check: checkManifests },
] as const;

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : dflt;
}

const chunk = Number(arg('chunk', '0'));
const size = Number(arg('size', '2000'));
const out = arg('out', '.cache/fuzz');
const { kind, arb, check } = KINDS[chunk % KINDS.length]!;
const seed = 100_000 + chunk;
const failures: { index: number; error: string; file: string }[] = [];
const seen = new Set<string>();
let index = 0;
const start = performance.now();
fc.check(
  fc.property(arb, input => {
    const i = index++;
    try {
      check(input);
    } catch (e) {
      const error = (e instanceof Error ? `${e.name}: ${e.message}` : String(e)).split('\n')[0]!.slice(0, 300);
      // One saved example per distinct failure per chunk.
      const key = error.replace(/\d+/g, 'N').slice(0, 120);
      if (!seen.has(key)) {
        seen.add(key);
        mkdirSync(join(out, 'failures'), { recursive: true });
        const file = join(out, 'failures', `${kind}-chunk${chunk}-input${i}.txt`);
        writeFileSync(file, input);
        failures.push({ index: i, error, file });
      }
    }
    return true;
  }),
  { seed, numRuns: size, endOnFailure: true },
);
console.log(JSON.stringify({ chunk, kind, seed, inputs: index, ms: Math.round(performance.now() - start), failures }));
