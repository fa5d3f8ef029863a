// nftables text and script front end: syntax forms from nft(8) and src/parser_bison.y, and ranged
// diagnostics for bad input (each expectation checked against what nft 1.0.6 accepts or refuses).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { NftChain, NftParseResult, NftStmt } from '../../src/engine/nftables/ast.ts';
import { parseNftScript, parseNftText } from '../../src/engine/nftables/parse-script.ts';

const codes = (r: NftParseResult) => r.diagnostics.map(d => d.code);
const strip = (x: unknown): unknown =>
  JSON.parse(JSON.stringify(x, (k, v: unknown) => (k === 'range' ? undefined : v)));

function chain(r: NftParseResult, name: string): NftChain {
  for (const t of r.ruleset.tables) for (const c of t.chains) if (c.name === name) return c;
  throw new Error(`no chain ${name}`);
}

function stmts(rule: string, family = 'inet'): unknown {
  const r = parseNftText(
    `table ${family} t {\n\tchain c {\n\t\t${rule}\n\t}\n\tchain x {\n\t}\n\tset s {\n\t\ttype ipv4_addr\n\t}\n}\n`,
  );
  assert.deepEqual(r.diagnostics, [], rule);
  return strip(chain(r, 'c').rules[0]?.stmts);
}

describe('nftables text: chains', () => {
  it('reads named priorities with offsets per family (nft(8) standard priority names)', () => {
    const r = parseNftText(`table ip t {
	chain a { type filter hook prerouting priority dstnat - 10; policy accept; }
	chain b { type nat hook postrouting priority srcnat; policy accept; }
	chain c { type filter hook prerouting priority mangle + 5; policy drop; }
	chain d { type filter hook input priority -110; }
}
table bridge br {
	chain e { type filter hook forward priority filter; policy accept; }
}`);
    assert.deepEqual(r.diagnostics, []);
    assert.deepEqual(chain(r, 'a').base?.priority, { value: -110, name: 'dstnat', offset: -10 });
    assert.deepEqual(chain(r, 'b').base?.priority, { value: 100, name: 'srcnat' });
    assert.deepEqual(chain(r, 'c').base, {
      type: 'filter',
      hook: 'prerouting',
      priority: { value: -145, name: 'mangle', offset: 5 },
      policy: 'drop',
    });
    assert.deepEqual(chain(r, 'd').base?.priority, { value: -110 });
    assert.equal(chain(r, 'd').base?.policy, 'accept');
    assert.deepEqual(chain(r, 'e').base?.priority, { value: -200, name: 'filter' });
  });

  it('reads netdev chains with devices and keeps regular chains without base', () => {
    const r = parseNftText(
      'table netdev n {\n\tchain ing {\n\t\ttype filter hook ingress device "eth0" priority -500; policy accept;\n\t}\n\tchain reg {\n\t}\n}\n',
    );
    assert.deepEqual(r.diagnostics, []);
    assert.deepEqual(chain(r, 'ing').base?.devices, ['eth0']);
    assert.equal(chain(r, 'reg').base, undefined);
  });

  it('reads handles printed by nft -a on tables, chains, sets and rules', () => {
    const r = parseNftText(
      'table ip t { # handle 7\n\tset s { # handle 3\n\t\ttype ipv4_addr\n\t}\n\tchain c { # handle 1\n\t\tip saddr @s drop # handle 4\n\t}\n}\n',
    );
    assert.deepEqual(r.diagnostics, []);
    const t = r.ruleset.tables[0];
    assert.equal(t?.handle, 7);
    assert.equal(t?.sets[0]?.handle, 3);
    assert.equal(t?.chains[0]?.handle, 1);
    assert.equal(t?.chains[0]?.rules[0]?.handle, 4);
  });

  it("keeps each rule's source range (line of the rule, 0-based)", () => {
    const r = parseNftText(
      'table ip t {\n\tchain c {\n\t\tip saddr 10.0.0.1 drop\n\t\taccept comment "last"\n\t}\n}\n',
    );
    const rules = chain(r, 'c').rules;
    assert.deepEqual(
      rules.map(x => [x.range.start.line, x.range.start.character, x.range.end.line]),
      [
        [2, 2, 2],
        [3, 2, 3],
      ],
    );
    assert.equal(rules[1]?.comment, 'last');
  });
});

