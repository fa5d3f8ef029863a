/**
 * Where new connections to a Service address end up, with exact shares: from an end-to-end trace (each
 * outcome's pod, its probability as the engine computed it), or, when no node can be traced, from the
 * `-m statistic` rules of the Service's KUBE-SVC chain in synthesized kube-proxy rules.
 */
import {
  type ManifestTraceResult,
  type Rational,
  type ServicePortInfo,
  ZERO,
  add,
  endpointString,
  parsePacketText,
  rational,
  renderNodeSave,
  serviceChainNames,
  synthesizeIptables,
  toNumber,
  traceFromManifests,
} from '../../engine/api.ts';
import { analyzeDump } from '../dump-index.ts';
import { distribution } from '../kube-proxy-chains.ts';
import { percent } from '../probability.ts';
import { type ClusterView, podLabel } from './cluster.ts';
import type { Probe } from './probe.ts';

export interface Share {
  /** How the destination is named: `webpod1`, `10.0.0.9:80` (not a pod), `rejected`, `dropped`. */
  readonly label: string;
  /** `namespace/name` of the pod reached, if one is. */
  readonly pod: string | null;
  readonly node: string | null;
  /** The endpoint (`10.10.4.12:80`) after DNAT, if any. */
  readonly endpoint: string | null;
  readonly share: Rational;
}

export function parseExact(text: string): Rational {
  const [n, d] = text.split('/');
  return rational(BigInt(n!), BigInt(d ?? '1'));
}

/** Traces the probe end to end, once per view. */
export function traceProbe(view: ClusterView, probe: Probe): ManifestTraceResult {
  return view.memoize(`trace ${probe.packet} @${probe.node ?? ''}`, () => {
    const parsed = parsePacketText(probe.packet);
    if (!parsed.ok) return parsed;
    return traceFromManifests(view.model, parsed.input, { node: probe.node, mode: view.mode });
  });
}

function sorted(shares: Map<string, Share>): Share[] {
  return [...shares.values()].sort(
    (a, b) => toNumber(b.share) - toNumber(a.share) || (a.label < b.label ? -1 : a.label > b.label ? 1 : 0),
  );
}

/** The outcomes of a trace folded by destination: pods by name, other outcomes by what happened. */
export function sharesOfTrace(result: Extract<ManifestTraceResult, { ok: true }>, namespace: string): Share[] {
  const v = result.value;
  const out = new Map<string, Share>();
  v.trace.outcomes.forEach((o, i) => {
    const d = v.destinations[i];
    const pod = d?.pod ?? null;
    const reached = o.disposition === 'forwarded' || o.disposition === 'output' || o.disposition === 'local';
    const endpoint = o.dnat ?? null;
    const label = pod
      ? podLabel(pod, namespace)
      : !reached
        ? o.disposition
        : o.disposition === 'local'
          ? `node ${v.node}`
          : (endpoint ?? o.packet.dst);
    const prev = out.get(label);
    const p = parseExact(o.probabilityExact);
    out.set(label, { label, pod, node: d?.node ?? null, endpoint, share: prev ? add(prev.share, p) : p });
  });
  return sorted(out);
}

/**
 * The shares of the Service port's KUBE-SVC chain (all ready endpoints: what ClusterIP traffic gets under
 * the Cluster policy), from the rules synthesized for the first worker node (or for no node at all).
 */
export function svcChainShares(view: ClusterView, sp: ServicePortInfo): Share[] | null {
  const index = view.memoize('svc-chain index', () => {
    const nodeName = view.workerNode()?.name ?? '(any node)';
    return analyzeDump(renderNodeSave(synthesizeIptables(view.model, { nodeName })), { file: `${nodeName}.rules` });
  });
  const chain = index.chain('nat', serviceChainNames(sp.servicePortName, sp.protocol.toLowerCase()).svc);
  if (!chain) return null;
  const d = distribution(index, 'nat', chain);
  const out = new Map<string, Share>();
  for (const s of d.shares) {
    const e = sp.endpoints.find(x => endpointString(x) === s.endpoint);
    const pod = e?.podName ? `${sp.namespace}/${e.podName}` : null;
    const label = pod ? podLabel(pod, sp.namespace) : (s.endpoint ?? s.target);
    const prev = out.get(label);
    out.set(label, {
      label,
      pod,
      node: e?.nodeName ?? null,
      endpoint: s.endpoint,
      share: prev ? add(prev.share, s.share) : s.share,
    });
  }
  return sorted(out);
}

/** `webpod1 50% · webpod2 50%` (percentages without decimals when they are whole). */
export function sharesText(shares: readonly Share[]): string {
  return shares.map(s => `${s.label} ${percent(toNumber(s.share))}`).join(' · ');
}

export function totalOf(shares: readonly Share[]): Rational {
  return shares.reduce((acc, s) => add(acc, s.share), ZERO);
}
