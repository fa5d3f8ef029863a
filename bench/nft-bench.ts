/**
 * `npm run bench` part 4: parsing a kube-proxy nftables-mode ruleset of 10k Services × 10 endpoints
 * (synthesized by packetlens' kube-proxy nftables mode from 10k Services and EndpointSlices as manifests,
 * the `nft -f` script `packetlens synth --mode nftables` prints), side by side with `nft -c -f` on the
 * same file, with the ratio of the two. `nft -c` runs only when nft is installed and we are root, inside a network namespace created
 * for it and deleted afterwards. With NFT_BENCH_LISTINGS=1 the script is also loaded into that namespace
 * and listed as text and JSON (`nft list ruleset`, `nft -j list ruleset`), and those forms are parsed too.
 * Standalone: `node --import tsx bench/nft-bench.ts [services]`.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { build } from 'esbuild';
import { readManifests } from '../src/engine/kube/manifest/read.ts';
import { buildClusterModel } from '../src/engine/kube/model/build.ts';
import { renderNftScript } from '../src/engine/kube/modes/nftables/render.ts';
import { synthesizeNftables } from '../src/engine/kube/modes/nftables/synth.ts';
import { generateManifests } from './synth-measure.ts';
import { buildCli, timed, type Timed } from './peers.ts';
import { ratioAtLeast, target } from './targets.ts';

/** kube-proxy's nftables transaction for `services` × `endpoints`, synthesized from manifests. */
export function synthesizedKubeProxyNft(services: number, endpoints: number): string {
  const model = buildClusterModel(
    readManifests([{ file: 'bench.yaml', text: generateManifests(services, endpoints) }]),
    {
      predict: false,
    },
  );
  return renderNftScript(synthesizeNftables(model, { nodeName: 'bench-node' }));
}

function run(cmd: string, args: string[], out?: string): { ok: boolean; ms: number; err: string } {
  const t0 = performance.now();
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 1 << 30 });
  const ms = performance.now() - t0;
  if (out && r.status === 0) writeFileSync(out, r.stdout);
  return { ok: r.status === 0, ms, err: (r.stderr ?? '').slice(0, 300) || String(r.error ?? '') };
}

function nftAvailable(): boolean {
  return process.getuid?.() === 0 && spawnSync('nft', ['--version'], { stdio: 'ignore' }).status === 0;
}

export async function runNftBench(services = 10000, endpoints = 10): Promise<void> {
  const outDir = join('bench', 'out');
  mkdirSync(outDir, { recursive: true });
  const bundle = join(outDir, 'nft-measure.cjs');
  await build({
    entryPoints: ['bench/nft-measure.ts'],
    outfile: bundle,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    logLevel: 'warning',
  });
  const script = join(outDir, `kube-nft-${services}x${endpoints}.nft`);
  writeFileSync(script, synthesizedKubeProxyNft(services, endpoints));
  const files = [script];
  let nftCheck = 'n/a (needs nft and root)';
  let nftCheckMs: number | null = null;
  let nftTimed: Timed | null = null;
  if (nftAvailable()) {
    const ns = `plbench${process.pid}`;
    if (run('ip', ['netns', 'add', ns]).ok) {
      try {
        // `ip netns exec` execs nft in place, so /usr/bin/time measures nft itself.
        const c = timed('ip', ['netns', 'exec', ns, 'nft', '-c', '-f', script]);
        nftCheck =
          c.status === 0
            ? `${c.wallMs.toFixed(0)} ms (CPU ${c.cpuMs.toFixed(0)} ms, ${c.peakMB} MB)`
            : `failed (exit ${c.status})`;
        if (c.status === 0) {
          nftCheckMs = c.wallMs;
          nftTimed = c;
        }
        if (process.env.NFT_BENCH_LISTINGS === '1' && run('ip', ['netns', 'exec', ns, 'nft', '-f', script]).ok) {
          const text = join(outDir, `kube-nft-${services}x${endpoints}.list.nft`);
          const json = join(outDir, `kube-nft-${services}x${endpoints}.json`);
          for (const [out, args] of [
            [text, ['list', 'ruleset']],
            [json, ['-j', 'list', 'ruleset']],
          ] as const) {
            const l = run('ip', ['netns', 'exec', ns, 'nft', ...args], out);
            if (l.ok) files.push(out);
            else console.log(`nft ${args.join(' ')} failed: ${l.err}`);
          }
        }
      } finally {
        run('ip', ['netns', 'del', ns]);
      }
    }
  }
  console.log(
    `\npacketlens nft bench (kube-proxy nftables mode, ${services} ClusterIP Services × ${endpoints} endpoints)\n`,
  );
  console.log(`nft -c -f on the script: ${nftCheck}`);
  // The same command-line job on our side: `packetlens check` (parse, lower and validate every rule).
  const check = timed(process.execPath, [await buildCli(outDir), 'check', script]);
  console.log(
    `packetlens check on the script: ${check.wallMs.toFixed(0)} ms (CPU ${check.cpuMs.toFixed(0)} ms, ${check.peakMB} MB)`,
  );
  const what = `check of kube-proxy's nftables ruleset (${services} Services) faster than nft -c -f`;
  if (nftTimed)
    ratioAtLeast(
      what,
      nftTimed.wallMs / check.wallMs,
      5,
      `wall ${check.wallMs.toFixed(0)} vs ${nftTimed.wallMs.toFixed(0)} ms; CPU ${check.cpuMs.toFixed(0)} vs ${nftTimed.cpuMs.toFixed(0)} ms (${(nftTimed.cpuMs / check.cpuMs).toFixed(1)}×)`,
    );
  else target(what, null, nftCheck);
  for (const f of files) {
    const r = spawnSync(process.execPath, [bundle, f], { encoding: 'utf8', maxBuffer: 1 << 20 });
    if (r.status !== 0) {
      console.error(r.stderr);
      process.exitCode = 1;
      continue;
    }
    const row = JSON.parse(r.stdout.trim().split('\n').pop() as string) as Record<string, number | string>;
    console.log(
      `${row.format}: ${row.megabytes} MB, ${row.chains} chains, ${row.rules} rules, ${row.setElements} set elements, ${row.diagnostics} diagnostics; parse median ${row.parseMedianMs} ms (first ${row.firstParseMs} ms), peak RSS ${row.peakRssMB} MB`,
    );
    if (nftCheckMs !== null && f === script)
      console.log(
        `  nft -c -f / packetlens parse = ${(nftCheckMs / Number(row.parseMedianMs)).toFixed(1)}× (${nftCheckMs.toFixed(0)} ms / ${row.parseMedianMs} ms)`,
      );
    console.log(
      `  lowering to the model ${row.lowerMs} ms; trace ${row.tracePerPacketMs} ms per packet (${row.traceWhyNotPerPacketMs} ms with why-not), ${row.tracedPackets} packets to Service addresses`,
    );
    console.log(JSON.stringify(row));
  }
}

if (process.argv[1]?.endsWith('nft-bench.ts')) void runNftBench(Number(process.argv[2] ?? 10000));