describe('nftables text: statements and expressions', () => {
  it('reads kube-proxy statements in libnftables JSON shape', () => {
    assert.deepEqual(stmts('meta mark set meta mark | 0x00004000'), [
      {
        kind: 'mangle',
        key: { kind: 'meta', key: 'mark' },
        value: { kind: 'binop', op: '|', left: { kind: 'meta', key: 'mark' }, right: { kind: 'value', value: 16384 } },
      },
    ]);
    assert.deepEqual(stmts('ip daddr . meta l4proto . th dport vmap @s'), [
      {
        kind: 'vmap',
        key: {
          kind: 'concat',
          items: [
            { kind: 'payload', protocol: 'ip', field: 'daddr' },
            { kind: 'meta', key: 'l4proto' },
            { kind: 'payload', protocol: 'th', field: 'dport' },
          ],
        },
        data: { kind: 'setref', name: 's' },
      },
    ]);
    assert.deepEqual(stmts('numgen random mod 2 vmap { 0 : goto x, 1 : jump x }'), [
      {
        kind: 'vmap',
        key: { kind: 'numgen', mode: 'random', mod: 2, offset: 0 },
        data: {
          kind: 'set',
          items: [
            {
              kind: 'mapping',
              key: { kind: 'value', value: 0 },
              data: { kind: 'verdict', verdict: 'goto', target: 'x' },
            },
            {
              kind: 'mapping',
              key: { kind: 'value', value: 1 },
              data: { kind: 'verdict', verdict: 'jump', target: 'x' },
            },
          ],
        },
      },
    ]);
    assert.deepEqual(stmts('meta l4proto tcp dnat ip to 10.180.0.1:80'), [
      { kind: 'match', op: '==', left: { kind: 'meta', key: 'l4proto' }, right: { kind: 'value', value: 'tcp' } },
      {
        kind: 'nat',
        type: 'dnat',
        family: 'ip',
        addr: { kind: 'value', value: '10.180.0.1' },
        port: { kind: 'value', value: 80 },
        flags: [],
      },
    ]);
    assert.deepEqual(stmts('update @s { ip saddr timeout 3h }'), [
      {
        kind: 'setop',
        op: 'update',
        set: 's',
        elem: { kind: 'elem', value: { kind: 'payload', protocol: 'ip', field: 'saddr' }, timeout: 10800 },
        stmts: [],
      },
    ]);
  });

  it('writes flag comparisons without an operator as "in", with one as written (nft -j)', () => {
    assert.deepEqual(stmts('ct state established,related accept'), [
      {
        kind: 'match',
        op: 'in',
        left: { kind: 'ct', key: 'state' },
        right: {
          kind: 'list',
          items: [
            { kind: 'value', value: 'established' },
            { kind: 'value', value: 'related' },
          ],
        },
      },
      { kind: 'verdict', verdict: 'accept' },
    ]);
    assert.deepEqual(stmts('ct state != new'), [
      { kind: 'match', op: '!=', left: { kind: 'ct', key: 'state' }, right: { kind: 'value', value: 'new' } },
    ]);
    assert.deepEqual(stmts('tcp flags syn / fin,syn,rst,ack'), [
      {
        kind: 'match',
        op: '==',
        left: {
          kind: 'binop',
          op: '&',
          left: { kind: 'payload', protocol: 'tcp', field: 'flags' },
          right: { kind: 'list', items: ['fin', 'syn', 'rst', 'ack'].map(value => ({ kind: 'value', value })) },
        },
        right: { kind: 'value', value: 'syn' },
      },
    ]);
  });

  it('gives a bare reject the type nft stores for the family (src/evaluate.c)', () => {
    assert.deepEqual(stmts('reject', 'ip'), [{ kind: 'reject', type: 'icmp', code: 'port-unreachable' }]);
    assert.deepEqual(stmts('reject', 'ip6'), [{ kind: 'reject', type: 'icmpv6', code: 'port-unreachable' }]);
    assert.deepEqual(stmts('reject', 'inet'), [{ kind: 'reject', type: 'icmpx', code: 'port-unreachable' }]);
    assert.deepEqual(stmts('reject with tcp reset'), [{ kind: 'reject', type: 'tcp reset' }]);
    assert.deepEqual(stmts('reject with icmpx type admin-prohibited'), [
      { kind: 'reject', type: 'icmpx', code: 'admin-prohibited' },
    ]);
  });

  it('reads values: prefixes, ranges, hex, IPv6, NAT address forms, fib, ct directions', () => {
    assert.deepEqual(stmts('ip6 saddr 2001:db8::1-2001:db8::ff tcp dport 1000-2000'), [
      {
        kind: 'match',
        op: '==',
        left: { kind: 'payload', protocol: 'ip6', field: 'saddr' },
        right: {
          kind: 'range',
          low: { kind: 'value', value: '2001:db8::1' },
          high: { kind: 'value', value: '2001:db8::ff' },
        },
      },
      {
        kind: 'match',
        op: '==',
        left: { kind: 'payload', protocol: 'tcp', field: 'dport' },
        right: { kind: 'range', low: { kind: 'value', value: 1000 }, high: { kind: 'value', value: 2000 } },
      },
    ]);
    assert.deepEqual(stmts('dnat to [fd00::10]:8080'), [
      {
        kind: 'nat',
        type: 'dnat',
        addr: { kind: 'value', value: 'fd00::10' },
        port: { kind: 'value', value: 8080 },
        flags: [],
      },
    ]);
    assert.deepEqual(stmts('redirect to :5353'), [
      { kind: 'nat', type: 'redirect', port: { kind: 'value', value: 5353 }, flags: [] },
    ]);
    assert.deepEqual(stmts('masquerade random,persistent'), [
      { kind: 'nat', type: 'masquerade', flags: ['random', 'persistent'] },
    ]);
    assert.deepEqual(stmts('fib saddr . iif oif missing drop'), [
      {
        kind: 'match',
        op: '==',
        left: { kind: 'fib', flags: ['saddr', 'iif'], result: 'oif' },
        right: { kind: 'value', value: false },
      },
      { kind: 'verdict', verdict: 'drop' },
    ]);
    assert.deepEqual(stmts('ct original ip daddr 10.0.0.1'), [
      {
        kind: 'match',
        op: '==',
        left: { kind: 'ct', key: 'ip daddr', dir: 'original' },
        right: { kind: 'value', value: '10.0.0.1' },
      },
    ]);
    assert.deepEqual(stmts('meta mark 0xffffffffffffffff'), [
      {
        kind: 'match',
        op: '==',
        left: { kind: 'meta', key: 'mark' },
        right: { kind: 'value', value: '0xffffffffffffffff' },
      },
    ]);
  });

  it('reads counter, log, limit, quota, queue and notrack', () => {
    const s = stmts(
      'counter packets 3 bytes 180 log prefix "x: " level warn group 2 limit rate over 1 mbytes/second burst 2 mbytes quota until 5 mbytes used 1 mbytes notrack queue num 1-3 bypass',
    ) as NftStmt[];
    assert.deepEqual(
      s.map(x => x.kind),
      ['counter', 'log', 'limit', 'quota', 'notrack', 'queue'],
    );
    assert.deepEqual(s[2], {
      kind: 'limit',
      rate: 1,
      per: 'second',
      burst: 2,
      unit: 'mbytes',
      burstUnit: 'mbytes',
      inv: true,
    });
    assert.deepEqual(s[3], { kind: 'quota', value: 5, unit: 'mbytes', used: 1, usedUnit: 'mbytes', inv: false });
  });
});

