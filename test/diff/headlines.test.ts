/**
 * The review-shaped headlines of a diff report (src/engine/diff/headlines.ts) on the fixture pairs whose
 * change is known by construction (test/fixtures/diff/README.md): the sentence a reviewer reads first names
 * the Service and the endpoint it lost or gained, the policy that changed, the rule that now drops. The
 * expected words come from each fixture's stated change, not from the engine.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  diffRulesets,
  formatDiffMarkdown,
  formatDiffText,
  parseAddr,
  parseIptables,
  parseNet,
  parseRuleset,
} from '../../src/engine/api.ts';
import { ROOT } from '../helpers/fixtures.ts';
import { DIFF_FIXTURES, NODE, diffFixture, readPair } from './helpers.ts';

const texts = (name: string) => diffFixture(name).headlines.map(h => h.text);

describe('diff headlines', () => {
  it('the seed "remove one endpoint" change starts with the endpoint svc3 lost and where its traffic goes now', () => {
    // endpoint-removed: svc3's KUBE-SEP for 10.10.4.12:80 and its statistic rule are gone (fixture README).
    const report = diffFixture('endpoint-removed');
    const first = 'default/svc3:svc3-webport lost endpoint 10.10.4.12:80; its traffic now all goes to 10.10.1.11:80';
    assert.deepEqual(texts('endpoint-removed'), [first]);
    assert.equal(formatDiffText(report).split('\n')[0], `${first}.`);
    assert.match(formatDiffMarkdown(report), new RegExp(`^- \\*\\*${first.replace(/[.:/]/g, '\\$&')}\\.\\*\\*$`, 'm'));
    // The headline sums up every class of the Service and points at the rules that make the difference.
    assert.deepEqual(
      [...report.headlines[0]!.changes].sort((a, b) => a - b),
      report.groups[0]!.changes.slice().sort((a, b) => a - b),
    );
    assert.ok(report.headlines[0]!.rules.some(r => r.chain === 'KUBE-SVC-CY3XQR2NWKKCV4WA'));
  });

  it('an added endpoint: gained, and the new equal split', () => {
    assert.deepEqual(texts('endpoint-added'), [
      'default/svc1:svc1-webport gained endpoint 10.10.2.13:80; its traffic is now split 10.10.1.11:80 33.33%, 10.10.2.13:80 33.33% and 10.10.4.12:80 33.33%',
    ]);
  });

  it('externalTrafficPolicy Local: an endpoint kube-proxy still writes is not called lost', () => {
    const [first] = texts('etp-local');
    assert.equal(
      first,
      'default/svc1:svc1-webport: 10.10.1.11:80 no longer receives its traffic from outside the node; its traffic now all goes to 10.10.4.12:80',
    );
    assert.ok(!texts('etp-local').some(t => /lost endpoint/.test(t)));
  });

  it('a policy change comes first, in its own words', () => {
    const [first] = texts('kernel/forward-policy');
    assert.match(first!, /^the policy of filter FORWARD changed from ACCEPT to DROP: now drops /);
  });

  it('a new DROP at the head of filter INPUT says what it drops', () => {
    assert.deepEqual(
      texts('kernel/input-first-added').map(t => t.replace(/, and \d+ more packet classes alike$/, '')),
      // The classes share the rule's source range and port; their local destinations differ (the node's
      // address, loopback, broadcast…), so the sentence names the port only.
      [
        'a new DROP rule in filter INPUT (line 18) now drops tcp from 198.51.100.0/24 to port 22 (was delivered locally)',
      ],
    );
  });

  it('a field the rule never reads is not named after the first class (no source range from nowhere)', () => {
    // The same DROP without `-s`: the classes' source ranges differ and none of them is the rule's.
    const [old] = readPair('kernel/input-first-added');
    const text = readFileSync(join(DIFF_FIXTURES, 'kernel/input-first-added', 'new.rules'), 'utf8');
    const noSource = parseIptables(text.replace('-A INPUT -s 198.51.100.0/24 -p tcp', '-A INPUT -p tcp'), {
      file: 'new.rules',
    });
    const r = diffRulesets(old, noSource, { node: NODE });
    assert.ok(r.ok);
    assert.deepEqual(
      r.report.headlines.map(h => h.text.replace(/, and \d+ more packet classes alike$/, '')),
      ['a new DROP rule in filter INPUT (line 18) now drops tcp to port 22 (was delivered locally)'],
    );
  });

  it('an nft rule has no iptables target: "a new rule", never "a new rule rule"', () => {
    const before = readFileSync(join(ROOT, 'examples', 'nftables', 'kube-proxy.nft'), 'utf8');
    const head = 'type filter hook input priority filter; policy accept;\n';
    assert.ok(before.includes(head));
    const after = before.replace(head, `${head}\t\ttcp dport 22 drop\n`);
    const r = diffRulesets(
      parseRuleset(before, { file: 'a.nft' }).ruleset,
      parseRuleset(after, { file: 'b.nft' }).ruleset,
      {
        node: NODE,
      },
    );
    assert.ok(r.ok, r.ok ? '' : r.error);
    const [first] = r.report.headlines.map(h => h.text);
    assert.match(
      first!,
      /^a new rule in \S+ filter-input \(line \d+\) now drops tcp to port 22 \(was delivered locally\)/,
    );
  });

  it('no change, no headline', () => {
    assert.deepEqual(texts('comments-only'), []);
    assert.deepEqual(texts('reordered'), []);
  });

  for (const name of [
    'endpoint-added',
    'endpoint-removed',
    'etp-local',
    'drop-shadows-service',
    'kernel/forward-policy',
    'kernel/kube-services-added',
  ]) {
    it(`${name}: every changed class is summed up by a headline`, () => {
      const report = diffFixture(name);
      const told = new Set(report.headlines.flatMap(h => h.changes));
      assert.deepEqual(
        report.changes.map((_, i) => i).filter(i => !told.has(i)),
        [],
      );
    });
  }
});

/** The documentation ranges (RFC 5737, RFC 3849) a class holding one must take its client from. */
const DOC = ['192.0.2.0/24', '198.51.100.0/24', '203.0.113.0/24'].map(n => parseNet(n) as { n: number; mask: number });

