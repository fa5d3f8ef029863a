// Rules kept as source positions (src/engine/nftables/rule-source.ts) read the same statements, ranges and
// diagnostics as rules that keep their ASTs, on every nft text and script fixture and on scripts written to
// reach the corners: defines changed between rules, variables, deleted chains, replaced rules, errors.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { NftRuleset } from '../../src/engine/nftables/ast.ts';
import { parseNftScript, parseNftText } from '../../src/engine/nftables/parse-script.ts';
import { detectRulesetFormat } from '../../src/engine/nftables/parse-detect.ts';
import { SourceRule, ruleMayMention } from '../../src/engine/nftables/rule-source.ts';
import { parseRuleset } from '../../src/engine/parse-ruleset.ts';
import { checkLowering } from '../../src/engine/nftables/lazy-rule.ts';
import { lintNft } from '../../src/engine/lint/nft.ts';
import { generateKubeProxyNft } from '../../bench/nft-generate.ts';

/** Every rule with its statements read (a SourceRule's are a getter), ranges included. */
function plain(rs: NftRuleset): unknown {
  return JSON.parse(JSON.stringify(rs));
}

function fixtures(): { name: string; text: string }[] {
  const out: { name: string; text: string }[] = [];
  const dirs = [
    'test/fixtures/nftables',
    'test/fixtures/nftables/golden',
    'examples/nftables',
    'test/fixtures/kube-proxy-nft',
  ];
  for (const d of dirs)
    for (const f of readdirSync(d))
      if (f.endsWith('.nft') || f.endsWith('.txt'))
        out.push({ name: join(d, f), text: readFileSync(join(d, f), 'utf8') });
  for (const d of readdirSync('test/fixtures/kernel-nft', { withFileTypes: true }))
    if (d.isDirectory())
      for (const f of ['ruleset.nft', 'ruleset.txt', 'ruleset-a.txt']) {
        const name = join('test/fixtures/kernel-nft', d.name, f);
        out.push({ name, text: readFileSync(name, 'utf8') });
      }
  return out.filter(f => detectRulesetFormat(f.text).startsWith('nft') && detectRulesetFormat(f.text) !== 'nft-json');
}

const CORNERS = `#!/usr/sbin/nft -f
define p = 80
define nets = { 10.0.0.0/8, 192.168.0.0/16 }
define v = $p
define r = ip saddr 1.2.3.4 counter accept
add table inet t
add chain inet t in { type filter hook input priority 0 ; policy drop ; }
add chain inet t a
add set inet t s { type ipv4_addr ; }
add rule inet t in tcp dport $p ip saddr $nets jump a
add rule inet t in tcp dport $v accept comment "x"
redefine p = 443
add rule inet t in tcp dport $p counter accept
add rule inet t in $r
undefine p
add rule inet t in tcp dport $p accept
add rule inet t in tcp dport $zz accept
add rule inet t a ip daddr @s goto b
add rule inet t a ip daddr @nope goto nowhere jump later
add chain inet t b
add rule inet t b jump a
add rule inet t b frobnicate 7 accept
add rule inet t b tcp dport { 1, 2, 3 } numgen random mod 2 vmap { 0 : jump a, 1 : goto b }
insert rule inet t b ip saddr 5.6.7.8 accept
add rule inet t b index 0 ip saddr 9.9.9.9 accept
replace rule inet t b handle 3 accept
add rule inet t b ip saddr 1.1.1.1 update @s { ip saddr timeout 3h } accept
add rule inet t b ip saddr 1.1.1.2 accept; add rule inet t b ip saddr 1.1.1.3 drop
add rule inet t b ip saddr \\
  1.1.1.4 drop
add chain inet t later
table ip x {
  chain c {
    type nat hook postrouting priority srcnat; policy accept;
    ip saddr $nets masquerade
    ip daddr 10.0.0.1 dnat to 10.0.0.2:$v jump d
    tcp dport 22 ct state new limit rate 3/minute accept # handle 5
    oifname "eth0" ; iifname "x" drop
  }
  chain d { jump c ; ip daddr @m drop }
}
`;

/** A chain and a set named by rules, then deleted: the rules' references fail at the end. */
const DELETED = `add table ip t
add chain ip t c
add chain ip t gone
add set ip t s { type ipv4_addr ; }
add rule ip t c jump gone
add rule ip t c ip daddr @s accept
add rule ip t c ip daddr @s jump gone
delete chain ip t gone
delete set ip t s
`;

