/**
 * Manifest mode: what changes for packets on one node between two sets of Kubernetes manifests. A thin
 * adapter: each side's manifests become the kube-proxy rules the synthesizer writes for the node
 * (kube/synth), and the two rulesets are compared exactly as two dumps are (diff.ts), on the node as the
 * newer manifests describe it.
 */
import { formatDiagnostic } from '../diagnostics.ts';
import { parseIptables } from '../iptables/parse.ts';
import { nodeContext } from '../kube/e2e.ts';
import { readManifests } from '../kube/manifest/read.ts';
import { buildClusterModel } from '../kube/model/build.ts';
import type { ClusterModel } from '../kube/model/types.ts';
import type { NodeConfig } from '../eval/node.ts';
import { iptablesMode } from '../kube/modes/iptables/mode.ts';
import { synthesizeIptables } from '../kube/modes/iptables/synth.ts';
import { renderNodeSave } from '../kube/modes/iptables/render.ts';
import { type DiffOptions, diffRulesets } from './diff.ts';
import type { DiffResult } from './types.ts';

export interface ManifestSide {
  /** How the side is named in the report (`base`, a directory). */
  readonly label: string;
  readonly files: readonly { readonly file: string; readonly text: string }[];
}

/**
 * A side's manifests as the kube-proxy rules of the node, and the node as that side describes it. A side read
 * only in part (the reader's budget) would compare as if the rest were deleted: refused before it is synthesized.
 */
function sideRules(
  side: ManifestSide,
  nodeName: string,
  errors: string[],
): { rs: ReturnType<typeof parseIptables>; node: NodeConfig } | { error: string } {
  const m = model(side, errors);
  if (m.partial) return { error: partialSide(m.partial) };
  const node = m.nodes.find(n => n.name === nodeName);
  if (!node)
    return {
      error: `no node named ${nodeName} in ${side.label} (nodes: ${m.nodes.map(n => n.name).join(', ') || 'none'})`,
    };
  const text = renderNodeSave(synthesizeIptables(m, { nodeName }));
  return {
    rs: parseIptables(text, { file: `${side.label} (kube-proxy rules of ${nodeName})`, lazy: true }),
    node: nodeContext(m, node),
  };
}

function partialSide(partial: string): string {
  return `${partial}; a comparison needs each side whole, so nothing was compared`;
}

function model(side: ManifestSide, errors: string[]): ClusterModel {
  // The comparison is of iptables rules (synthesizeIptables): the model's budget counts for them.
  const m = buildClusterModel(readManifests(side.files), { cost: () => iptablesMode.cost });
  for (const d of m.diagnostics) if (d.severity === 'error') errors.push(formatDiagnostic(d.file, d));
  return m;
}

export function diffManifests(
  oldSide: ManifestSide,
  newSide: ManifestSide,
  nodeName: string,
  options: Omit<DiffOptions, 'node'> = {},
): DiffResult & { errors?: string[] } {
  const errors: string[] = [];
  // One side at a time, each model dropped once its rules are synthesized (the node context comes from the
  // newer side's): two models of 80k Services held at once were a fifth of the comparison's memory.
  const a = sideRules(oldSide, nodeName, errors);
  if ('error' in a) return { ok: false, error: a.error };
  const b = sideRules(newSide, nodeName, errors);
  if ('error' in b) return { ok: false, error: b.error };
  const r = diffRulesets(a.rs, b.rs, { ...options, node: b.node });
  return r.ok ? { ...r, errors: [...errors, ...(r.errors ?? [])] } : r;
}
