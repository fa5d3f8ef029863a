// The nftables front ends' bounded work where the input's size is the point (the slow suite, `npm run
// test:slow`): a 10 MB set is read in bounded time, and exponentially growing defines stop at the expansion
// budget. The other hostile inputs are parse-fuzz.test.ts's.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseNftScript, parseNftText } from '../../src/engine/nftables/parse-script.ts';

describe('nftables front ends do bounded work on large hostile input', () => {
  it('a 10 MB set is read in bounded time', () => {
    const parts: string[] = [];
    for (let i = 0; parts.length < 900_000; i++) parts.push(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
    const text = `table ip t {\n\tset big {\n\t\ttype ipv4_addr\n\t\telements = { ${parts.join(', ')} }\n\t}\n}\n`;
    assert.ok(text.length > 10_000_000);
    const t0 = performance.now();
    const r = parseNftText(text);
    const ms = performance.now() - t0;
    assert.equal(r.ruleset.tables[0]?.sets[0]?.elements.length, 900_000);
    assert.ok(ms < 20_000, `took ${ms} ms`);
  });
  it('exponentially growing defines stop at the expansion budget', () => {
    const lines = ['define a0 = { 1, 2 }'];
    for (let i = 1; i < 40; i++) lines.push(`define a${i} = { $a${i - 1}, $a${i - 1} }`);
    lines.push('table ip t {\n\tchain c {\n\t\ttcp dport $a39 accept\n\t}\n}');
    const t0 = performance.now();
    const r = parseNftScript(lines.join('\n'));
    assert.ok(performance.now() - t0 < 20_000);
    assert.ok(r.diagnostics.some(d => d.code === 'input-too-large'));
  });
});
