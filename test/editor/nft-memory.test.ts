/**
 * What an nftables script costs the engine worker to hold (issue 12: memory ≤ 1 GB for any input up to
 * 100 MB). kube-proxy's 43 MB script (10,000 Services) held 987 MB after reading and 1,662 MB after its
 * diagnostics: each lazily lowered rule had a hidden class of its own (1.2 KB a rule), and checking every
 * rule kept every lowered program (3 KB a rule). Measured here per rule on a smaller script of the same shape.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { generateKubeProxyNft } from '../../bench/nft-generate.ts';
import type { EngineRequest } from '../../src/shared/engine-protocol.ts';
import { EngineHost } from '../../src/worker/engine-host.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function heapUsed(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

async function ask(host: EngineHost, method: string, params: object): Promise<unknown> {
  const r = await host.handle({ id: 1, method, params } as unknown as EngineRequest);
  if (!r.ok) throw new Error(r.error);
  return r.result;
}

describe('nftables script in the engine worker: memory per rule', () => {
  it('reading a script keeps its rules lowered lazily at a few hundred bytes each, its diagnostics and a trace keep no programs', async () => {
    const text = generateKubeProxyNft(600, 10);
    const host = new EngineHost();
    await ask(host, 'append', { key: 'd', text });
    const before = heapUsed();
    const summary = (await ask(host, 'load', {
      key: 'd',
      file: 'kube.nft',
      maxBytes: 1 << 30,
      source: { appended: true },
    })) as { ruleCount: number };
    const loaded = heapUsed();
    await ask(host, 'diagnostics', { key: 'd', options: { maxRulesForFullCheck: 400000, maxDiagnostics: 5000 } });
    const checked = heapUsed();
    const rules = summary.ruleCount;
    assert.ok(rules > 10_000, `${rules} rules`);
    const perRule = (loaded - before) / rules;
    const perRuleChecked = (checked - loaded) / rules;
    // The AST, the model and the editor's index of names, per rule: 3.2 KB (4.2 KB before, 1 KB of it
    // the rules' own hidden classes).
    assert.ok(perRule < 3700, `reading kept ${perRule.toFixed(0)} bytes a rule`);
    // Diagnostics lower every rule for its messages and keep nothing of it: 28 bytes a rule (3.2 KB before).
    assert.ok(perRuleChecked < 300, `the diagnostics kept ${perRuleChecked.toFixed(0)} bytes a rule`);
    // A trace lowers the rules it walks, not every rule (budget.ts liveMarks asked each nft rule's text
    // whether it mentions a mark, which lowered and kept all programs: 3.8 KB a rule).
    const trace = (await ask(host, 'trace', {
      key: 'd',
      packet: 'tcp 203.0.113.10 -> 172.30.0.0:80', // svc0, 10 endpoints
      node: { addresses: ['192.0.2.1'] },
    })) as { ok: boolean; trace: { outcomes: unknown[] } };
    assert.equal(trace.ok, true);
    assert.equal(trace.trace.outcomes.length, 10, 'one outcome per endpoint');
    const traced = heapUsed();
    const perRuleTraced = (traced - checked) / rules;
    assert.ok(perRuleTraced < 300, `the trace kept ${perRuleTraced.toFixed(0)} bytes a rule`);
  });
});
