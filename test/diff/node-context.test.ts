/**
 * The semantic diff with the node's own files (nodectx/): the node's routes decide which interface a
 * packet leaves by, so a rule that tests `-o` must be compared on classes cut where the routes are. The
 * node is the kernel oracle's seed-003 node (test/fixtures/nodectx/seed-003-oracle: 10.10.1.11/32 via
 * veth1, 10.10.4.12/32 via veth2, default via eth0).
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { diffRulesets, parseIptables, readNodeContext } from '../../src/engine/api.ts';

const BUNDLE = join(import.meta.dirname, '../fixtures/nodectx/seed-003-oracle');
const context = readNodeContext(
  readdirSync(BUNDLE)
    .filter(n => /^(ip-|sysctl)/.test(n))
    .map(n => ({ file: n, text: readFileSync(join(BUNDLE, n), 'utf8') })),
).context;

const filter = (extra: string) =>
  `*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n${extra}COMMIT\n`;

describe('diff with the node files: classes are cut where the node routes', () => {
  it('a new -o veth1 DROP changes what goes to 10.10.1.11 (routed out of veth1 by the node)', () => {
    const oldRs = parseIptables(filter(''), { file: 'old.rules' });
    const newRs = parseIptables(filter('-A FORWARD -o veth1 -j DROP\n'), { file: 'new.rules' });
    const r = diffRulesets(oldRs, newRs, { node: { context } });
    assert.ok(r.ok);
    assert.equal(r.report.identical, false);
    const hit = r.report.changes.find(c => /-> 10\.10\.1\.11\b/.test(c.class.packet));
    assert.ok(hit, r.report.changes.map(c => c.class.packet).join('\n') || r.report.summary);
    assert.equal(hit.new[0]!.disposition, 'dropped');
  });

  it('policy rules that select by mark make the comparison approximate, and say why', () => {
    const marked = readNodeContext([
      ...context.sources.map(s => ({ file: s.file, text: readFileSync(join(BUNDLE, s.file), 'utf8') })),
      { file: 'ip-rule-mark.json', text: '[{"priority":100,"src":"all","fwmark":"0x4000","table":"100"}]' },
    ]).context;
    const oldRs = parseIptables(filter(''), { file: 'old.rules' });
    const newRs = parseIptables(filter('-A FORWARD -d 10.99.0.0/16 -j DROP\n'), { file: 'new.rules' });
    const same = diffRulesets(oldRs, oldRs, { node: { context: marked } });
    assert.ok(same.ok && same.report.identical, 'the same rules on the same node stay identical');
    const r = diffRulesets(oldRs, newRs, { node: { context: marked } });
    assert.ok(r.ok);
    assert.equal(r.report.identical, false);
    assert.ok(
      r.report.approximations.some(a => /policy routing rules select by mark/.test(a)),
      r.report.approximations.join('\n'),
    );
  });
});