describe('nftables text: sets, maps, flowtables, objects', () => {
  it('reads set declarations, element options and flowtables', () => {
    const r = parseNftText(`table inet t {
	flowtable ft {
		hook ingress priority filter + 1
		devices = { eth0, "eth1" }
		flags offload
	}
	counter cnt {
		packets 12 bytes 3400
	}
	set s {
		type ipv4_addr . inet_service
		size 1024
		flags interval,timeout
		timeout 1d2h
		gc-interval 30s
		elements = { 10.0.0.0/8 . 80-90 timeout 10m expires 9m59s500ms comment "a",
			     192.0.2.1 . 22 }
	}
	map m {
		typeof ip daddr : meta mark
		elements = { 10.0.0.1 : 0x1 }
	}
}`);
    assert.deepEqual(r.diagnostics, []);
    const t = r.ruleset.tables[0];
    assert.deepEqual(strip(t?.flowtables), [
      {
        family: 'inet',
        table: 't',
        name: 'ft',
        hook: 'ingress',
        priority: { value: 1, name: 'filter', offset: 1 },
        devices: ['eth0', 'eth1'],
        flags: ['offload'],
      },
    ]);
    assert.deepEqual(strip(t?.objects), [
      { family: 'inet', table: 't', type: 'counter', name: 'cnt', props: { packets: 12, bytes: 3400 } },
    ]);
    const s = t?.sets[0];
    assert.deepEqual(
      [s?.type, s?.size, s?.flags, s?.timeout, s?.gcInterval],
      [['ipv4_addr', 'inet_service'], 1024, ['interval', 'timeout'], 93600, 30],
    );
    assert.deepEqual(strip(s?.elements[0]), {
      kind: 'elem',
      value: {
        kind: 'concat',
        items: [
          { kind: 'prefix', addr: { kind: 'value', value: '10.0.0.0' }, len: 8 },
          { kind: 'range', low: { kind: 'value', value: 80 }, high: { kind: 'value', value: 90 } },
        ],
      },
      timeout: 600,
      expires: 599,
      comment: 'a',
    });
    const m = t?.sets[1];
    assert.deepEqual([m?.type, m?.map, m?.elements.length], [['ipv4_addr'], ['mark'], 1]);
  });
});

