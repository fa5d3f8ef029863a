/**
 * `npm run bench` part 1b: packetlens beside the kernel's own tools on the same files, run back to back so
 * that both sides see the same machine load. Each side is a process timed by /usr/bin/time (wall, CPU =
 * user + system, peak RSS); the ratio is the peer's time over packetlens's (> 1: packetlens is faster).
 * Figures for packetlens are the shipped CLI bundle (`dist/cli.js`, process start-up included).
 *
 *  - check: `packetlens check FILE` vs `iptables-nft-restore --test FILE` and `iptables-legacy-restore --test
 *    FILE` (both parse and validate every rule; the nft back end also builds the netlink batch);
 *  - trace: `packetlens trace FILE --packets P.jsonl --json` per packet, parse excluded: the run with 2,001
 *    packets minus the run with 1 packet, over 2,000; with `--why-not` likewise.
 * A benchmark, not a test: it prints figures and never fails on them.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { serviceAt } from './generate.ts';

export interface Timed {
  readonly wallMs: number;
  readonly cpuMs: number;
  readonly peakMB: number;
  readonly status: number | null;
}

const TIME = '/usr/bin/time';

/** Runs a command under /usr/bin/time, output discarded. */
export function timed(cmd: string, args: string[]): Timed {
  if (!existsSync(TIME)) {
    const t0 = performance.now();
    const r = spawnSync(cmd, args, { stdio: 'ignore' });
    return { wallMs: performance.now() - t0, cpuMs: NaN, peakMB: NaN, status: r.status };
  }
  const r = spawnSync(TIME, ['-f', '@@%e %U %S %M', cmd, ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'ignore', 'pipe'],
    maxBuffer: 1 << 26,
  });
  const m = /@@([\d.]+) ([\d.]+) ([\d.]+) (\d+)\s*$/.exec(r.stderr ?? '');
  if (!m) return { wallMs: NaN, cpuMs: NaN, peakMB: NaN, status: r.status };
  return {
    wallMs: Number(m[1]) * 1000,
    cpuMs: (Number(m[2]) + Number(m[3])) * 1000,
    peakMB: Math.round(Number(m[4]) / 1024),
    status: r.status,
  };
}

function installed(tool: string): boolean {
  return spawnSync(tool, ['--version'], { stdio: 'ignore' }).status === 0;
}

/** The CLI as it ships (esbuild.mjs's bundle of src/cli/cli.ts), built into bench/out. */
export async function buildCli(outDir: string): Promise<string> {
  const cli = join(outDir, 'cli.cjs');
  await build({
    entryPoints: ['src/cli/cli.ts'],
    outfile: cli,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    logLevel: 'warning',
  });
  return cli;
}

function packetsFile(outDir: string, services: number, count: number): string {
  const file = join(outDir, `packets-${services}-${count}.jsonl`);
  const lines = Array.from({ length: count }, (_, k) => {
    const s = serviceAt((k * 7919) % services, 10);
    return JSON.stringify({
      protocol: 'tcp',
      src: `172.18.${(k >> 8) & 255}.${k & 255}`,
      dst: s.clusterIP,
      dport: s.port,
    });
  });
  writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

const fmt = (t: Timed) =>
  t.status === 0 || t.status === 2
    ? `${Math.round(t.wallMs)} ms (cpu ${Math.round(t.cpuMs)} ms, ${t.peakMB} MB)`
    : `failed (exit ${t.status})`;
const ratio = (peer: Timed, ours: Timed) =>
  peer.status === 0 && (ours.status === 0 || ours.status === 2)
    ? `${(peer.wallMs / ours.wallMs).toFixed(2)}× wall, ${(peer.cpuMs / ours.cpuMs).toFixed(2)}× cpu`
    : 'n/a';

export interface PeerRow {
  services: number;
  check: Timed;
  nftRestore: Timed | null;
  legacyRestore: Timed | null;
  traceMsPerPacket: number;
  traceWhyNotMsPerPacket: number;
  /** `--why-not=grouped`: the same record with each stretch of skipped rules as one entry. */
  traceWhyNotGroupedMsPerPacket: number;
}

/** check and trace of one dump, beside the restore tools. */
export function measurePeers(cli: string, outDir: string, file: string, services: number): PeerRow {
  const node = process.execPath;
  const check = timed(node, [cli, 'check', file]);
  const nftRestore = installed('iptables-nft-restore') ? timed('iptables-nft-restore', ['--test', file]) : null;
  const legacyRestore = installed('iptables-legacy-restore')
    ? timed('iptables-legacy-restore', ['--test', file])
    : null;
  const one = packetsFile(outDir, services, 1);
  const many = packetsFile(outDir, services, 2001);
  const perPacket = (extra: string[]) => {
    const args = (p: string) => [cli, 'trace', file, '--packets', p, '--json', '--node-ip', '172.18.0.4', ...extra];
    const a = timed(node, args(one));
    const b = timed(node, args(many));
    return Math.max(0, b.cpuMs - a.cpuMs) / 2000;
  };
  const row: PeerRow = {
    services,
    check,
    nftRestore,
    legacyRestore,
    traceMsPerPacket: +perPacket([]).toFixed(3),
    traceWhyNotMsPerPacket: +perPacket(['--why-not']).toFixed(3),
    traceWhyNotGroupedMsPerPacket: +perPacket(['--why-not=grouped']).toFixed(3),
  };
  console.log(`\n${services} Services (${file}):`);
  console.log(`  packetlens check              ${fmt(check)}`);
  if (nftRestore)
    console.log(`  iptables-nft-restore --test   ${fmt(nftRestore)}  → packetlens ${ratio(nftRestore, check)}`);
  else console.log('  iptables-nft-restore          not installed');
  if (legacyRestore)
    console.log(`  iptables-legacy-restore --test ${fmt(legacyRestore)}  → packetlens ${ratio(legacyRestore, check)}`);
  else console.log('  iptables-legacy-restore       not installed');
  console.log(
    `  trace --packets --json        ${row.traceMsPerPacket} ms/packet CPU (with --why-not ${row.traceWhyNotMsPerPacket}, --why-not=grouped ${row.traceWhyNotGroupedMsPerPacket})`,
  );
  return row;
}
