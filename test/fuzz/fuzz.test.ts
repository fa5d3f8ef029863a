/**
 * Fuzz properties with fixed seeds, a few seconds in all (the long campaign is `npm run fuzz`): generated
 * and mutated iptables dumps, nftables rulesets and manifests never throw, end within their budget, and
 * report every problem as a ranged diagnostic (check.ts).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { checkDump, checkManifests, checkNft } from './check.ts';
import { dumpInput, manifestInput, nftInput } from './inputs.ts';

describe('fuzz properties (fixed seeds)', () => {
  it('iptables dumps: generated and mutated', () => {
    fc.assert(fc.property(dumpInput, checkDump), { seed: 12, numRuns: 150, endOnFailure: true });
  });
  it('nftables rulesets: mutated', () => {
    fc.assert(fc.property(nftInput, checkNft), { seed: 12, numRuns: 80, endOnFailure: true });
  });
  it('manifests: generated, mutated, alias bombs, lists, not Kubernetes', () => {
    fc.assert(fc.property(manifestInput, checkManifests), { seed: 12, numRuns: 120, endOnFailure: true });
  });
  it('inputs the long campaign found failing (test/fixtures/fuzz/) pass the same checks', () => {
    const dir = fileURLToPath(new URL('../fixtures/fuzz/', import.meta.url));
    const files = readdirSync(dir).filter(f => f.endsWith('.txt'));
    assert.ok(files.length > 0);
    for (const f of files) {
      const text = readFileSync(join(dir, f), 'utf8');
      if (f.startsWith('manifests-')) checkManifests(text);
      else if (f.startsWith('nft-')) checkNft(text);
      else checkDump(text);
    }
  });
});
