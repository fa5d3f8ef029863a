// The shared nftables AST's helpers: named priorities follow nft(8) "Standard priority names" (bridge differs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findTable, namedPriority, type NftRuleset } from '../../src/engine/nftables/ast.ts';

test('named priorities per family (nft(8) table of standard priority names)', () => {
  assert.equal(namedPriority('ip', 'dstnat'), -100);
  assert.equal(namedPriority('inet', 'srcnat'), 100);
  assert.equal(namedPriority('ip6', 'raw'), -300);
  assert.equal(namedPriority('ip', 'mangle'), -150);
  assert.equal(namedPriority('ip', 'security'), 50);
  assert.equal(namedPriority('bridge', 'filter'), -200);
  assert.equal(namedPriority('bridge', 'dstnat'), -300);
  assert.equal(namedPriority('bridge', 'out'), 100);
  assert.equal(namedPriority('ip', 'out'), undefined);
  assert.equal(namedPriority('ip', 'nonsense'), undefined);
});

test('findTable keys on family and name', () => {
  const r = { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } };
  const t = (family: 'ip' | 'ip6', name: string) => ({
    family,
    name,
    range: r,
    flags: [],
    chains: [],
    sets: [],
    flowtables: [],
    objects: [],
  });
  const rs: NftRuleset = { source: 'text', tables: [t('ip', 'filter'), t('ip6', 'filter')] };
  assert.equal(findTable(rs, 'ip6', 'filter'), rs.tables[1]);
  assert.equal(findTable(rs, 'inet', 'filter'), undefined);
});
