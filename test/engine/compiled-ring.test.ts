/**
 * At most MAX_COMPILED_PER_TABLE rules of a table stay compiled (issue 12: memory): a comparison of two
 * 320k-rule dumps whose classes reached every rule kept 0.9 GB of compiled rules. A forgotten rule compiles
 * again, the same, when it is read.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { generateKubeProxyDump, serviceAt } from '../../bench/generate.ts';
import { parseIptables, tracePacket } from '../../src/engine/api.ts';
import { IptRule, MAX_COMPILED_PER_TABLE } from '../../src/engine/iptables/rule-node.ts';

const SERVICES = 3100;
const ENDPOINTS = 3;

function natRules(rs: ReturnType<typeof parseIptables>): IptRule[] {
  return [...rs.tables.get('nat')!.chains.values()].flatMap(c => c.rules as IptRule[]);
}

describe('compiled rules per table', () => {
  it('reading every rule of a table keeps at most MAX_COMPILED_PER_TABLE compiled, and traces answer the same', () => {
    const text = generateKubeProxyDump(SERVICES, ENDPOINTS);
    const rs = parseIptables(text, { file: 'kube.rules', lazy: true });
    const rules = natRules(rs);
    assert.ok(rules.length > MAX_COMPILED_PER_TABLE, `${rules.length} rules`);
    const comments = rules.map(r => r.comment);
    const compiled = rules.filter(r => r.isCompiled()).length;
    assert.ok(compiled <= MAX_COMPILED_PER_TABLE, `${compiled} rules of ${rules.length} stay compiled`);
    assert.equal(rules[0]!.isCompiled(), false, 'the first rule compiled is still compiled');
    assert.equal(rules.at(-1)!.isCompiled(), true);
    // Forgotten rules compile again to the same thing.
    assert.deepEqual(
      rules.map(r => r.comment),
      comments,
    );
    const fresh = parseIptables(text, { file: 'kube.rules', lazy: true });
    for (const i of [0, 1234, SERVICES - 1]) {
      const s = serviceAt(i, ENDPOINTS);
      const packet = { protocol: 'tcp' as const, src: '203.0.113.10', dst: s.clusterIP, dport: s.port };
      const a = tracePacket(rs, packet, { node: { addresses: ['192.0.2.1'] } });
      const b = tracePacket(fresh, packet, { node: { addresses: ['192.0.2.1'] } });
      assert.ok(a.ok && b.ok);
      assert.deepEqual(JSON.parse(JSON.stringify(a.trace)), JSON.parse(JSON.stringify(b.trace)));
    }
  });
});
