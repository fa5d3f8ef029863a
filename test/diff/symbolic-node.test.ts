// A diff without a node address traces against the symbolic node (eval/node.ts); its stand-in digits
// (RFC 7600's 192.0.0.8) must never appear in the report: a class aimed at the node reads `node(eth0)`.
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { diffRulesets, parseIptables } from '../../src/engine/api.ts';

const SEED = readFileSync(
  join(import.meta.dirname, '..', '..', 'examples', 'seed-003', 'node-myk8s-worker.rules'),
  'utf8',
);
const DROP =
  '-A FORWARD -s 198.51.100.0/24 -p tcp -m tcp --dport 80 -m comment --comment "block partner range" -j DROP';

describe('diff without a node address', () => {
  it('names the symbolic node by its label in classes and ranges, never by its stand-in digits', () => {
    const lines = SEED.split('\n');
    const at = lines.findIndex(l => l.startsWith('-A FORWARD'));
    const changed = [...lines.slice(0, at), DROP, ...lines.slice(at)].join('\n');
    const result = diffRulesets(
      parseIptables(SEED, { file: 'old.rules' }),
      parseIptables(changed, { file: 'new.rules' }),
    );
    assert.ok(result.ok, result.ok ? '' : result.error);
    const report = result.report;
    const json = JSON.stringify(report);
    assert.doesNotMatch(json, /192\.0\.0\.8(?!\d)/);
    assert.ok(
      report.changes.some(c => /node\(eth0\):\d+/.test(c.class.packet)),
      'a NodePort class aimed at the node',
    );
  });
});
