/**
 * `npm run bench`: kube-proxy-shaped dumps of 1k and 10k Services × 10 endpoints (≈32k and ≈320k rules).
 * Reports parse time, peak memory and time per traced packet (1000 packets to Service addresses), and
 * `iptables-nft-restore --test` on the same file when iptables is installed. A benchmark, not a test: it
 * prints figures and never fails on them.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { build } from 'esbuild';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { generateKubeProxyDump } from './generate.ts';
import { runDiffBench } from './diff-bench.ts';
import { runSynthBench } from './synth-bench.ts';
import { runNftBench } from './nft-bench.ts';
import { buildCli, measurePeers, type PeerRow } from './peers.ts';
import { atMost, printTargets, ratioAtLeast, target } from './targets.ts';

const outDir = join('bench', 'out');
mkdirSync(outDir, { recursive: true });
// Measure the engine as it ships (an esbuild bundle), not through a development-time TypeScript loader.
const measure = join(outDir, 'measure.cjs');
void build({
  entryPoints: ['bench/measure.ts'],
  outfile: measure,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  logLevel: 'warning',
}).then(run);

/** Issue 18's check and trace targets from the side-by-side runs (bench/targets.ts prints them all at the end). */
function targets(peers: PeerRow[]): void {
  const big = peers.find(p => p.services === 10000);
  const small = peers.find(p => p.services === 1000);
  if (!big || !small) return;
  const nft = big.nftRestore;
  if (nft?.status === 0)
    ratioAtLeast(
      'check 320k rules faster than iptables-nft-restore --test',
      nft.wallMs / big.check.wallMs,
      5,
      `wall ${Math.round(big.check.wallMs)} vs ${Math.round(nft.wallMs)} ms; CPU ${Math.round(big.check.cpuMs)} vs ${Math.round(nft.cpuMs)} ms (${(nft.cpuMs / big.check.cpuMs).toFixed(2)}×)`,
    );
  else
    target(
      'check 320k rules faster than iptables-nft-restore --test',
      null,
      'iptables-nft-restore not run (not installed or not root)',
    );
  const legacy = big.legacyRestore;
  if (legacy?.status === 0)
    target(
      'check 320k rules beside iptables-legacy-restore --test (no target; for reference)',
      null,
      `${(legacy.wallMs / big.check.wallMs).toFixed(2)}× wall, ${(legacy.cpuMs / big.check.cpuMs).toFixed(2)}× CPU`,
    );
  atMost('check peak RSS (320k rules)', big.check.peakMB, 400, 'MB');
  atMost('trace through the CLI, CPU per packet (320k rules, --json)', big.traceMsPerPacket, 0.2, 'ms');
  atMost('trace with --why-not, CPU per packet (320k rules)', big.traceWhyNotMsPerPacket, 1, 'ms');
  atMost(
    'trace with --why-not=grouped, CPU per packet (320k rules)',
    big.traceWhyNotGroupedMsPerPacket,
    1,
    'ms',
    'the same record, each stretch of rules skipped for another -d as one entry',
  );
  atMost(
    'trace cost per packet at 320k over 32k rules',
    +(big.traceMsPerPacket / small.traceMsPerPacket).toFixed(2),
    1.2,
    '×',
    `${big.traceMsPerPacket} vs ${small.traceMsPerPacket} ms`,
  );
}

async function run(): Promise<void> {
  const rows: Record<string, number | string>[] = [];
  for (const services of [1000, 10000]) {
    const file = join(outDir, `kube-${services}x10.rules`);
    writeFileSync(file, generateKubeProxyDump(services, 10));
    const r = spawnSync(process.execPath, [measure, file, String(services), '10'], {
      encoding: 'utf8',
      maxBuffer: 1 << 20,
    });
    if (r.status !== 0) {
      console.error(r.stderr);
      process.exit(1);
    }
    const row = JSON.parse(r.stdout.trim().split('\n').pop()!) as Record<string, number | string>;
    let restore = 'n/a (iptables not installed)';
    try {
      execFileSync('iptables-nft-restore', ['--version'], { stdio: 'ignore' });
      const t0 = performance.now();
      const res = spawnSync('iptables-nft-restore', ['--test', file], { stdio: 'ignore' });
      restore =
        res.status === 0 ? `${(performance.now() - t0).toFixed(0)} ms` : `failed (exit ${res.status}; needs root)`;
    } catch {
      // not installed
    }
    row.iptablesNftRestoreTest = restore;
    rows.push(row);
  }
  console.log('packetlens bench (kube-proxy iptables-mode dumps, ClusterIP Services × 10 endpoints)\n');
  const cols: [string, string][] = [
    ['services', 'services'],
    ['rules', 'rules'],
    ['MB', 'megabytes'],
    ['parse ms', 'parseMedianMs'],
    ['iptables-nft-restore --test', 'iptablesNftRestoreTest'],
    ['validate all ms', 'validateAllMs'],
    ['trace ms/pkt', 'traceMsPerPacket'],
    ['trace+why-not ms/pkt', 'traceWhyNotMsPerPacket'],
    ['peak RSS MB (parse)', 'peakRssAfterParseMB'],
    ['peak RSS MB (validated)', 'peakRssAfterValidateMB'],
  ];
  console.log(cols.map(([h]) => h).join(' | '));
  for (const r of rows) console.log(cols.map(([h, k]) => String(r[k]).padEnd(h.length)).join(' | '));
  const [small, big] = rows;
  console.log(
    `\nper-packet trace time at 10k services / at 1k services: ${(Number(big!.traceMsPerPacket) / Number(small!.traceMsPerPacket)).toFixed(2)}×`,
  );
  console.log(JSON.stringify(rows));
  // Side by side with the kernel's tools, back to back on the same files (bench/peers.ts).
  console.log('\npacketlens beside iptables-restore --test (same files, run back to back; ratio = peer time / ours)');
  const cli = await buildCli(outDir);
  const peers = [1000, 10000].map(s => measurePeers(cli, outDir, join(outDir, `kube-${s}x10.rules`), s));
  targets(peers);
  console.log(JSON.stringify(peers));
  // Then: two 320k-rule dumps compared with `packetlens diff`'s engine (bench/diff-bench.ts), and the
  // synthesis of 10k Services from manifests (bench/synth-bench.ts), and the nftables parsers on a
  // kube-proxy nftables-mode ruleset beside `nft -c -f` (bench/nft-bench.ts).
  await runDiffBench();
  await runSynthBench();
  await runNftBench();
  printTargets();
}
