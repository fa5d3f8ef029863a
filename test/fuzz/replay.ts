/**
 * Re-checks saved fuzz failures: `node --import tsx test/fuzz/replay.ts .cache/fuzz/failures/*.txt`. The
 * kind comes from the file name (iptables-…, nftables-…, manifests-…). Exit 1 when any still fails.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { checkDump, checkManifests, checkNft } from './check.ts';

let failed = 0;
for (const file of process.argv.slice(2)) {
  const kind = basename(file).split('-')[0];
  const check = kind === 'manifests' ? checkManifests : kind === 'nftables' ? checkNft : checkDump;
  try {
    check(readFileSync(file, 'utf8'));
    console.log(`ok    ${file}`);
  } catch (e) {
    failed++;
    console.log(`FAIL  ${file}: ${String(e).split('\n')[0]!.slice(0, 200)}`);
  }
}
process.exit(failed ? 1 : 0);
