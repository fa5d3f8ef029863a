// The three nftables input forms of one ruleset parse to the same AST. The inputs in
// test/fixtures/nftables/*.nft were loaded into a private netns by the real nft 1.0.6 and listed as text
// (plain, -a, -s, -n) and JSON by test/fixtures/nftables/regenerate.sh; the listings in golden/ are its output.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { NftParseResult } from '../../src/engine/nftables/ast.ts';
import { parseNftJson } from '../../src/engine/nftables/parse-json.ts';
import { parseNftScript, parseNftText } from '../../src/engine/nftables/parse-script.ts';
import { detectRulesetFormat } from '../../src/engine/nftables/parse-detect.ts';
import { readFixture } from '../helpers/fixtures.ts';
import { normalize } from './nft-normalize.ts';

const NAMES = [
  'kube-proxy',
  'kube-proxy-generated',
  'host-firewall',
  'firewalld-style',
  'forwarding',
  'nat-router',
  'blocklist',
  'ip6',
];

function clean(r: NftParseResult, what: string): NftParseResult {
  const errors = r.diagnostics
    .filter(d => d.severity === 'error')
    .map(d => `${d.range.start.line + 1}:${d.range.start.character + 1} ${d.code}: ${d.message}`);
  assert.deepEqual(errors, [], `${what} parses without errors`);
  return r;
}

function ruleCount(r: NftParseResult): number {
  return r.ruleset.tables.reduce((n, t) => n + t.chains.reduce((m, c) => m + c.rules.length, 0), 0);
}

describe('nftables golden listings from nft 1.0.6', () => {
  for (const name of NAMES) {
    it(`${name}: list, list -a, list -s and -j give the same AST`, () => {
      const list = clean(parseNftText(readFixture('nftables', 'golden', `${name}.list.nft`)), `${name}.list.nft`);
      const listA = clean(parseNftText(readFixture('nftables', 'golden', `${name}.list-a.nft`)), `${name}.list-a.nft`);
      const listS = clean(parseNftText(readFixture('nftables', 'golden', `${name}.list-s.nft`)), `${name}.list-s.nft`);
      const json = clean(parseNftJson(readFixture('nftables', 'golden', `${name}.json`)), `${name}.json`);
      assert.ok(ruleCount(list) > 0);
      assert.deepEqual(normalize(listA.ruleset), normalize(list.ruleset));
      assert.deepEqual(normalize(json.ruleset), normalize(list.ruleset));
      assert.deepEqual(normalize(listS.ruleset, { counters: true }), normalize(list.ruleset, { counters: true }));
    });

    it(`${name}: handles from -a and JSON agree`, () => {
      const listA = parseNftText(readFixture('nftables', 'golden', `${name}.list-a.nft`));
      const json = parseNftJson(readFixture('nftables', 'golden', `${name}.json`));
      const handles = (r: NftParseResult) =>
        r.ruleset.tables.map(t => [
          t.handle,
          t.chains.map(c => [c.handle, c.rules.map(x => x.handle)]),
          t.sets.map(s => s.handle),
        ]);
      assert.deepEqual(handles(listA), handles(json));
      assert.ok(
        listA.ruleset.tables.every(
          t => t.handle !== undefined && t.chains.every(c => c.rules.every(r => typeof r.handle === 'number')),
        ),
      );
    });

    it(`${name}: nft -n (numeric) output and the input script parse without errors, same rule count`, () => {
      const list = parseNftText(readFixture('nftables', 'golden', `${name}.list.nft`));
      const numeric = clean(
        parseNftText(readFixture('nftables', 'golden', `${name}.list-n.nft`)),
        `${name}.list-n.nft`,
      );
      const script = clean(parseNftScript(readFixture('nftables', `${name}.nft`)), `${name}.nft`);
      assert.equal(ruleCount(numeric), ruleCount(list));
      assert.equal(ruleCount(script), ruleCount(list));
    });

    it(`${name}: each form is detected by content`, () => {
      assert.equal(detectRulesetFormat(readFixture('nftables', 'golden', `${name}.list.nft`)), 'nft-text');
      assert.equal(detectRulesetFormat(readFixture('nftables', 'golden', `${name}.list-a.nft`)), 'nft-text');
      assert.equal(detectRulesetFormat(readFixture('nftables', 'golden', `${name}.json`)), 'nft-json');
      assert.equal(detectRulesetFormat(readFixture('nftables', `${name}.nft`)), 'nft-script');
    });
  }

  for (const name of ['kube-proxy', 'kube-proxy-generated']) {
    it(`${name}: the knftables transaction (add/flush/delete commands) gives the AST nft lists after loading it`, () => {
      // nft itself changes a few things when it loads a script: it sets a dynamic set's size (65535).
      const script = clean(parseNftScript(readFixture('nftables', `${name}.nft`)), `${name}.nft`);
      const list = parseNftText(readFixture('nftables', 'golden', `${name}.list.nft`));
      const dropSize = (x: unknown) =>
        JSON.parse(JSON.stringify(x, (k, v: unknown) => (k === 'size' ? undefined : v))) as unknown;
      assert.deepEqual(
        dropSize(normalize(script.ruleset, { counters: true })),
        dropSize(normalize(list.ruleset, { counters: true })),
      );
    });
  }
});
