/**
 * "Packet Lens: Trace Packet…" on manifests: the packet goes end to end (`traceFromManifests`): the node
 * that receives it and why, that node's synthesized kube-proxy rules, and the pod each outcome reaches. The
 * flow diagram gets the route (client → node) and each outcome's destination; its rule lines point into the
 * node's rules as "Show kube-proxy Rules for Node…" shows them. Clear messages when there is nothing to trace.
 */
import { type ManifestTrace, type ManifestTraceResult, parsePacketText, traceFromManifests } from '../../engine/api.ts';
import { traceDiagram } from '../diagram.ts';
import { inEditorWords, needsReceivingNode, traceInEditorWords } from '../editor-words.ts';
import { fieldsFromInput } from '../packet-fields.ts';
import { type PacketSuggestion, checkPacketText, queryKeyword } from '../packet-suggest.ts';
import type { DiagramModel, RouteHop } from '../../shared/protocol.ts';
import type { ClusterView } from './cluster.ts';
import { type NodeDump, nodeDump } from './node-rules.ts';
import { clusterIPProbe, externalProbe } from './probe.ts';

export type ManifestRun =
  | { readonly ok: true; readonly value: ManifestTrace; readonly diagram: DiagramModel; readonly dump: NodeDump }
  | {
      readonly ok: false;
      readonly error: string;
      /** The manifests cannot say which node receives the packet: these are the nodes to choose from. */
      readonly chooseNode?: readonly string[];
    };

/** Why these manifests cannot be traced end to end, or null. */
export function nothingToTrace(view: ClusterView): string | null {
  const m = view.model;
  if (m.servicePorts.length === 0) {
    // A budget left the Services out: saying they have no ports would be wrong.
    if (m.partial)
      return `Nothing to trace: the manifests of ${view.label} were read only in part and no Service port is left (partial manifests: ${m.partial}).`;
    const skipped = m.services.length
      ? ` (${m.services.length} Service${m.services.length === 1 ? '' : 's'}, none with kube-proxy rules: headless, ExternalName or without ports)`
      : '';
    return `Nothing to trace: the manifests of ${view.label} define no Service port${skipped}. Add a Service, or trace a node's iptables-save dump.`;
  }
  if (m.nodes.length === 0) {
    return `Nothing to trace end to end: the manifests of ${view.label} define no nodes. Add Node objects (kubectl get nodes -o yaml) or a kind Cluster config, so packetlens knows which node receives the packet.`;
  }
  return null;
}

/** The address family packets to this cluster have (its first Service or node address). */
export function clusterFamily(view: ClusterView): 4 | 6 {
  const ip = view.model.servicePorts.find(sp => sp.clusterIP)?.clusterIP ?? view.model.nodes[0]?.ips[0];
  return ip?.includes(':') ? 6 : 4;
}

function hopText(h: { kind: string; name: string; address: string | null }): string {
  return `${h.kind === 'external' ? '' : `${h.kind} `}${h.name}${h.address && h.address !== h.name ? ` ${h.address}` : ''}`;
}

export function runManifestTrace(view: ClusterView, packet: string, node: string | null = null): ManifestRun {
  const empty = nothingToTrace(view);
  if (empty) return { ok: false, error: empty };
  const check = checkPacketText(packet, clusterFamily(view));
  if (!check.ok) return { ok: false, error: check.error };
  const parsed = parsePacketText(packet);
  if (!parsed.ok) return parsed;
  // The key of shares.ts's `traceProbe`: a click on a port's CodeLens reuses the trace its title came from.
  const r = view.memoize<ManifestTraceResult>(`trace ${packet} @${node ?? ''}`, () =>
    traceFromManifests(view.model, parsed.input, { node, mode: view.mode }),
  );
  if (!r.ok)
    return {
      ok: false,
      error: `${packet}: ${inEditorWords(r.error)}`,
      ...(needsReceivingNode(r.error) ? { chooseNode: view.model.nodes.map(n => n.name) } : {}),
    };
  const v = r.value;
  const dumped = nodeDump(view, v.node);
  // The document shows the header and then exactly the rules traced; fall back to the traced text alone.
  const dump: NodeDump =
    dumped.rules === v.rules ? dumped : { node: v.node, mode: v.mode, text: v.rules, rules: v.rules, headerLines: 0 };
  const base = traceDiagram(
    traceInEditorWords(v.trace),
    `${v.node} · ${view.label}`,
    packet,
    fieldsFromInput(parsed.input),
    dump.headerLines,
  );
  const route: RouteHop[] = v.hops.map(h => ({ kind: h.kind, name: h.name, address: h.address, reason: h.reason }));
  const outcomes = base.outcomes.map(o => {
    const d = v.destinations[o.index];
    const last = d?.hops[d.hops.length - 1];
    return {
      ...o,
      reaches: d && d.hops.length ? `${d.hops.map(hopText).join(' → ')}${last ? ` (${last.reason})` : ''}` : null,
    };
  });
  const assumed = view.model.predictions.find(p => p.field === 'node');
  const nodes = assumed ? [`predicted: ${assumed.reason}; the trace runs on ${v.node}`] : [];
  // Read in part: a Service past the cut has no rules here, and the trace must not read as the whole answer.
  const partial = v.partial
    ? [`partial manifests: ${v.partial}; a Service past that line has no rules in this trace`]
    : [];
  const warnings = [...partial, ...nodes, ...(view.modeNote ? [view.modeNote] : []), ...base.warnings];
  return { ok: true, value: v, dump, diagram: { ...base, outcomes, route, warnings } };
}

/** Packets worth tracing in these manifests: each Service port from outside and from inside, filtered by the query. */
export function manifestSuggestions(view: ClusterView, query = '', limit = 40): PacketSuggestion[] {
  const kw = queryKeyword(query);
  const out: PacketSuggestion[] = [];
  const seen = new Set<string>();
  for (const sp of view.model.servicePorts) {
    for (const probe of [externalProbe(view, sp), clusterIPProbe(view, sp)]) {
      if (!probe || seen.has(probe.packet)) continue;
      const label =
        `${sp.servicePortName} ${probe.kind}${probe.kind === 'ClusterIP' ? ` ${probe.note ?? ''}` : ''}`.trim();
      if (kw && !probe.packet.includes(kw) && !label.includes(kw)) continue;
      seen.add(probe.packet);
      out.push({ text: probe.packet, label, line: sp.loc.range.start.line });
      if (out.length >= limit) return out;
    }
  }
  return out;
}
