/**
 * The nftables TextMate grammar, checked with JavaScript regular expressions (its patterns use only what
 * both Oniguruma and JavaScript support): every pattern compiles, and whole lines of `nft list ruleset`
 * output and `nft -f` scripts get the scopes meant. `scopesOf` runs the top-level patterns the way a
 * TextMate tokenizer does for one-line rules: at each position the earliest match wins, ties go to the
 * pattern listed first, and a match's captures (or its name) give the scopes.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadGrammar, type Pattern } from '../helpers/grammar.ts';

const grammar = loadGrammar('nftables.tmLanguage.json');

function expand(p: Pattern): Pattern[] {
  if (p.include) return expand(grammar.repository[p.include.slice(1)]!);
  if (p.patterns && !p.match && !p.begin) return p.patterns.flatMap(expand);
  return [p];
}

const TOP = grammar.patterns.flatMap(expand);

/** `scope-prefix:text` for each scoped piece of `line` (scopes cut to their first two parts and the last). */
function scopesOf(line: string): string[] {
  const out: string[] = [];
  const short = (s: string) => {
    const parts = s.split('.');
    return `${parts.slice(0, 2).join('.')}${parts.length > 3 ? `.${parts[parts.length - 2]}` : ''}`;
  };
  for (let pos = 0; pos < line.length;) {
    let best: { p: Pattern; m: RegExpExecArray } | null = null;
    for (const p of TOP) {
      const re = new RegExp(p.match ?? p.begin!, 'g');
      re.lastIndex = pos;
      const m = re.exec(line);
      if (m && m[0].length > 0 && (!best || m.index < best.m.index)) best = { p, m };
    }
    if (!best) break;
    const { p, m } = best;
    let end = m.index + m[0].length;
    if (p.begin) {
      const close = new RegExp(p.end!, 'g');
      close.lastIndex = end;
      const e = close.exec(line);
      end = e ? e.index + e[0].length : line.length;
      out.push(`${short(p.name!)}:${line.slice(m.index, end)}`);
    } else if (p.captures) {
      for (const [k, c] of Object.entries(p.captures))
        if (m[Number(k)] !== undefined) out.push(`${short(c.name)}:${m[Number(k)]}`);
    } else out.push(`${short(p.name!)}:${m[0]}`);
    pos = end;
  }
  return out;
}