function spanHoldsDoc(src: string): boolean {
  if (src === 'any') return true;
  const [lo, hi] = src.includes('–') ? src.split('–') : [src, src];
  const [a, b] = [parseAddr(lo!), parseAddr(hi!)];
  if (!a || !b || a.v !== 4) return false;
  return DOC.some(n => n.n >>> 0 >= (a.n as number) >>> 0 && (n.n >>> 0) + 255 <= (b.n as number) >>> 0);
}

describe('representative clients', () => {
  for (const name of ['endpoint-removed', 'endpoint-added', 'kernel/forward-drop-partner']) {
    it(`${name}: a class whose clients include a documentation range is shown with one; none with a public address`, () => {
      for (const c of diffFixture(name).changes) {
        const src = c.class.packet.split(' ')[1]!.replace(/:\d+$/, '');
        assert.notEqual(src, '1.0.0.10', c.class.packet);
        if (c.class.extent.from === 'outside' && spanHoldsDoc(c.class.extent.src))
          assert.ok(
            DOC.some(n => ((parseAddr(src)?.n as number) & n.mask) >>> 0 === n.n >>> 0),
            `${c.class.packet} (clients ${c.class.extent.src})`,
          );
        const a = parseAddr(src);
        // Outside the documentation ranges a client is a special-use address or one the rules name.
        if (a?.v === 4 && c.class.extent.from === 'outside' && c.class.extent.src.includes('–'))
          assert.ok(!/^1\.0\.0\./.test(src), c.class.packet);
      }
    });
  }
});
