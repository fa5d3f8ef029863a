/**
 * The CLI on nftables input (../shared/reference/cli-contract.md, "nftables"): `check` and `trace` read all
 * three forms by content; trace steps carry family, table, chain, 1-based position, line and the verdict as
 * nft writes it. Expected hits are the kernel's for the same probe (test/fixtures/kernel-nft/kube-proxy).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { cli } from '../helpers/cli.ts';
import { FIXTURES } from '../helpers/fixtures.ts';

const dir = join(FIXTURES, 'kernel-nft', 'kube-proxy');

describe('packetlens on nftables rulesets', () => {
  for (const [form, format] of [
    ['ruleset.nft', 'nft-script'],
    ['ruleset.txt', 'nft-text'],
    ['ruleset-a.txt', 'nft-text'],
    ['ruleset.json', 'nft-json'],
  ] as const) {
    it(`check reads ${form} as ${format} without errors`, () => {
      const r = cli('check', join(dir, form));
      assert.equal(r.code, 0, r.out.join('\n') + r.err.join('\n'));
      assert.match(
        r.out.join('\n'),
        new RegExp(`1 table, 32 chains, 57 rules \\(nftables, ${format}\\); 0 errors, 0 warnings`),
      );
    });
  }

  it('trace --json: steps name family, table, chain, position, line and the nft verdict', () => {
    const r = cli(
      'trace',
      join(dir, 'ruleset.nft'),
      '--packet',
      'tcp 203.0.113.2:42003 -> 172.30.0.41:80',
      '--node-ip',
      '172.18.0.4',
      '--json',
    );
    assert.equal(r.code, 0, r.err.join('\n'));
    const t = JSON.parse(r.out.join('')) as {
      outcomes: {
        disposition: string;
        dnat: string;
        steps: { family: string; table: string; chain: string; rule: number; line: number; verdict: string }[];
      }[];
    };
    assert.equal(t.outcomes.length, 1);
    const o = t.outcomes[0]!;
    assert.equal(o.dnat, '10.180.0.1:80');
    // The kernel's nftrace for this probe (oracle.json, ext-to-clusterip).
    assert.deepEqual(
      o.steps.slice(0, 3).map(s => [s.family, s.table, s.chain, s.rule, s.line, s.verdict]),
      [
        ['ip', 'kube-proxy', 'filter-prerouting-pre-dnat', 1, 36, 'jump firewall-check'],
        ['ip', 'kube-proxy', 'nat-prerouting', 1, 51, 'jump services'],
        ['ip', 'kube-proxy', 'services', 1, 54, 'goto service-ULMVA6XW-ns1/svc1/tcp/p80'],
      ],
    );
  });

  it('trace prints both numgen branches at exactly 1/2 each', () => {
    const r = cli(
      'trace',
      join(dir, 'ruleset.json'),
      '--packet',
      'tcp 10.0.0.2 -> 172.30.0.44:80',
      '--node-ip',
      '172.18.0.4',
      '--json',
    );
    const t = JSON.parse(r.out.join('')) as { outcomes: { probabilityExact: string; dnat: string }[] };
    assert.deepEqual(
      t.outcomes.map(o => [o.probabilityExact, o.dnat]),
      [
        ['1/2', '10.180.0.4:80'],
        ['1/2', '10.180.0.5:80'],
      ],
    );
  });

  it('diff compares nftables rulesets: the same ruleset in its script, text and JSON forms is identical (exit 0)', () => {
    for (const other of ['ruleset.txt', 'ruleset.json']) {
      const r = cli('diff', join(dir, 'ruleset.nft'), join(dir, other), '--node-ip', '172.18.0.4', '--json');
      assert.equal(r.code, 0, r.out.join('\n') + r.err.join('\n'));
      const report = JSON.parse(r.out.join('\n'));
      assert.equal(report.identical, true);
      assert.equal(report.verdict, 'identical');
    }
  });

  it('--affinity names a dynamic set the client is in (kube-proxy session affinity)', () => {
    const set = 'affinity-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80';
    const r = cli(
      'trace',
      join(dir, 'ruleset.txt'),
      '--packet',
      'tcp 203.0.113.2 -> 5.6.7.8:80',
      '--node-ip',
      '172.18.0.4',
      '--affinity',
      set,
      '--json',
    );
    const t = JSON.parse(r.out.join('')) as { outcomes: { steps: { chain: string; rule: number }[] }[] };
    assert.ok(t.outcomes[0]!.steps.some(s => s.chain === 'service-HVFWP5L3-ns5/svc5/tcp/p80' && s.rule === 2));
  });
});
