/**
 * A trace compiles the rules it reads, not the whole dump (issue 12: memory). On a 320k-rule kube-proxy
 * dump, compiled rules are most of what a parse grows into: the node hints and the live-mark scan once
 * compiled every KUBE-SEP rule (100k per dump, 250 MB kept for a comparison of two such dumps).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { generateKubeProxyDump, serviceAt } from '../../bench/generate.ts';
import { parseIptables, tracePacket } from '../../src/engine/api.ts';
import { IptRule } from '../../src/engine/iptables/rule-node.ts';
import { liveMarks } from '../../src/engine/eval/budget.ts';

const SERVICES = 40;
const ENDPOINTS = 3;

/** The KUBE-SEP rules that were compiled, by chain. */
function compiledSepRules(rs: ReturnType<typeof parseIptables>): string[] {
  const out: string[] = [];
  for (const [name, chain] of rs.tables.get('nat')!.chains)
    if (name.startsWith('KUBE-SEP-'))
      for (const r of chain.rules) if (r instanceof IptRule && r.isCompiled()) out.push(`${name} line ${r.line}`);
  return out;
}

describe('lazy compilation', () => {
  it('a trace to one Service compiles only that Service’s endpoint rules, with or without node settings', () => {
    const svc = serviceAt(7, ENDPOINTS);
    for (const node of [undefined, { addresses: ['192.0.2.1'] }]) {
      const rs = parseIptables(generateKubeProxyDump(SERVICES, ENDPOINTS), { file: 'kube.rules', lazy: true });
      // A written source the node settings do not make local: the trace asks whether it is an API server node.
      const r = tracePacket(
        rs,
        { protocol: 'tcp', src: '203.0.113.10', dst: svc.clusterIP, dport: svc.port },
        { node },
      );
      assert.ok(r.ok);
      assert.equal(r.trace.outcomes.length, ENDPOINTS);
      const compiled = compiledSepRules(rs);
      // Each endpoint chain of the traced Service: its two rules (the masquerade check and the DNAT).
      assert.ok(
        compiled.length <= 2 * ENDPOINTS,
        `${compiled.length} KUBE-SEP rules compiled: ${compiled.slice(0, 8).join(', ')}…`,
      );
    }
  });

  it('a rule whose only "mark" is a jump to a chain named so is not compiled to find the live mark bits (which stay the same)', () => {
    const rs = parseIptables(
      [
        '*nat',
        ':KUBE-MARK-MASQ - [0:0]',
        ':KUBE-SEP-A - [0:0]',
        ':UNUSED - [0:0]',
        '-A PREROUTING -d 10.0.0.1/32 -j KUBE-SEP-A',
        '-A KUBE-SEP-A -s 10.1.0.1/32 -j KUBE-MARK-MASQ',
        '-A KUBE-SEP-A -p tcp -m tcp -j DNAT --to-destination 10.1.0.1:80',
        '-A KUBE-MARK-MASQ -j MARK --or-mark 0x4000',
        '-A POSTROUTING -m mark --mark 0x4000/0x4000 -j MASQUERADE',
        '-A UNUSED -m comment --comment "mark words in a comment" -j KUBE-SEP-A',
        'COMMIT',
        '',
      ].join('\n'),
      { lazy: true },
    );
    assert.deepEqual(liveMarks(rs, false), { nf: 0x4000, ct: 0 });
    const nat = rs.tables.get('nat')!.chains;
    const rule = (chain: string, i: number) => nat.get(chain)!.rules[i] as IptRule;
    assert.equal(rule('KUBE-SEP-A', 0).isCompiled(), false, 'the jump to KUBE-MARK-MASQ was compiled');
    // The rules that do read or write marks, and the one whose comment says "mark", are compiled.
    assert.equal(rule('KUBE-MARK-MASQ', 0).isCompiled(), true);
    assert.equal(rule('POSTROUTING', 0).isCompiled(), true);
    assert.equal(rule('UNUSED', 0).isCompiled(), true);
  });
});
