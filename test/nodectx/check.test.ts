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
