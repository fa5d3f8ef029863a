/**
 * The manifest side of the CLI: `packetlens synth` (the rules kube-proxy would write for a node, in its
 * iptables or IPVS mode) and `packetlens trace --manifests` (an end-to-end trace client → node → pod, in the
 * mode the manifests configure).
 */
import {
  type ClusterModel,
  type InferredAddress,
  type PacketInput,
  type ProxyModeName,
  buildClusterModel,
  dumpNode,
  formatDiagnostic,
  readManifests,
  PROXY_MODES,
  PROXY_MODE_NAMES,
  KUBE_PROXY_MODE_NAMES,
  configuredMode,
  modelCost,
  proxyMode,
  traceFromManifests,
} from '../engine/api.ts';
import { UsageError, parseArgs, whyNotFlag } from './args.ts';
import { formatTrace } from './format.ts';
import { toJsonTrace } from './json.ts';
import { readManifestFiles } from './manifest-files.ts';

interface Io {
  out(line: string): void;
  err(line: string): void;
}

/** Problems printed before the rest are summed up in one line (a 100k-Service list must not flood the terminal). */
const MAX_PRINTED_DIAGNOSTICS = 50;

/** `mode`: the kube-proxy mode whose rules will be made (`--mode`), which the model's budget counts for. */
export function loadModel(paths: readonly string[], io: Io, mode?: ProxyModeName): ClusterModel {
  const files = readManifestFiles(paths);
  const set = readManifests(files);
  // Files with no Kubernetes object at all (Helm values, docker-compose, any YAML) are not a cluster:
  // answering for an empty cluster would look like an answer.
  if (
    set.objects.length === 0 &&
    !files.some(f => /^\s*kind:\s*\S/m.test(f.text) && /^\s*apiVersion:\s*\S/m.test(f.text))
  ) {
    for (const d of set.diagnostics.slice(0, MAX_PRINTED_DIAGNOSTICS)) io.err(formatDiagnostic(d.file, d));
    throw new UsageError(
      `${files.map(f => f.file).join(', ')}: no Kubernetes objects here (a manifest has apiVersion: and kind: at the top of each document; this looks like other YAML, e.g. Helm values or a docker-compose file)`,
    );
  }
  const model = buildClusterModel(set, { cost: modelCost(mode) });
  const shown = model.diagnostics.slice(0, MAX_PRINTED_DIAGNOSTICS);
  for (const d of shown) io.err(formatDiagnostic(d.file, d));
  if (model.diagnostics.length > shown.length)
    io.err(
      `… ${model.diagnostics.length - shown.length} more problems in the manifests (${model.diagnostics.length} in all)`,
    );
  return model;
}

/**
 * `trace <dump> --manifests PATH`: the manifests say which node the dump is from (its name in the dump's
 * file name, `--node NAME`, or the only node); its addresses are inferred node addresses, labelled.
 */
export function dumpNodeFromManifests(
  paths: readonly string[],
  dumpFile: string,
  nodeName: string | undefined,
  io: Io,
): readonly InferredAddress[] {
  const set = readManifests(readManifestFiles(paths));
  const model = buildClusterModel(set, { cost: modelCost() });
  for (const d of model.diagnostics) io.err(formatDiagnostic(d.file, d));
  if (nodeName) {
    const n = model.nodes.find(x => x.name === nodeName);
    if (!n)
      throw new UsageError(
        `no node named ${nodeName} in these manifests (${model.nodes.map(x => x.name).join(', ') || 'none'})`,
      );
    return n.ips.map(address => ({ address, from: paths.join(' '), why: `Node ${n.name}, chosen with --node` }));
  }
  const found = dumpNode(set, model, dumpFile);
  if (!found)
    throw new UsageError(
      `which node of these manifests ${dumpFile} comes from is not in its file name: give --node (${model.nodes.map(x => x.name).join(', ') || 'no nodes'}) or --node-ip`,
    );
  return found.inferred;
}

/** The manifests were read only in part: said before any answer drawn from them. */
function partialLine(partial: string): string {
  return `⚠ partial manifests: ${partial}; objects past that line are missing from this answer (a Service there has no rules here)`;
}

function predictionLines(model: ClusterModel): string[] {
  return model.predictions.map(p => `predicted: ${p.subject} ${p.field} = ${p.value} (${p.reason})`);
}

