// Property and bounded-work tests of the nftables front ends: mutated and random inputs never throw, and
// hostile inputs (deep JSON, an unclosed set) end quickly with a ranged diagnostic; the two whose size is the
// point (a 10 MB set, exponential defines) are in the slow suite, parse-bounds.slow.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parseNftJson } from '../../src/engine/nftables/parse-json.ts';
import { parseNftScript, parseNftText } from '../../src/engine/nftables/parse-script.ts';
import { detectRulesetFormat } from '../../src/engine/nftables/parse-detect.ts';
import { parseNftAny } from '../../src/engine/nftables/parse-nft.ts';
import { readFixture } from '../helpers/fixtures.ts';

const SEEDS = ['kube-proxy', 'host-firewall', 'nat-router', 'blocklist', 'ip6'];
const TEXTS = SEEDS.map(n => readFixture('nftables', 'golden', `${n}.list-a.nft`));
const JSONS = SEEDS.map(n => readFixture('nftables', 'golden', `${n}.json`));
const SCRIPTS = SEEDS.map(n => readFixture('nftables', `${n}.nft`));
const PIECES = [
  '{',
  '}',
  ';',
  ',',
  '"',
  '$x',
  '@',
  'define x = $x',
  '\n',
  ' . ',
  ' : ',
  'vmap',
  'jump',
  '[',
  ']',
  '\\',
  '#',
  '0x',
  '-',
  '/',
  'table ip t {',
  'chain c {',
  'elements = {',
  'include "x"',
];

/** A mutation of `text`: a span deleted, a piece inserted, or a span duplicated. */
const mutation = (texts: readonly string[]) =>
  fc
    .tuple(
      fc.integer({ min: 0, max: texts.length - 1 }),
      fc.array(fc.tuple(fc.nat(), fc.nat({ max: 40 }), fc.constantFrom(...PIECES), fc.integer({ min: 0, max: 2 })), {
        minLength: 1,
        maxLength: 6,
      }),
    )
    .map(([i, edits]) => {
      let s = texts[i] as string;
      for (const [at, len, piece, op] of edits) {
        const p = at % (s.length + 1);
        if (op === 0) s = s.slice(0, p) + s.slice(p + len);
        else if (op === 1) s = s.slice(0, p) + piece + s.slice(p);
        else s = s.slice(0, p) + s.slice(p, p + len) + s.slice(p);
      }
      return s;
    });

function wellFormed(r: {
  diagnostics: readonly { range: { start: { line: number; character: number } }; code: string }[];
}): void {
  for (const d of r.diagnostics) {
    assert.ok(d.range.start.line >= 0 && d.range.start.character >= 0, `diagnostic ${d.code} has a range`);
    assert.ok(typeof d.code === 'string' && d.code.length > 0);
  }
}

describe('nftables front ends never throw', () => {
  it('mutated listings and scripts', () => {
    fc.assert(
      fc.property(mutation([...TEXTS, ...SCRIPTS]), s => {
        wellFormed(parseNftText(s));
        wellFormed(parseNftScript(s));
        wellFormed(parseNftAny(s));
        detectRulesetFormat(s);
      }),
      { numRuns: 300 },
    );
  });

  it('mutated JSON', () => {
    fc.assert(
      fc.property(mutation(JSONS), s => {
        wellFormed(parseNftJson(s));
      }),
      { numRuns: 300 },
    );
  });

  it('random strings and random JSON values', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), s => {
        wellFormed(parseNftText(s));
        wellFormed(parseNftJson(s));
      }),
      { numRuns: 300 },
    );
    fc.assert(
      fc.property(fc.json(), j => {
        wellFormed(parseNftJson(j));
        wellFormed(parseNftJson(`{"nftables": [${j}]}`));
      }),
      { numRuns: 300 },
    );
  });
});

describe('nftables front ends do bounded work on hostile input', () => {
  it('a set without its closing brace is one ranged diagnostic, not a hang', () => {
    const r = parseNftText(
      `table ip t {\n\tset s {\n\t\ttype ipv4_addr\n\t\telements = { ${'1.2.3.4, '.repeat(100_000)}`,
    );
    assert.ok(r.diagnostics.some(d => d.code === 'unbalanced-braces'));
  });

  it('deeply nested JSON and deeply nested parentheses', () => {
    const deep = parseNftJson(`{"nftables": ${'['.repeat(100_000)}`);
    assert.deepEqual(
      deep.diagnostics.map(d => d.code),
      ['bad-json'],
    );
    const parens = parseNftText(`table ip t {\n\tchain c {\n\t\tmeta mark ${'('.repeat(50_000)}\n\t}\n}\n`);
    assert.ok(parens.diagnostics.length > 0);
  });

  it('input above the size limit is refused with a diagnostic', () => {
    const r = parseNftText('table ip t {\n}\n'.repeat(10), { maxBytes: 20 });
    assert.deepEqual(
      r.diagnostics.map(d => d.code),
      ['input-too-large'],
    );
  });
});
