/**
 * The model's base chains: hook, priority, type and family come from the chain itself, not from table names
 * (issue 13, deliverable 1). Hand-built rulesets with no rules: only the pipeline's ordering and policies
 * decide, so the expected outcomes follow from nf_hook_entries ordering (net/netfilter/core.c) and
 * nf_nat_inet_fn (net/netfilter/nf_nat_core.c).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type BaseChainInfo,
  type Chain,
  type NfFamily,
  type Ruleset,
  type Table,
  baseChainsForHook,
  parseIptables,
  tracePacket,
} from '../../src/engine/api.ts';

const R = { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } };

function chain(
  table: string,
  name: string,
  base: BaseChainInfo | undefined,
  policy: 'ACCEPT' | 'DROP' = 'ACCEPT',
): Chain {
  return {
    name,
    table,
    builtin: base !== undefined,
    ...(base ? { base } : {}),
    policy: base ? policy : null,
    counters: null,
    line: 0,
    range: R,
    rules: [],
  };
}

function table(family: NfFamily, name: string, chains: Chain[]): Table {
  return { name, kind: 'filter', family, nft: true, line: 0, range: R, chains: new Map(chains.map(c => [c.name, c])) };
}

function ruleset(tables: Table[]): Ruleset {
  return {
    family: 4,
    file: 'test',
    format: 'nft',
    tables: new Map(tables.map(t => [`${t.family} ${t.name}`, t])),
    diagnostics: [],
    ruleCount: 0,
    lineCount: 0,
  };
}

describe('base chains from the model', () => {
  it('a table with any name hooks its base chains by their own hook and priority', () => {
    const rs = ruleset([
      table('inet', 'late', [chain('late', 'in', { hook: 'INPUT', priority: 10, type: 'filter', family: 'inet' })]),
      table('ip', 'early', [
        chain('early', 'guard', { hook: 'INPUT', priority: -5, type: 'filter', family: 'ip' }),
        chain('early', 'helper', undefined),
      ]),
      table('ip6', 'six', [chain('six', 'in6', { hook: 'INPUT', priority: -200, type: 'filter', family: 'ip6' })]),
    ]);
    assert.deepEqual(
      baseChainsForHook(rs, 'INPUT', 4).map(h => `${h.table.name}/${h.chain.name}@${h.priority}`),
      ['early/guard@-5', 'late/in@10'],
    );
    assert.deepEqual(
      baseChainsForHook(rs, 'INPUT', 6).map(h => `${h.table.name}/${h.chain.name}@${h.priority}`),
      ['six/in6@-200', 'late/in@10'],
    );
  });

  it('a policy drop in a later base chain drops what an earlier one accepted', () => {
    const rs = ruleset([
      table('ip', 'a', [chain('a', 'in', { hook: 'INPUT', priority: 0, type: 'filter', family: 'ip' }, 'ACCEPT')]),
      table('inet', 'b', [chain('b', 'in', { hook: 'INPUT', priority: 100, type: 'filter', family: 'inet' }, 'DROP')]),
    ]);
    const r = tracePacket(
      rs,
      { protocol: 'tcp', src: '203.0.113.9', dst: '172.18.0.4', dport: 22 },
      { node: { addresses: ['172.18.0.4'] } },
    );
    assert.ok(r.ok);
    assert.deepEqual(
      r.trace.outcomes.map(o => [o.disposition, o.reason]),
      [['dropped', 'policy DROP of b in']],
    );
  });

  it('ip6 tables do not see IPv4 packets', () => {
    const rs = ruleset([
      table('ip6', 'b', [chain('b', 'in', { hook: 'INPUT', priority: 0, type: 'filter', family: 'ip6' }, 'DROP')]),
    ]);
    const r = tracePacket(
      rs,
      { protocol: 'tcp', src: '203.0.113.9', dst: '172.18.0.4', dport: 22 },
      { node: { addresses: ['172.18.0.4'] } },
    );
    assert.ok(r.ok);
    assert.deepEqual(
      r.trace.outcomes.map(o => o.disposition),
      ['local'],
    );
  });

  it('the iptables front end fills the same fields from its fixed table layout', () => {
    const rs = parseIptables(
      '*nat\n:PREROUTING ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:X - [0:0]\nCOMMIT\n*filter\n:INPUT DROP [0:0]\nCOMMIT\n',
    );
    const nat = rs.tables.get('nat')!;
    assert.equal(nat.family, 'ip');
    assert.deepEqual(nat.chains.get('PREROUTING')!.base, {
      hook: 'PREROUTING',
      priority: -100,
      type: 'nat',
      family: 'ip',
    });
    assert.equal(nat.chains.get('X')!.base, undefined);
    assert.deepEqual(rs.tables.get('filter')!.chains.get('INPUT')!.base, {
      hook: 'INPUT',
      priority: 0,
      type: 'filter',
      family: 'ip',
    });
  });
});