/** `a`, `a or b`, `a, b or c`. */
function orList(items: readonly string[]): string {
  return items.length < 2 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`;
}

export function synthCommand(argv: string[], io: Io): number {
  const { positionals, flags } = parseArgs(argv, {
    node: 'string',
    mode: 'string',
    format: 'string',
    nfacct: 'boolean',
    'no-random-fully': 'boolean',
  } as const);
  if (positionals.length === 0) throw new UsageError('synth needs manifest files or directories');
  const chosen = flags.mode === undefined ? undefined : proxyMode(flags.mode);
  if (flags.mode !== undefined && !chosen)
    throw new UsageError(
      (KUBE_PROXY_MODE_NAMES as readonly string[]).includes(flags.mode)
        ? `--mode ${flags.mode}: kube-proxy's ${flags.mode} mode is not modelled yet (${orList(PROXY_MODE_NAMES)} are); see the README fidelity table`
        : `--mode takes ${orList(PROXY_MODE_NAMES)}, not '${flags.mode}'`,
    );
  const allFormats = [...new Set(PROXY_MODES.flatMap(m => m.formats))];
  if (flags.format !== undefined && !allFormats.includes(flags.format))
    throw new UsageError(`--format takes ${allFormats.join(', ')}, not '${flags.format}'`);
  const model = loadModel(positionals, io, chosen?.name);
  // Without --mode, the mode the manifests configure (KubeProxyConfiguration mode, kind kubeProxyMode).
  const mode = chosen ?? configuredMode(model.kubeProxy.mode).mode;
  if (flags.format !== undefined && !mode.formats.includes(flags.format)) {
    const owners = PROXY_MODES.filter(m => m.formats.includes(flags.format!)).map(m => `--mode ${m.name}`);
    throw new UsageError(
      `--format ${flags.format} is for ${orList(owners)}; ${mode.name} mode takes ${orList(mode.formats)}`,
    );
  }
  const nodeName = flags.node ?? (model.nodes.length === 1 ? model.nodes[0]!.name : undefined);
  if (!nodeName)
    throw new UsageError(
      `synth needs --node (one of: ${model.nodes.map(n => n.name).join(', ') || 'no nodes in these manifests; add Node objects or a kind Cluster config'})`,
    );
  if (!model.nodes.some(n => n.name === nodeName))
    throw new UsageError(`no node named ${nodeName} (nodes: ${model.nodes.map(n => n.name).join(', ') || 'none'})`);
  const out = mode.synthesize(model, {
    nodeName,
    randomFully: !flags['no-random-fully'],
    ...(flags.nfacct ? { nfacct: { ctStateInvalid: true, localhostNodePorts: true } } : {}),
  });
  const header = [
    `${mode.wording.headline(model)}, node ${nodeName}, from ${positionals.join(' ')}`,
    ...(model.partial ? [partialLine(model.partial)] : []),
    ...predictionLines(model),
    ...out.notes,
  ].join('\n');
  const text = out.render(flags.format ?? null, header);
  for (const line of text.replace(/\n$/, '').split('\n')) io.out(line);
  return 0;
}

export function traceManifests(
  paths: readonly string[],
  inputs: { input: PacketInput; where: string }[],
  flags: { node?: string; mode?: string; json?: boolean; 'why-not'?: true | string; events?: boolean },
  io: Io,
): number {
  const chosen = flags.mode === undefined ? undefined : proxyMode(flags.mode);
  if (flags.mode !== undefined && !chosen)
    throw new UsageError(`--mode takes ${orList(PROXY_MODE_NAMES)}, not '${flags.mode}'`);
  const whyNot = whyNotFlag(flags['why-not']);
  const model = loadModel(paths, io, chosen?.name);
  let first = true;
  for (const { input, where } of inputs) {
    const r = traceFromManifests(model, input, {
      node: flags.node ?? null,
      ...(chosen ? { mode: chosen.name } : {}),
      ...(whyNot === 'grouped' ? { explain: 'grouped' as const } : {}),
    });
    if (!r.ok) throw new UsageError(`${where}: ${r.error}`);
    const v = r.value;
    if (flags.json) {
      const base = toJsonTrace(v.trace, input, {
        misses: whyNot,
        events: flags.events ?? false,
      }) as { outcomes: Record<string, unknown>[] };
      base.outcomes.forEach((o, i) =>
        Object.assign(o, {
          pod: v.destinations[i]?.pod ?? null,
          podNode: v.destinations[i]?.node ?? null,
          hops: v.destinations[i]?.hops ?? [],
        }),
      );
      io.out(
        JSON.stringify({
          ...base,
          node: v.node,
          mode: v.mode,
          hops: v.hops,
          partial: v.partial,
          predictions: model.predictions.map(p => ({
            subject: p.subject,
            field: p.field,
            value: p.value,
            reason: p.reason,
          })),
        }),
      );
      continue;
    }
    if (!first) io.out('');
    first = false;
    if (v.partial) io.out(partialLine(v.partial));
    for (const h of v.hops)
      io.out(`${h.kind === 'client' ? 'from' : '  →'} ${h.name}${h.address ? ` (${h.address})` : ''}: ${h.reason}`);
    const note = proxyMode(v.mode)?.wording.traceNote(model, v.node);
    if (note) io.out(`  ${note}`);
    const tree = formatTrace(
      v.trace,
      `${input.protocol} ${input.src ?? '(node)'} -> ${input.dst}${input.dport !== undefined ? `:${input.dport}` : ''} on ${v.node}`,
      { whyNot, maxMissesPerChain: 3 },
    ).split('\n');
    let outcome = -1;
    for (const line of tree) {
      io.out(line);
      if (/^[├└]─/.test(line)) {
        outcome++;
        for (const h of v.destinations[outcome]?.hops ?? [])
          io.out(
            `${line.startsWith('└') ? ' ' : '│'}     ⇒ ${h.kind} ${h.name}${h.address ? ` ${h.address}` : ''}: ${h.reason}`,
          );
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
