/**
 * What the node's files leave out or contradict in the dump (src/engine/node-check.ts), said by the CLI with
 * every trace that uses them: a confident answer must not rest silently on a missing `sysctl -a` or on the
 * files of another node.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ROOT } from '../helpers/fixtures.ts';
import { cli } from '../helpers/cli.ts';

const BUNDLE = join(ROOT, 'test/fixtures/nodectx/seed-003-oracle');
const PACKET = 'tcp 172.18.0.100:40000 -> 172.18.255.200:80';

function bundle(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'packetlens-bundle-'));
  for (const [name, from] of Object.entries(files))
    if (from.startsWith('@')) copyFileSync(join(BUNDLE, from.slice(1)), join(dir, name));
    else writeFileSync(join(dir, name), from);
  return dir;
}

describe('node files: gaps and contradictions, said with the trace', () => {
  it('a bundle without sysctl -a says what the trace assumed instead (text and --json)', () => {
    const dir = bundle({ 'rules.txt': '@iptables-save.txt', 'a.json': '@ip-addr.json', 'r.json': '@ip-route.json' });
    try {
      const text = cli('trace', dir, '--packet', PACKET);
      assert.equal(text.code, 0, text.err.join('\n'));
      const out = text.out.join('\n');
      assert.match(out, /^warning: node files: no `sysctl -a` output .*ip_forward=1/m);
      // The answer itself still comes from the files: out by the pod veths, masqueraded to eth0's address.
      assert.match(out, /via veth1 .* masqueraded to 172\.18\.0\.4/);
      const json = JSON.parse(cli('trace', dir, '--packet', PACKET, '--json').out[0]!) as { warnings: string[] };
      assert.ok(json.warnings.some(w => /^node files: no `sysctl -a`/.test(w)));
    } finally {
      rmSync(dir, { recursive: true });
    }
  });

  it("files of another node: the dump's SNAT address is not among the files' addresses", () => {
    const dump = '*nat\n:POSTROUTING ACCEPT [0:0]\n-A POSTROUTING -o eth0 -j SNAT --to-source 10.0.0.9\nCOMMIT\n';
    const dir = bundle({
      'rules.txt': dump,
      'a.json': '@ip-addr.json',
      'r.json': '@ip-route.json',
      's.txt': '@sysctl.txt',
    });
    try {
      const r = cli('trace', dir, '--packet', 'tcp 10.244.0.5:40000 -> 198.51.100.7:80');
      assert.equal(r.code, 0, r.err.join('\n'));
      assert.match(
        r.out.join('\n'),
        /^warning: node files: the dump implies the node address 10\.0\.0\.9 .*same node\?/m,
      );
    } finally {
      rmSync(dir, { recursive: true });
    }
  });
});

describe('check and diff with --node-context', () => {
  it('check BUNDLE checks its rules and its node files; a damaged node file is an error (exit 2)', () => {
    const ok = cli('check', BUNDLE);
    assert.equal(ok.code, 0, ok.out.join('\n'));
    assert.match(ok.out.join('\n'), /^node context: .*ip-addr\.json \(ip-addr\).*sysctl\.txt \(sysctl\); 0 errors$/m);
    assert.match(ok.out.at(-1)!, /iptables-save\.txt: 2 tables, 36 chains, 68 rules \(IPv4\); 0 errors/);
    const dir = bundle({ 'rules.txt': '@iptables-save.txt', 'r.json': '[{"dst": "default", "dev": ' });
    try {
      const bad = cli('check', join(dir, 'rules.txt'), '--node-context', join(dir, 'r.json'));
      assert.equal(bad.code, 2, bad.out.join('\n'));
      assert.match(bad.out.join('\n'), /r\.json:1:\d+: error: not valid JSON/);
    } finally {
      rmSync(dir, { recursive: true });
    }
  });

  it("diff --node-context compares on the node's routes: a new -o veth1 DROP changes the packets routed out of veth1", () => {
    const head = '*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n';
    const dir = bundle({ 'old.rules': `${head}COMMIT\n`, 'new.rules': `${head}-A FORWARD -o veth1 -j DROP\nCOMMIT\n` });
    try {
      const r = cli('diff', join(dir, 'old.rules'), join(dir, 'new.rules'), '--node-context', BUNDLE, '--json');
      assert.equal(r.code, 1, r.err.join('\n'));
      const report = JSON.parse(r.out[0]!) as { identical: boolean; changes: { class: { packet: string } }[] };
      assert.equal(report.identical, false);
      assert.ok(
        report.changes.every(c => / -> 10\.10\.1\.11\b/.test(c.class.packet)),
        JSON.stringify(report.changes),
      );
    } finally {
      rmSync(dir, { recursive: true });
    }
  });
});
