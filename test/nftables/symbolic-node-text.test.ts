// Without a node address the node is a symbolic stand-in (eval/node.ts): its digits (RFC 7600's 192.0.0.8)
// must never reach the user. An nft masquerade step printed them ("masquerade → 192.0.0.8").
import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { cli } from '../helpers/cli.ts';

const RULESET = `table ip nat {
\tchain post {
\t\ttype nat hook postrouting priority srcnat; policy accept;
\t\toifname "eth0" masquerade
\t}
}
`;

describe('nft traces without a node address', () => {
  it('show the symbolic node by its label in every step', () => {
    const dir = mkdtempSync(join(tmpdir(), 'packetlens-nft-sym-'));
    try {
      const file = join(dir, 'nat.nft');
      writeFileSync(file, RULESET);
      const r = cli('trace', file, '--packet', 'tcp 10.0.0.5 -> 203.0.113.9:443', '--from', 'outside', '--in', 'eth1');
      const text = r.out.join('\n');
      assert.match(text, /masquerade → node\(eth0\)/, text);
      assert.doesNotMatch(text, /192\.0\.0\.8/, text);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