describe('nftables scripts', () => {
  it('applies add/insert/replace/delete/flush in order, as nft -f does', () => {
    const r = parseNftScript(`add table ip t
add chain ip t c
add rule ip t c ip saddr 10.0.0.1 accept
add rule ip t c ip saddr 10.0.0.2 accept
insert rule ip t c ip saddr 10.0.0.0 accept
add chain ip t gone
delete chain ip t gone
add set ip t s { type ipv4_addr ; }
add element ip t s { 1.1.1.1, 2.2.2.2 }
delete element ip t s { 1.1.1.1 }
add chain ip t f
add rule ip t f drop
flush chain ip t f
`);
    assert.deepEqual(r.diagnostics, []);
    const t = r.ruleset.tables[0];
    assert.deepEqual(
      t?.chains.map(c => [c.name, c.rules.length]),
      [
        ['c', 3],
        ['f', 0],
      ],
    );
    assert.deepEqual(
      strip(chain(r, 'c').rules.map(x => (x.stmts[0] as { right: unknown }).right)),
      ['10.0.0.0', '10.0.0.1', '10.0.0.2'].map(value => ({ kind: 'value', value })),
    );
    assert.deepEqual(strip(t?.sets[0]?.elements), [{ kind: 'value', value: '2.2.2.2' }]);
  });

  it('replace, delete and position address rules by the handles an nft -a listing carries', () => {
    const r = parseNftScript(`table ip t { # handle 1
	chain c { # handle 1
		ip saddr 10.0.0.1 accept # handle 4
		ip saddr 10.0.0.2 accept # handle 5
		ip saddr 10.0.0.3 accept # handle 6
	}
}
replace rule ip t c handle 4 ip saddr 10.0.0.9 drop
delete rule ip t c handle 5
add rule ip t c position 6 ip saddr 10.0.0.7 accept
insert rule ip t c position 6 ip saddr 10.0.0.8 accept
delete rule ip t c handle 99
`);
    assert.deepEqual(codes(r), ['bad-rule-number']);
    assert.equal(r.diagnostics[0]?.range.start.line, 11);
    const addrs = chain(r, 'c').rules.map(x => (x.stmts[0] as { right: { value: unknown } }).right.value);
    // Same order as the real nft 1.0.6 gives for these commands; a replaced rule keeps its handle.
    assert.deepEqual(addrs, ['10.0.0.9', '10.0.0.8', '10.0.0.3', '10.0.0.7']);
    assert.deepEqual(
      chain(r, 'c').rules.map(x => x.handle),
      [4, undefined, 6, undefined],
    );
  });

  it('substitutes define variables, including sets, at their use', () => {
    const r = parseNftScript(
      'define nets = { 10.0.0.0/8, 192.168.0.0/16 }\ndefine port = 22\ntable inet t {\n\tchain c {\n\t\tip saddr $nets tcp dport $port accept\n\t}\n}\n',
    );
    assert.deepEqual(r.diagnostics, []);
    const s = chain(r, 'c').rules[0]?.stmts as NftStmt[];
    assert.equal(s[0]?.kind === 'match' && s[0].right.kind, 'set');
    assert.deepEqual(strip(s[1]), {
      kind: 'match',
      op: '==',
      left: { kind: 'payload', protocol: 'tcp', field: 'dport' },
      right: { kind: 'value', value: 22 },
    });
  });
});

