/**
 * Which node of a cluster a dump came from, when the manifests of that cluster are at hand: the node
 * whose name the dump's file name contains (`node-myk8s-worker.rules` is myk8s-worker's; the longest
 * name wins, so myk8s-worker2 is not myk8s-worker), else the cluster's only node. Its addresses become
 * inferred node addresses (eval/node.ts), labelled with the Node object or kind config they came from.
 */
import type { InferredAddress } from '../eval/node.ts';
import type { ManifestSet } from './manifest/read.ts';
import type { NodeM } from './manifest/types.ts';
import type { ClusterModel, NodeInfo } from './model/types.ts';

function baseName(file: string): string {
  const parts = file.split(/[\\/]/);
  return parts[parts.length - 1] ?? file;
}

export interface DumpNode {
  readonly node: NodeInfo;
  readonly inferred: readonly InferredAddress[];
}

export function dumpNode(set: ManifestSet, model: ClusterModel, dumpFile: string): DumpNode | null {
  const name = baseName(dumpFile);
  const named = model.nodes.filter(n => name.includes(n.name)).sort((a, b) => b.name.length - a.name.length)[0];
  const node = named ?? (model.nodes.length === 1 ? model.nodes[0]! : null);
  if (!node) return null;
  const why = named
    ? `Node ${node.name}, whose name is in the dump's file name ${name}`
    : `Node ${node.name}, the cluster's only node`;
  const obj = (set.objects.filter(o => o.kind === 'Node') as NodeM[]).find(o => o.name === node.name);
  const prediction = model.predictions.find(p => p.subject === `Node ${node.name}` && p.field === 'InternalIP');
  const loc = obj?.loc ?? prediction?.loc ?? null;
  const from = loc ? `${loc.file}:${loc.range.start.line + 1}` : 'the manifests';
  const predicted = node.predicted ? ` (predicted: ${prediction?.reason ?? 'not in the manifests'})` : '';
  return { node, inferred: node.ips.map(address => ({ address, from, why: `${why}${predicted}` })) };
}