function same(name: string, text: string): void {
  const parse = text.startsWith('table') || !/^\s*(add|define|flush)/m.test(text) ? parseNftText : parseNftScript;
  const eager = parse(text);
  const compact = parse(text, { compactRules: true });
  assert.deepEqual(compact.diagnostics, eager.diagnostics, `${name}: diagnostics`);
  assert.deepEqual(plain(compact.ruleset), plain(eager.ruleset), `${name}: AST`);
  assert.deepEqual(lintNft(compact.ruleset), lintNft(eager.ruleset), `${name}: lint`);
}

describe('nftables rules kept as source positions', () => {
  it('read the same statements, ranges and diagnostics on every nft text and script fixture', () => {
    const all = fixtures();
    assert.ok(all.length > 30, `${all.length} fixtures`);
    for (const f of all) same(f.name, f.text);
  });

  it('read the same on defines changed between rules, deleted chains and sets, replaced rules and errors', () => {
    same('corners', CORNERS);
    same('deleted', DELETED);
    same(
      'deleted, in a listing',
      'table ip t {\n chain c { jump gone\n }\n chain gone {\n }\n}\ndelete chain ip t gone\n',
    );
    const compact = parseNftScript(CORNERS, { compactRules: true });
    const rules = compact.ruleset.tables.flatMap(t => t.chains.flatMap(c => c.rules));
    assert.ok(rules.length > 20 && rules.every(r => r instanceof SourceRule), 'every rule is kept as source');
  });

  it('say which words their statements cannot name without reading them (the editor hovers skip those rules)', () => {
    const text = generateKubeProxyNft(20, 3) + CORNERS.replace(/^#!.*\n/, '');
    const rs = parseNftScript(text, { compactRules: true }).ruleset;
    let skipped = 0;
    for (const t of rs.tables) {
      const words = [...t.chains.map(c => c.name), ...t.sets.map(x => x.name), 'later', 'nets'];
      for (const c of t.chains)
        for (const r of c.rules) {
          const stmts = JSON.stringify(r.stmts);
          for (const w of words)
            if (!ruleMayMention(r, w)) {
              skipped++;
              assert.ok(!stmts.includes(`"${w}"`), `${c.name}: ${stmts} names ${w}`);
            }
        }
    }
    assert.ok(skipped > 1000, `${skipped} rules skipped`);
    // Through a variable: the text names "$nets", the statements hold its value.
    const viaDefine = rs.tables.flatMap(t => t.chains.flatMap(c => c.rules)).filter(r => ruleMayMention(r, '10.0.0.0'));
    assert.ok(viaDefine.some(r => JSON.stringify(r.stmts).includes('10.0.0.0')));
  });

  it('lower, check and trace the same as rules that keep their statements', () => {
    const text = generateKubeProxyNft(30, 3) + CORNERS.replace(/^#!.*\n/, '');
    const a = parseRuleset(text, { file: 'k', lazy: true, compactNftRules: false });
    const b = parseRuleset(text, { file: 'k', lazy: true, compactNftRules: true });
    const rules = (p: typeof a) =>
      [...p.ruleset.tables.values()].flatMap(t => [...t.chains.values()].flatMap(c => c.rules));
    for (const r of [...rules(a), ...rules(b)]) checkLowering(r);
    assert.deepEqual(b.diagnostics, a.diagnostics);
    // Programs hold functions (compared as their source) and bigints.
    const json = (x: unknown) =>
      JSON.stringify(x, (_k, v: unknown) =>
        typeof v === 'bigint' ? `${v}n` : typeof v === 'function' ? String(v) : v,
      );
    const view = (p: typeof a) =>
      rules(p).map(r => json({ raw: r.raw, line: r.line, range: r.range, index: r.index, ops: r.nft?.ops }));
    assert.deepEqual(view(b), view(a));
    assert.equal(b.ruleset.lineCount, a.ruleset.lineCount);
  });

  it('a large script read lazily keeps its rules as source, at a fraction of the memory', () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const heap = () => (gc(), gc(), process.memoryUsage().heapUsed);
    const text = generateKubeProxyNft(300, 10);
    assert.ok(text.length > 1 << 20);
    const before = heap();
    const kept = parseRuleset(text, { file: 'k', lazy: true });
    const compactBytes = heap() - before;
    const rules = [...kept.nft!.tables[0]!.chains.values()].flatMap(c => c.rules);
    assert.ok(rules.every(r => r instanceof SourceRule));
    const eager = parseRuleset(text, { file: 'k', lazy: true, compactNftRules: false });
    const eagerBytes = heap() - before - compactBytes;
    // 3.2 KB a rule with ASTs; well under half of it as source positions.
    assert.ok(compactBytes < eagerBytes * 0.5, `${compactBytes} bytes as source, ${eagerBytes} as ASTs`);
    assert.ok(eager.ruleset.ruleCount === kept.ruleset.ruleCount);
  });
});
