/**
 * `packetlens diff` as a CI gate: exit status 0 / 1 / 2, the three output formats, errors with file:line,
 * `--paths`, and the wiring into `packetlens` itself.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { diffCommand } from '../../src/cli/diff.ts';
import { DIFF_FIXTURES } from './helpers.ts';
import { cli } from '../helpers/cli.ts';
import { tempFile } from '../helpers/fixtures.ts';

const pair = (name: string) => [join(DIFF_FIXTURES, name, 'old.rules'), join(DIFF_FIXTURES, name, 'new.rules')];
const NODE = ['--node-ip', '172.18.0.4'];

const tmp = (name: string, text: string) => tempFile(name, text, 'packetlens-diff-');

describe('packetlens diff', () => {
  it('exits 0 and says so when behaviour is identical', () => {
    // The exit status and wording; that a reorder is proven identical is dumps.test.ts's (`reordered`) and
    // proof.test.ts's (through this same CLI) to check.
    for (const name of ['comments-only', 'counters-only']) {
      const r = cli('diff', ...pair(name), ...NODE);
      assert.equal(r.code, 0, `${name}: ${r.err.join('\n')}`);
      assert.ok(r.out.some(l => /^0 packet classes change · 0 Services affected/.test(l)));
      assert.ok(r.out.some(l => l.startsWith('behaviour is identical')));
    }
  });

  it('exits 1 and names the Service and the rules when packets fare differently', () => {
    const r = cli('diff', ...pair('endpoint-added'), ...NODE);
    assert.equal(r.code, 1);
    const text = r.out.join('\n');
    assert.match(text, /^\d+ packet classes change · 1 Service affected {2}\(\d+ packet classes traced\)$/m);
    assert.match(text, /^Service default\/svc1:svc1-webport {2}\(\d+ classes\)$/m);
    assert.match(text, /new\.rules:113 {2}nat KUBE-SVC-DLGPAL4ZCYSJ7UPR #3 {2}-m comment/);
    assert.match(text, /33\.33% {2}forwarded, DNAT 10\.10\.2\.13:80, masqueraded to 172\.18\.0\.4/);
  });

  it('--json prints the report as one object', () => {
    const r = cli('diff', ...pair('etp-local'), ...NODE, '--json');
    assert.equal(r.code, 1);
    assert.equal(r.out.length, 1);
    const report = JSON.parse(r.out[0]!);
    assert.deepEqual(Object.keys(report).sort(), [
      'approximate',
      'approximations',
      'changedChains',
      'changes',
      'classesTraced',
      'groups',
      'headlines',
      'identical',
      'new',
      'old',
      'proven',
      'services',
      'summary',
      'unexplored',
      'verdict',
      'warnings',
    ]);
    assert.deepEqual(report.services, ['default/svc1:svc1-webport']);
    const c = report.changes[0];
    assert.deepEqual(Object.keys(c).sort(), [
      'approximate',
      'aspects',
      'class',
      'group',
      'new',
      'newRules',
      'old',
      'oldRules',
    ]);
    assert.deepEqual(Object.keys(c.class.extent).sort(), [
      'affinity',
      'ctstate',
      'dport',
      'dst',
      'from',
      'in',
      'mark',
      'protocol',
      'sport',
      'src',
    ]);
    assert.deepEqual(Object.keys(c.old[0]).sort(), [
      'assumptions',
      'disposition',
      'dnat',
      'masquerade',
      'probability',
      'probabilityExact',
      'reason',
      'rejectWith',
      'snat',
    ]);
    assert.deepEqual(report.old, { file: pair('etp-local')[0], rules: 69, chains: 36 });
  });

  it('--markdown prints a pull-request comment', () => {
    const r = cli('diff', ...pair('drop-shadows-service'), ...NODE, '--markdown');
    assert.equal(r.code, 1);
    const md = r.out.join('\n');
    assert.match(md, /^### packetlens diff: `.*old\.rules` → `.*new\.rules`$/m);
    assert.match(md, /^\*\*\d+ packet classes change · 1 Service affected\*\*/m);
    assert.match(md, /^\| Service `metallb-system\/metallb-webhook-service` \| \d+ \| disposition \|$/m);
    assert.match(md, /^\| chain `filter FORWARD` \| \d+ \| disposition \|$/m);
    assert.match(md, /<details><summary>Service metallb-system\/metallb-webhook-service — \d+ classes<\/summary>/);
    assert.match(md, /^\| new \| 100% \| dropped, \(DROP in filter FORWARD rule 1\) \|$/m);
  });

  it('escapes text from the dumps in markdown', () => {
    const head = '*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n';
    const a = tmp('a.rules', `${head}COMMIT\n`);
    const b = tmp(
      'b.rules',
      `${head}-A INPUT -p tcp -m comment --comment "x|y \`z\` <script>alert(1)</script>" -m tcp --dport 22 -j DROP\nCOMMIT\n`,
    );
    const r = cli('diff', a, b, '--markdown');
    assert.equal(r.code, 1);
    const md = r.out.join('\n');
    const line = r.out.find(l => l.includes('alert(1)'))!;
    // The rule is shown in a code span that a backtick inside cannot end, with the table pipe escaped.
    assert.ok(
      line.includes('``-p tcp -m comment --comment "x\\|y `z` <script>alert(1)</script>" -m tcp --dport 22 -j DROP``'),
      line,
    );
    assert.equal(md.split('<script>').length - 1, 1, 'the only <script> is inside that code span');
  });

  it('--paths also reports packets whose matched rules change while their fate does not', () => {
    const r = cli('diff', ...pair('reordered'), ...NODE, '--paths', '--json');
    assert.equal(r.code, 1);
    const report = JSON.parse(r.out[0]!);
    assert.ok(report.changes.length > 0);
    for (const c of report.changes) {
      assert.deepEqual(c.aspects, ['path']);
      assert.ok(c.old[0].path.some((p: string) => p.startsWith('filter FORWARD: ')));
    }
    // KUBE-SERVICES and KUBE-NODEPORTS were reordered too, but each packet still matches the same rules
    // there: only the order of FORWARD's jumps changes a path.
    for (const c of report.changes)
      if (c.group.kind === 'chain') assert.deepEqual([c.group.table, c.group.chain], ['filter', 'FORWARD']);
    assert.ok(
      report.changes.every((c: { oldRules: { chain: string }[] }) => c.oldRules.some(r => r.chain === 'FORWARD')),
    );
  });

  it('exits 2 on unreadable input and names the file', () => {
    const r = cli('diff', join(DIFF_FIXTURES, 'nope.rules'), pair('reordered')[1]!);
    assert.equal(r.code, 2);
    assert.match(r.err.join('\n'), /nope\.rules: cannot read: ENOENT/);
    assert.equal(cli('diff', pair('reordered')[0]!).code, 2);
    assert.match(
      cli('diff', ...pair('reordered'), '--json', '--markdown').err.join('\n'),
      /--json and --markdown exclude each other/,
    );
  });

  it('exits 2 on a dump with errors, naming file:line:col', () => {
    const base = readFileSync(pair('reordered')[0]!, 'utf8');
    const broken = tmp('broken.rules', base.replace('-A KUBE-MARK-MASQ -j MARK', '-A KUBE-MARK-MASQQ -j MARK'));
    const r = cli('diff', pair('reordered')[0]!, broken);
    assert.equal(r.code, 2);
    assert.match(r.err.join('\n'), /broken\.rules:70:4: error: chain KUBE-MARK-MASQQ is not declared in table nat/);
    // A bad option in a changed rule is an error too (rules are read lazily, so it surfaces there).
    const bad = tmp(
      'bad.rules',
      base.replace(
        '-A KUBE-SVC-DLGPAL4ZCYSJ7UPR ! -s 10.10.0.0/16',
        '-A KUBE-SVC-DLGPAL4ZCYSJ7UPR ! -s 10.10.0.300/16',
      ),
    );
    const r2 = cli('diff', pair('reordered')[0]!, bad);
    assert.equal(r2.code, 2);
    assert.match(r2.err.join('\n'), /bad\.rules:108:35: error: '10\.10\.0\.300\/16' is not an IPv4 address or network/);
  });

  it('is a packetlens subcommand', () => {
    const help = cli('--help');
    assert.match(help.out.join('\n'), /packetlens diff <old-rules> <new-rules>/);
    assert.match(cli('nope').err.join('\n'), /unknown command 'nope' \(check, trace, synth, diff\)/);
    const out: string[] = [];
    assert.equal(diffCommand([...pair('comments-only')], { out: l => out.push(l), err: () => {} }), 0);
  });
});
