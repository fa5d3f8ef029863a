/**
 * Hostile input never costs an exception or a hang after parsing either: mutated nftables rulesets (lines
 * dropped, duplicated, words swapped, numbers replaced by extreme values) go through parseRuleset, the
 * lowering and a trace, which must return diagnostics and a trace (or a packet error), never throw. And the
 * nftables front end and evaluator bundle for the browser with no Node built-in (the web extension).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { build } from 'esbuild';
import fc from 'fast-check';
import { parseRuleset, tracePacket } from '../../src/engine/api.ts';
import { readFixture } from '../helpers/fixtures.ts';

const seeds = ['kube-proxy', 'blocklist', 'nat-router', 'numgen'].map(n => readFixture('kernel-nft', n, 'ruleset.nft'));
const EXTREMES = [
  '0',
  '4294967296',
  '18446744073709551616',
  '99999999999999999999999',
  '-1',
  '0xffffffffffffffffffff',
  '1e308',
  '65536',
  '4096',
  '100000000',
];

describe('nftables input robustness', () => {
  it('mutated rulesets parse, lower and trace without throwing', () => {
    fc.assert(
      fc.property(
        fc.nat(seeds.length - 1),
        fc.array(fc.tuple(fc.nat(400), fc.nat(6), fc.nat(EXTREMES.length - 1)), { minLength: 1, maxLength: 8 }),
        (which, edits) => {
          const lines = seeds[which]!.split('\n');
          for (const [at, kind, x] of edits) {
            const i = at % lines.length;
            const line = lines[i]!;
            if (kind === 0) lines.splice(i, 1);
            else if (kind === 1) lines.splice(i, 0, line);
            else if (kind === 2) lines[i] = line.replace(/\d+/, EXTREMES[x]!);
            else if (kind === 3) lines[i] = line.split(' ').reverse().join(' ');
            else if (kind === 4) lines[i] = line.replace(/[{}]/, '');
            else if (kind === 5)
              lines[i] = line.replace(/mod \d+/, `mod ${EXTREMES[x]}`).replace(/<< \d+|or 0x\w+/, `<< ${EXTREMES[x]}`);
            else lines[i] = line.slice(0, Math.floor(line.length / 2));
          }
          const parsed = parseRuleset(lines.join('\n'), { file: 'm.nft' });
          for (const packet of [
            { protocol: 'tcp', src: '10.0.0.2', dst: '172.30.0.44', dport: 80 },
            { protocol: 'udp', src: '203.0.113.9', dst: '172.18.0.4', dport: 8001 },
          ]) {
            const r = tracePacket(
              parsed.ruleset,
              { ...packet, from: 'outside', in: 'eth0' },
              { node: { addresses: ['172.18.0.4'] }, budget: 20_000 },
            );
            if (r.ok) assert.ok(r.trace.outcomes.length > 0);
          }
        },
      ),
      { numRuns: 60, seed: 13 },
    );
  });

  it('the nftables front end and evaluator bundle for the browser without Node built-ins', async () => {
    const r = await build({
      entryPoints: ['src/engine/parse-ruleset.ts'],
      bundle: true,
      platform: 'browser',
      write: false,
      logLevel: 'silent',
      format: 'esm',
    });
    assert.equal(r.errors.length, 0);
    const text = r.outputFiles[0]!.text;
    assert.doesNotMatch(text, /require\(["']node:|from ["']node:|require\(["'](fs|path|crypto|child_process)["']\)/);
  });
});
