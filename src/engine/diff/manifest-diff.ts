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
import { synthesizeIptables } from '../kube/modes/iptables/synth.ts';
import { renderNodeSave } from '../kube/modes/iptables/render.ts';
import { type DiffOptions, diffRulesets } from './diff.ts';
import type { DiffResult } from './types.ts';

export interface ManifestSide {
  /** How the side is named in the report (`base`, a directory). */
  readonly label: string;
  readonly files: readonly { readonly file: string; readonly text: string }[];
}

function partialSide(partial: string): string {
  return `${partial}; a comparison needs each side whole, so nothing was compared`;
}

function model(side: ManifestSide, errors: string[]): ClusterModel {
  const m = buildClusterModel(readManifests(side.files));
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
  // A side read only in part (the reader's budget) would compare as if the rest were deleted: refused
  // before the other side is read and both are synthesized (two sides of 60 MB held 880 MB for nothing).
  const first = model(oldSide, errors);
  if (first.partial) return { ok: false, error: partialSide(first.partial) };
  const second = model(newSide, errors);
  if (second.partial) return { ok: false, error: partialSide(second.partial) };
  const models = [first, second] as const;
  const sides = [oldSide, newSide] as const;
  const rulesets = models.map((m, i) => {
    const node = m.nodes.find(n => n.name === nodeName);
    if (!node)
      return `no node named ${nodeName} in ${sides[i]!.label} (nodes: ${m.nodes.map(n => n.name).join(', ') || 'none'})`;
    const text = renderNodeSave(synthesizeIptables(m, { nodeName }));
    return parseIptables(text, { file: `${sides[i]!.label} (kube-proxy rules of ${nodeName})`, lazy: true });
  });
  const [a, b] = rulesets as [(typeof rulesets)[number], (typeof rulesets)[number]];
  if (typeof a === 'string') return { ok: false, error: a };
  if (typeof b === 'string') return { ok: false, error: b };
  const node = models[1].nodes.find(n => n.name === nodeName)!;
  const r = diffRulesets(a, b, { ...options, node: nodeContext(models[1], node) });
  return r.ok ? { ...r, errors: [...errors, ...(r.errors ?? [])] } : r;
}