describe('nftables: bad input gets ranged diagnostics', () => {
  it('a define cycle and an undefined variable', () => {
    const r = parseNftScript('define a = $a\ntable ip t {\n\tchain c {\n\t\tip saddr $nope drop\n\t}\n}\n');
    assert.deepEqual(codes(r), ['define-cycle', 'undefined-variable']);
    assert.deepEqual(
      r.diagnostics.map(d => [d.range.start.line, d.range.start.character]),
      [
        [0, 11],
        [3, 11],
      ],
    );
  });

  it('include is reported, not followed', () => {
    const r = parseNftScript('include "/etc/nftables.d/*.nft"\n');
    assert.deepEqual(codes(r), ['include-not-followed']);
    assert.equal(r.diagnostics[0]?.severity, 'warning');
  });

  it('an unknown statement keeps the rule, as unknown, with the rest of the chain', () => {
    const r = parseNftText('table ip t {\n\tchain c {\n\t\tip saddr 1.2.3.4 frobnicate 7 drop\n\t\taccept\n\t}\n}\n');
    assert.deepEqual(codes(r), ['unknown-statement']);
    assert.deepEqual(r.diagnostics[0]?.range.start, { line: 2, character: 19 });
    assert.deepEqual(
      chain(r, 'c').rules.map(x => x.stmts.map(s => s.kind)),
      [['match', 'unknown'], ['verdict']],
    );
  });

  it('unbalanced braces: a missing "}" and a stray "}"', () => {
    const open = parseNftText('table ip t {\n\tchain c {\n\t\taccept\n');
    assert.deepEqual(codes(open), ['unbalanced-braces', 'unbalanced-braces']);
    assert.equal(chain(open, 'c').rules.length, 1);
    const stray = parseNftText('table ip t {\n}\n}\n');
    assert.deepEqual(codes(stray), ['unbalanced-braces']);
    assert.equal(stray.diagnostics[0]?.range.start.line, 2);
  });

  it('undefined sets and chains are named at their reference', () => {
    const r = parseNftText(
      'table ip t {\n\tchain c {\n\t\tip saddr @nosuch jump nochain\n\t\tmeta l4proto vmap { tcp : goto gone }\n\t}\n}\n',
    );
    assert.deepEqual(codes(r).sort(), ['unknown-chain', 'unknown-chain', 'unknown-set']);
    assert.ok(r.diagnostics.every(d => d.range.start.line >= 2));
  });

  it('rules for missing tables and chains in scripts', () => {
    const r = parseNftScript('add rule ip nosuch c accept\nadd table ip t\nadd rule ip t nochain accept\n');
    assert.deepEqual(codes(r), ['unknown-table', 'unknown-chain']);
    assert.deepEqual(
      r.diagnostics.map(d => d.range.start.line),
      [0, 2],
    );
  });
});
