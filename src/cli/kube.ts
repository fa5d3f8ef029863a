/**
 * The manifest side of the CLI: `packetlens synth` (the rules kube-proxy would write for a node, in its
 * iptables or IPVS mode) and `packetlens trace --manifests` (an end-to-end trace client → node → pod, in the
 * mode the manifests configure).
 */
import {
  type ClusterModel,
  type InferredAddress,
  type PacketInput,
  buildClusterModel,
  dumpNode,
  formatDiagnostic,
  readManifests,
  renderIpsetSave,
  renderIpvsNodeSave,
  renderIpvsRestore,
  renderIpvsadmList,
  renderIpvsadmRules,
  renderKubeProxyRestore,
  renderNodeSave,
  synthesizeIpvs,
  synthesizeIptables,
  traceFromManifests,
} from '../engine/api.ts';
import { UsageError, parseArgs } from './args.ts';
import { formatTrace } from './format.ts';
import { toJsonTrace } from './json.ts';
import { readManifestFiles } from './manifest-files.ts';

interface Io {
  out(line: string): void;
  err(line: string): void;
}

/** Problems printed before the rest are summed up in one line (a 100k-Service list must not flood the terminal). */
const MAX_PRINTED_DIAGNOSTICS = 50;

export function loadModel(paths: readonly string[], io: Io): ClusterModel {
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
  const model = buildClusterModel(set);
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
  const model = buildClusterModel(set);
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

function predictionLines(model: ClusterModel): string[] {
  return model.predictions.map(p => `predicted: ${p.subject} ${p.field} = ${p.value} (${p.reason})`);
}

const IPTABLES_FORMATS = ['save', 'restore'];
const IPVS_FORMATS = ['save', 'restore', 'ipvsadm', 'ipvsadm-save', 'ipset'];

export function synthCommand(argv: string[], io: Io): number {
  const { positionals, flags } = parseArgs(argv, {
    node: 'string',
    mode: 'string',
    format: 'string',
    nfacct: 'boolean',
    'no-random-fully': 'boolean',
  } as const);
  if (positionals.length === 0) throw new UsageError('synth needs manifest files or directories');
  if (flags.mode === 'nftables')
    throw new UsageError(
      "--mode nftables: kube-proxy's nftables mode is not modelled yet (iptables and ipvs are); see the README fidelity table",
    );
  if (flags.mode !== undefined && flags.mode !== 'iptables' && flags.mode !== 'ipvs')
    throw new UsageError(`--mode takes iptables or ipvs, not '${flags.mode}'`);
  if (flags.format !== undefined && !IPVS_FORMATS.includes(flags.format))
    throw new UsageError(`--format takes ${IPVS_FORMATS.join(', ')}, not '${flags.format}'`);
  const model = loadModel(positionals, io);
  // Without --mode, the mode the manifests configure (KubeProxyConfiguration mode, kind kubeProxyMode).
  const mode = flags.mode ?? (model.kubeProxy.mode === 'ipvs' ? 'ipvs' : 'iptables');
  if (mode === 'iptables' && flags.format !== undefined && !IPTABLES_FORMATS.includes(flags.format))
    throw new UsageError(
      `--format ${flags.format} is for --mode ipvs; iptables mode takes ${IPTABLES_FORMATS.join(' or ')}`,
    );
  const nodeName = flags.node ?? (model.nodes.length === 1 ? model.nodes[0]!.name : undefined);
  if (!nodeName)
    throw new UsageError(
      `synth needs --node (one of: ${model.nodes.map(n => n.name).join(', ') || 'no nodes in these manifests; add Node objects or a kind Cluster config'})`,
    );
  if (!model.nodes.some(n => n.name === nodeName))
    throw new UsageError(`no node named ${nodeName} (nodes: ${model.nodes.map(n => n.name).join(', ') || 'none'})`);
  const text =
    mode === 'ipvs'
      ? synthIpvs(model, nodeName, positionals, flags.format ?? null, !flags['no-random-fully'])
      : synthIptables(model, nodeName, positionals, flags.format ?? 'save', flags);
  for (const line of text.replace(/\n$/, '').split('\n')) io.out(line);
  return 0;
}

function synthIptables(
  model: ClusterModel,
  nodeName: string,
  positionals: readonly string[],
  format: string,
  flags: { nfacct?: boolean; 'no-random-fully'?: boolean },
): string {
  const rules = synthesizeIptables(model, {
    nodeName,
    nfacct: flags.nfacct ? { ctStateInvalid: true, localhostNodePorts: true } : {},
    randomFully: !flags['no-random-fully'],
  });
  const header = [
    `kube-proxy v1.31 iptables mode, node ${nodeName}, from ${positionals.join(' ')}`,
    ...predictionLines(model),
    ...rules.notes,
  ].join('\n');
  return format === 'save' ? renderNodeSave(rules, { header }) : renderKubeProxyRestore(rules);
}

/** IPVS mode: one format, or all three views (`ipvsadm -Ln`, `ipset save`, `iptables-save`) under `#` headers. */
function synthIpvs(
  model: ClusterModel,
  nodeName: string,
  positionals: readonly string[],
  format: string | null,
  randomFully: boolean,
): string {
  const state = synthesizeIpvs(model, { nodeName, randomFully });
  const scheduler = state.table.services[0]?.scheduler ?? (model.kubeProxy.ipvsScheduler || 'rr');
  const header = [
    `kube-proxy v1.31 IPVS mode (scheduler ${scheduler}), node ${nodeName}, from ${positionals.join(' ')}`,
    ...predictionLines(model),
    ...state.notes,
  ].join('\n');
  if (format === 'save') return renderIpvsNodeSave(state, { header });
  if (format === 'restore') return renderIpvsRestore(state);
  if (format === 'ipvsadm') return renderIpvsadmList(state.table);
  if (format === 'ipvsadm-save') return renderIpvsadmRules(state.table);
  if (format === 'ipset') return renderIpsetSave(state);
  return [
    ...header.split('\n').map(l => `# ${l}`),
    `# kube-ipvs0: ${state.bound.join(' ') || '(no addresses)'}`,
    '',
    '# ipvsadm -Ln',
    renderIpvsadmList(state.table),
    '# ipset save',
    renderIpsetSave(state),
    '# iptables-save',
    renderIpvsNodeSave(state),
  ].join('\n');
}

export function traceManifests(
  paths: readonly string[],
  inputs: { input: PacketInput; where: string }[],
  flags: { node?: string; json?: boolean; 'why-not'?: boolean; events?: boolean },
  io: Io,
): number {
  const model = loadModel(paths, io);
  let first = true;
  for (const { input, where } of inputs) {
    const r = traceFromManifests(model, input, { node: flags.node ?? null });
    if (!r.ok) throw new UsageError(`${where}: ${r.error}`);
    const v = r.value;
    if (flags.json) {
      const base = toJsonTrace(v.trace, input, {
        misses: flags['why-not'] ?? false,
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
    for (const h of v.hops)
      io.out(`${h.kind === 'client' ? 'from' : '  →'} ${h.name}${h.address ? ` (${h.address})` : ''}: ${h.reason}`);
    if (v.mode === 'ipvs')
      io.out(
        `  kube-proxy IPVS mode on ${v.node} (scheduler ${model.kubeProxy.ipvsScheduler || 'rr'}): service addresses are bound on kube-ipvs0; IPVS schedules new connections at LOCAL_IN (see packetlens synth --mode ipvs --format ipvsadm)`,
      );
    const tree = formatTrace(
      v.trace,
      `${input.protocol} ${input.src ?? '(node)'} -> ${input.dst}${input.dport !== undefined ? `:${input.dport}` : ''} on ${v.node}`,
      { whyNot: flags['why-not'] ?? false, maxMissesPerChain: 3 },
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
