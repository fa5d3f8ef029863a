/**
 * The manifest side of the CLI: `packetlens synth` (the rules kube-proxy would write for a node) and
 * `packetlens trace --manifests` (an end-to-end trace client → node → pod).
 */
import { formatDiagnostic, type PacketInput } from '../engine/api.ts';
import { readManifests } from '../engine/kube/manifest/read.ts';
import { buildClusterModel } from '../engine/kube/model/build.ts';
import type { ClusterModel } from '../engine/kube/model/types.ts';
import { synthesizeIptables } from '../engine/kube/synth/iptables.ts';
import { renderKubeProxyRestore, renderNodeSave } from '../engine/kube/synth/render.ts';
import { traceFromManifests } from '../engine/kube/e2e.ts';
import { UsageError, parseArgs } from './args.ts';
import { formatTrace } from './format.ts';
import { toJsonTrace } from './json.ts';
import { readManifestFiles } from './manifests.ts';

interface Io {
  out(line: string): void;
  err(line: string): void;
}

export function loadModel(paths: readonly string[], io: Io): ClusterModel {
  const set = readManifests(readManifestFiles(paths));
  const model = buildClusterModel(set);
  for (const d of model.diagnostics) io.err(formatDiagnostic(d.file, d));
  return model;
}

function predictionLines(model: ClusterModel): string[] {
  return model.predictions.map((p) => `predicted: ${p.subject} ${p.field} = ${p.value} (${p.reason})`);
}

export function synthCommand(argv: string[], io: Io): number {
  const { positionals, flags } = parseArgs(argv, { node: 'string', mode: 'string', format: 'string', nfacct: 'boolean', 'no-random-fully': 'boolean' } as const);
  if (positionals.length === 0) throw new UsageError('synth needs manifest files or directories');
  const mode = flags.mode ?? 'iptables';
  if (mode === 'ipvs') throw new UsageError('--mode ipvs: IPVS synthesis is not available yet (iptables mode is); see the README fidelity table');
  if (mode !== 'iptables') throw new UsageError(`--mode takes iptables or ipvs, not '${mode}'`);
  const format = flags.format ?? 'save';
  if (format !== 'save' && format !== 'restore') throw new UsageError(`--format takes save or restore, not '${format}'`);
  const model = loadModel(positionals, io);
  const nodeName = flags.node ?? (model.nodes.length === 1 ? model.nodes[0]!.name : undefined);
  if (!nodeName) throw new UsageError(`synth needs --node (one of: ${model.nodes.map((n) => n.name).join(', ') || 'no nodes in these manifests; add Node objects or a kind Cluster config'})`);
  if (!model.nodes.some((n) => n.name === nodeName)) throw new UsageError(`no node named ${nodeName} (nodes: ${model.nodes.map((n) => n.name).join(', ') || 'none'})`);
  const rules = synthesizeIptables(model, { nodeName, nfacct: flags.nfacct ? { ctStateInvalid: true, localhostNodePorts: true } : {}, randomFully: !flags['no-random-fully'] });
  const header = [`kube-proxy v1.31 iptables mode, node ${nodeName}, from ${positionals.join(' ')}`, ...predictionLines(model), ...rules.notes].join('\n');
  const text = format === 'save' ? renderNodeSave(rules, { header }) : renderKubeProxyRestore(rules);
  for (const line of text.replace(/\n$/, '').split('\n')) io.out(line);
  return 0;
}

export function traceManifests(paths: readonly string[], inputs: { input: PacketInput; where: string }[], flags: { node?: string; json?: boolean; 'why-not'?: boolean; events?: boolean }, io: Io): number {
  const model = loadModel(paths, io);
  let first = true;
  for (const { input, where } of inputs) {
    const r = traceFromManifests(model, input, { node: flags.node ?? null });
    if (!r.ok) throw new UsageError(`${where}: ${r.error}`);
    const v = r.value;
    if (flags.json) {
      const base = toJsonTrace(v.trace, input, { misses: flags['why-not'] ?? false, events: flags.events ?? false }) as { outcomes: Record<string, unknown>[] };
      base.outcomes.forEach((o, i) => Object.assign(o, { pod: v.destinations[i]?.pod ?? null, podNode: v.destinations[i]?.node ?? null, hops: v.destinations[i]?.hops ?? [] }));
      io.out(JSON.stringify({ ...base, node: v.node, hops: v.hops, predictions: model.predictions.map((p) => ({ subject: p.subject, field: p.field, value: p.value, reason: p.reason })) }));
      continue;
    }
    if (!first) io.out('');
    first = false;
    for (const h of v.hops) io.out(`${h.kind === 'client' ? 'from' : '  →'} ${h.name}${h.address ? ` (${h.address})` : ''}: ${h.reason}`);
    const tree = formatTrace(v.trace, `${input.protocol} ${input.src ?? '(node)'} -> ${input.dst}${input.dport !== undefined ? `:${input.dport}` : ''} on ${v.node}`, { whyNot: flags['why-not'] ?? false, maxMissesPerChain: 3 }).split('\n');
    let outcome = -1;
    for (const line of tree) {
      io.out(line);
      if (/^[├└]─/.test(line)) {
        outcome++;
        for (const h of v.destinations[outcome]?.hops ?? []) io.out(`${line.startsWith('└') ? ' ' : '│'}     ⇒ ${h.kind} ${h.name}${h.address ? ` ${h.address}` : ''}: ${h.reason}`);
      }
    }
    const used = model.predictions;
    if (used.length) {
      io.out('predicted (not in the manifests):');
      for (const l of predictionLines(model)) io.out(`  ${l.replace(/^predicted: /, '')}`);
    }
  }
  return 0;
}