describe('nftables TextMate grammar', () => {
  it('compiles', () => {
    assert.equal(grammar.scopeName, 'source.nftables');
    const all = (p: Pattern): Pattern[] => [p, ...(p.patterns ?? []).flatMap(all)];
    for (const entry of Object.values(grammar.repository))
      for (const p of all(entry))
        for (const re of [p.match, p.begin, p.end]) if (re) assert.doesNotThrow(() => new RegExp(re), re);
  });

  it('scopes table, chain and set headers, hooks, priorities and policies', () => {
    assert.deepEqual(scopesOf('table inet filter {'), [
      'keyword.other.table:table',
      'storage.type.family:inet',
      'entity.name.table:filter',
    ]);
    assert.deepEqual(scopesOf('\tchain input {'), ['keyword.other.chain:chain', 'entity.name.chain:input']);
    assert.deepEqual(scopesOf('\t\ttype filter hook input priority filter; policy drop;'), [
      'keyword.other:type',
      'support.type.chain-type:filter',
      'keyword.other:hook',
      'support.constant.hook:input',
      'keyword.other:priority',
      'support.constant.priority:filter',
      'keyword.other:policy',
      'keyword.control.verdict:drop',
    ]);
    assert.deepEqual(scopesOf('\tmap service-ips {'), ['keyword.other.set:map', 'variable.other.set:service-ips']);
    assert.deepEqual(scopesOf('\t\ttype nat hook prerouting priority -100'), [
      'keyword.other:type',
      'support.type.chain-type:nat',
      'keyword.other:hook',
      'support.constant.hook:prerouting',
      'keyword.other:priority',
      'constant.numeric:-100',
    ]);
  });

  it('scopes script commands, defines and variables', () => {
    assert.deepEqual(scopesOf('#!/usr/sbin/nft -f'), ['comment.line.shebang:#!/usr/sbin/nft -f']);
    assert.deepEqual(scopesOf('add chain ip kube-proxy service-ULMVA6XW-ns1/svc1/tcp/p80'), [
      'keyword.control.command:add',
      'keyword.other.object:chain',
      'storage.type.family:ip',
      'entity.name.table:kube-proxy',
      'entity.name.chain:service-ULMVA6XW-ns1/svc1/tcp/p80',
    ]);
    assert.deepEqual(scopesOf('define WAN = eth0'), ['keyword.other.define:define', 'variable.other.constant:WAN']);
    assert.deepEqual(scopesOf('iifname $WAN drop'), [
      'variable.language.field:iifname',
      'variable.other.constant:$WAN',
      'keyword.control.verdict:drop',
    ]);
  });

  it('scopes rules: matches, set references, addresses, numbers, strings, verdicts and chain targets', () => {
    assert.deepEqual(scopesOf('\t\tip daddr . meta l4proto . th dport vmap @service-ips'), [
      'support.type.protocol:ip',
      'variable.language.field:daddr',
      'support.function.expression:meta',
      'variable.language.field:l4proto',
      'support.type.protocol:th',
      'variable.language.field:dport',
      'keyword.other.statement:vmap',
      'variable.other.set:@service-ips',
    ]);
    assert.deepEqual(
      scopesOf('numgen random mod 2 vmap { 0 : goto endpoint-UNZV3OEC-ns4/svc4/tcp/p80__10.180.0.4/80 }'),
      [
        'support.function.expression:numgen',
        'variable.language.field:random',
        'variable.language.field:mod',
        'constant.numeric:2',
        'keyword.other.statement:vmap',
        'constant.numeric:0',
        'keyword.control.verdict:goto',
        'entity.name.chain:endpoint-UNZV3OEC-ns4/svc4/tcp/p80__10.180.0.4/80',
      ],
    );
    assert.deepEqual(scopesOf('ip saddr != 10.0.0.0/8 tcp dport 80 counter accept comment "web"'), [
      'support.type.protocol:ip',
      'variable.language.field:saddr',
      'keyword.operator.comparison:!=',
      'constant.numeric.ipv4:10.0.0.0/8',
      'support.type.protocol:tcp',
      'variable.language.field:dport',
      'constant.numeric:80',
      'keyword.other.statement:counter',
      'keyword.control.verdict:accept',
      'keyword.other.statement:comment',
      'string.quoted.double:"web"',
    ]);
    assert.deepEqual(scopesOf('meta l4proto tcp dnat to 10.180.0.4:80 # handle 12'), [
      'support.function.expression:meta',
      'variable.language.field:l4proto',
      'support.type.protocol:tcp',
      'keyword.other.statement:dnat',
      'keyword.other.statement:to',
      'constant.numeric.ipv4:10.180.0.4:80',
      'comment.line.number-sign:# handle 12',
    ]);
    assert.deepEqual(scopesOf('ip6 daddr fd00::10/128 mark set mark or 0x4000 timeout 3h'), [
      'support.type.protocol:ip6',
      'variable.language.field:daddr',
      'constant.numeric.ipv6:fd00::10/128',
      'variable.language.field:mark',
      'keyword.other.statement:set',
      'variable.language.field:mark',
      'keyword.operator.bitwise:or',
      'constant.numeric.hex:0x4000',
      'keyword.other.statement:timeout',
      'constant.numeric.duration:3h',
    ]);
    // A raw payload base is not a set reference.
    assert.ok(!scopesOf('@nh,16,16 0x1').some(s => s.startsWith('variable.other.set')));
  });
});
