/**
 * "Identical" only with proof (issue 11, deliverable 1): the seed-003 dump with one FORWARD DROP of a
 * partner range on port 80 (before: "Behaviour is identical", green, exit 0), an answer the classes cannot
 * prove (worded "no change found (approximate)", exit 1, the rule listed as not explored), the proven
 * no-change cases (exit 0), and the pieces of the proof: box splitting and the editor's wording.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { diffRulesets, parseIptables } from '../../src/engine/api.ts';
import { diffLensTitle, diffViewModel } from '../../src/editor/diff-view.ts';
import { cli } from '../helpers/cli.ts';
import { tempFile } from '../helpers/fixtures.ts';
import { DIFF_FIXTURES } from './helpers.ts';

const KERNEL = join(DIFF_FIXTURES, 'kernel');
const pair = (name: string) => [join(KERNEL, name, 'old.rules'), join(KERNEL, name, 'new.rules')];
const NODE = ['--node-ip', '172.18.0.4'];
const FILTER_HEAD = '*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n';
const tmp = (name: string, text: string) => tempFile(name, text, 'packetlens-proof-');

describe('the diff says "identical" only with proof', () => {
  it('finds the DROP of a partner range on port 80 that the issue shows called identical, with the dropped packets', () => {
    const r = cli('diff', ...pair('forward-drop-partner'), ...NODE, '--json');
    assert.equal(r.code, 1, r.err.join('\n'));
    const report = JSON.parse(r.out[0]!);
    assert.equal(report.identical, false);
    assert.equal(report.verdict, 'changed');
    assert.equal(report.proven, true, report.approximations.join('; '));
    const lb = report.changes.filter(
      (c: { class: { extent: { dst: string; src: string; dport: string } } }) =>
        c.class.extent.dst === '172.18.255.201',
    );
    assert.ok(lb.length > 0, 'the LoadBalancer IP on port 80 is reported');
    for (const c of report.changes) {
      assert.equal(c.class.extent.src, '198.51.100.0/24', `${c.class.packet}: only the partner range changes`);
      assert.equal(c.class.extent.protocol, 'tcp');
      assert.ok(
        c.new.every((f: { disposition: string }) => f.disposition === 'dropped'),
        c.class.packet,
      );
      assert.ok(c.newRules.some((x: { text: string }) => x.text.includes('block partner range')));
    }
    const text = cli('diff', ...pair('forward-drop-partner'), ...NODE).out.join('\n');
    assert.doesNotMatch(text, /identical/);
  });

  it('exits 0 only for a proven same behaviour: a reorder of disjoint rules and a comment change', () => {
    // busy-reorder, the same proof on a busier dump, is in the slow suite (kernel.slow.test.ts asserts its
    // verdict is identical, as the kernel's probes agree).
    for (const name of ['reorder-disjoint', 'comment-only']) {
      const r = cli('diff', ...pair(name), ...NODE);
      assert.equal(r.code, 0, `${name}: ${r.out.join('\n')}`);
      assert.ok(
        r.out.some(l => l.startsWith('behaviour is identical')),
        name,
      );
    }
  });

  it('an unproven "no change" is never worded identical, exits 1 and lists the rules not explored', () => {
    // `-m length` is not a field the classes split on: the representative's length cannot speak for all.
    const old = `${FILTER_HEAD}-A INPUT -p tcp -m tcp --dport 22 -m length --length 0:100 -j DROP\nCOMMIT\n`;
    const neu = `${FILTER_HEAD}-A INPUT -p tcp -m tcp --dport 22 -m length --length 0:200 -j DROP\nCOMMIT\n`;
    const [a, b] = [tmp('old.rules', old), tmp('new.rules', neu)];
    const r = cli('diff', a, b, ...NODE);
    assert.equal(r.code, 1);
    const text = r.out.join('\n');
    assert.match(text, /no change found \(approximate\)/);
    assert.doesNotMatch(text, /identical/);
    assert.match(
      text,
      /^not explored: .*new\.rules:5 {2}filter INPUT #1 {2}-p tcp -m tcp --dport 22 -m length --length 0:200 -j DROP$/m,
    );
    assert.match(text, /^approximate: .*length/m);
    const json = JSON.parse(cli('diff', a, b, ...NODE, '--json').out[0]!);
    assert.deepEqual(
      [json.identical, json.proven, json.verdict, json.approximate],
      [false, false, 'no-change-found', true],
    );
    const md = cli('diff', a, b, ...NODE, '--markdown').out.join('\n');
    assert.match(md, /\*\*no change found \(approximate\)/);
    assert.doesNotMatch(md, /identical/i);
    // The editor: no "same behaviour" in the lens, no green "identical" block, the reason first.
    const rep = diffRulesets(parseIptables(old, { file: 'old.rules' }), parseIptables(neu, { file: 'new.rules' }), {
      node: { addresses: ['172.18.0.4'] },
    });
    assert.ok(rep.ok);
    assert.doesNotMatch(diffLensTitle(rep.report), /same behaviour/);
    assert.match(diffLensTitle(rep.report), /no change found \(approximate\)/);
    const v = diffViewModel(rep.report, 'old.rules', 'new.rules');
    assert.equal(v.identical, false);
    assert.match(v.approximations[0]!, /^no change found \(approximate\)/);
    assert.ok(v.approximations.some(x => x.startsWith('not explored: ') && x.includes('--length 0:200')));
  });

  it('a rule on a chain reached from several places claims only the packets it changes', () => {
    const text = readFileSync(join(KERNEL, 'shared-chain-added', 'new.rules'), 'utf8');
    assert.match(text, /-A SSHGATE -s 203\.0\.113\.0\/24 -p tcp -j DROP/);
    const r = cli('diff', ...pair('shared-chain-added'), ...NODE, '--json');
    const report = JSON.parse(r.out[0]!);
    assert.ok(report.changes.length > 0);
    for (const c of report.changes) {
      assert.equal(c.class.extent.src, '203.0.113.0/24', c.class.packet);
      assert.equal(c.class.extent.dport, '22', c.class.packet);
      assert.equal(c.class.extent.protocol, 'tcp', c.class.packet);
    }
    // Both places that reach the chain: packets to the node and packets routed through it.
    assert.deepEqual(
      new Set(report.changes.map((c: { new: { disposition: string }[] }) => c.new[0]!.disposition)),
      new Set(['dropped']),
    );
    assert.ok(report.changes.some((c: { old: { disposition: string }[] }) => c.old[0]!.disposition === 'rejected'));
  });

  it('a new first INPUT rule is reported over its whole range, not one packet', () => {
    const report = JSON.parse(cli('diff', ...pair('input-first-added'), ...NODE, '--json').out[0]!);
    const ranges = report.changes.map(
      (c: { class: { extent: { src: string; dport: string; sport: string } } }) =>
        `${c.class.extent.src} ${c.class.extent.sport}->${c.class.extent.dport}`,
    );
    assert.ok(ranges.includes('198.51.100.0/24 any->22'), ranges.join('; '));
  });

  it('does not leave out a jump into a chain that ACCEPTs: a packet it accepts meets a changed chain later', () => {
    // filter FORWARD (unchanged) accepts 10.1.0.0/16 through ALLOWED, which reaches no changed chain and
    // rewrites nothing; the policy drops the rest. Only the accepted packets reach nat POSTROUTING, where
    // the changed chain CHG no longer masquerades 10.0.0.0/8. The shortcut used to leave the jump out of the
    // proof of the class whose packets the policy drops, and called the two dumps identical (proven).
    const nat = (masq: boolean) =>
      `*nat\n:PREROUTING ACCEPT [0:0]\n:INPUT ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\n:CHG - [0:0]\n-A POSTROUTING -j CHG\n${masq ? '-A CHG -s 10.0.0.0/8 -j MASQUERADE\n' : ''}COMMIT\n`;
    const filter = `*filter\n:INPUT ACCEPT [0:0]\n:FORWARD DROP [0:0]\n:OUTPUT ACCEPT [0:0]\n:ALLOWED - [0:0]\n-A FORWARD -d 10.1.0.0/16 -j ALLOWED\n-A ALLOWED -j ACCEPT\nCOMMIT\n`;
    const a = parseIptables(nat(true) + filter, { file: 'old.rules' });
    const b = parseIptables(nat(false) + filter, { file: 'new.rules' });
    const r = diffRulesets(a, b, { node: { addresses: ['192.0.2.1'] } });
    assert.ok(r.ok);
    assert.equal(r.report.identical, false);
    assert.ok(r.report.changes.length > 0, r.report.summary);
    for (const c of r.report.changes) {
      assert.equal(c.class.extent.src, '10.0.0.0/8', c.class.packet);
      assert.equal(c.class.extent.dst, '10.1.0.0/16', c.class.packet);
      assert.deepEqual([c.old[0]!.masquerade, c.new[0]!.masquerade], [true, false], c.class.packet);
    }
  });
});

describe('representative packets name no real host where the range allows (issue 17)', () => {
  it('takes an outside client from a documentation range inside the class range', () => {
    const head = '*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n';
    const a = parseIptables(`${head}COMMIT\n`, { file: 'old.rules' });
    const b = parseIptables(`${head}-A INPUT -s 192.0.0.0/8 -p tcp --dport 22 -j DROP\nCOMMIT\n`, {
      file: 'new.rules',
    });
    const r = diffRulesets(a, b, { node: { addresses: ['10.0.0.1'] } });
    assert.ok(r.ok);
    const c = r.report.changes.find(x => x.class.extent.src === '192.0.0.0/8' && x.class.extent.dst === '10.0.0.1');
    assert.ok(c, r.report.changes.map(x => x.class.packet).join('; '));
    // 192.0.0.1 (the range's second address) is a real host; 192.0.2.10 is RFC 5737 TEST-NET-1.
    assert.match(c.class.packet, /^tcp 192\.0\.2\.10:\d+ -> 10\.0\.0\.1:22/);
  });
});
