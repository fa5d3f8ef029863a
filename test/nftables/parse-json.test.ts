// nft -j front end: libnftables JSON schema objects and commands (doc/libnftables-json.adoc), with ranged
// diagnostics for malformed JSON and unknown statements.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseNftJson } from '../../src/engine/nftables/parse-json.ts';

const strip = (x: unknown): unknown =>
  JSON.parse(JSON.stringify(x, (k, v: unknown) => (k === 'range' ? undefined : v)));

describe('nft -j JSON', () => {
  it('applies command objects in order (add, insert, delete, flush) as nft -j -f does', () => {
    const r = parseNftJson(
      JSON.stringify({
        nftables: [
          { add: { table: { family: 'inet', name: 't' } } },
          {
            add: {
              chain: {
                family: 'inet',
                table: 't',
                name: 'in',
                type: 'filter',
                hook: 'input',
                prio: 'filter',
                policy: 'drop',
              },
            },
          },
          { add: { rule: { family: 'inet', table: 't', chain: 'in', expr: [{ accept: null }] } } },
          { insert: { rule: { family: 'inet', table: 't', chain: 'in', expr: [{ drop: null }] } } },
          { add: { set: { family: 'inet', table: 't', name: 's', type: 'ipv4_addr', flags: 'interval' } } },
          {
            add: {
              element: {
                family: 'inet',
                table: 't',
                name: 's',
                elem: [{ prefix: { addr: '10.0.0.0', len: 8 } }, '192.0.2.1'],
              },
            },
          },
          { delete: { element: { family: 'inet', table: 't', name: 's', elem: ['192.0.2.1'] } } },
        ],
      }),
    );
    assert.deepEqual(r.diagnostics, []);
    const t = r.ruleset.tables[0];
    assert.deepEqual(t?.chains[0]?.base, {
      type: 'filter',
      hook: 'input',
      priority: { value: 0, name: 'filter' },
      policy: 'drop',
    });
    assert.deepEqual(
      t?.chains[0]?.rules.map(x => x.stmts[0]?.kind === 'verdict' && x.stmts[0].verdict),
      ['drop', 'accept'],
    );
    assert.deepEqual(strip(t?.sets[0]), {
      family: 'inet',
      table: 't',
      name: 's',
      flags: ['interval'],
      type: ['ipv4_addr'],
      elements: [{ kind: 'prefix', addr: { kind: 'value', value: '10.0.0.0' }, len: 8 }],
    });
  });

  it('reports malformed JSON at its position', () => {
    const r = parseNftJson('{"nftables": [\n  {"table": {"family": "ip", "name": "t"}},\n  {"chain": }\n]}');
    assert.deepEqual(
      r.diagnostics.map(d => [d.code, d.range.start.line, d.range.start.character]),
      [['bad-json', 2, 12]],
    );
  });

  it('keeps a rule with an unknown statement, as unknown, and names it at its range', () => {
    const r = parseNftJson(
      '{"nftables": [{"table": {"family": "ip", "name": "t"}}, {"chain": {"family": "ip", "table": "t", "name": "c"}},\n{"rule": {"family": "ip", "table": "t", "chain": "c", "expr": [{"frobnicate": {}}, {"accept": null}]}}]}',
    );
    assert.deepEqual(
      r.diagnostics.map(d => [d.code, d.range.start.line]),
      [['unknown-statement', 1]],
    );
    assert.deepEqual(
      r.ruleset.tables[0]?.chains[0]?.rules[0]?.stmts.map(s => s.kind),
      ['unknown', 'verdict'],
    );
  });

  it('names missing chains, sets and jump targets', () => {
    const r = parseNftJson(
      JSON.stringify({
        nftables: [
          { table: { family: 'ip', name: 't' } },
          { chain: { family: 'ip', table: 't', name: 'c' } },
          { rule: { family: 'ip', table: 't', chain: 'nochain', expr: [{ accept: null }] } },
          {
            rule: {
              family: 'ip',
              table: 't',
              chain: 'c',
              expr: [
                { match: { op: '==', left: { payload: { protocol: 'ip', field: 'saddr' } }, right: '@nosuch' } },
                { jump: { target: 'gone' } },
              ],
            },
          },
        ],
      }),
    );
    assert.deepEqual(r.diagnostics.map(d => d.code).sort(), ['unknown-chain', 'unknown-chain', 'unknown-set']);
  });
});
