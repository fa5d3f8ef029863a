/**
 * The CodeLens above each Service port in a manifest: `▶ tcp 172.18.255.200:80 → webpod1 50% · webpod2 50%`,
 * the port's best-known address and where new connections to it go, with the exact shares of an
 * end-to-end trace from the cluster's manifests (the trace the lens runs when clicked).
 */
import { type ServiceM, type ServicePortInfo, formatRational, toNumber } from '../../engine/api.ts';
import { percent } from '../probability.ts';
import { type ClusterView, hostPort } from './cluster.ts';
import { portProbe } from './probe.ts';
import { type Share, sharesOfTrace, sharesText, svcChainShares, traceProbe } from './shares.ts';

export interface PortLens {
  readonly title: string;
  readonly tooltip: string;
  /** The packet a click traces, with the node it must run on; null when there is nothing to trace. */
  readonly packet: string | null;
  readonly node: string | null;
}

export const TRACE_HINT = 'Click to trace it end to end (client → node → pod) and open the flow diagram.';

function shareLines(shares: readonly Share[]): string[] {
  return shares.map(
    s =>
      `  ${s.label}: ${percent(toNumber(s.share))} (exactly ${formatRational(s.share)})${s.endpoint && s.label !== s.endpoint ? ` → ${s.endpoint}` : ''}${s.node ? ` on ${s.node}` : ''}`,
  );
}

export function portLens(view: ClusterView, sp: ServicePortInfo): PortLens {
  return view.memoize(`lens ${view.portIndex(sp)}`, () => computeLens(view, sp));
}

function computeLens(view: ClusterView, sp: ServicePortInfo): PortLens {
  const probe = portProbe(view, sp);
  const proto = sp.protocol.toLowerCase();
  if (!probe) {
    // No node to trace on: the shares of the Service's KUBE-SVC chain, as any node's kube-proxy writes it.
    const target = sp.clusterIP ? hostPort(sp.clusterIP, sp.port) : `port ${sp.port}`;
    const shares = svcChainShares(view, sp);
    const why = 'These manifests have no nodes (add Node objects or a kind Cluster config) to trace end to end';
    if (!shares || shares.length === 0)
      return {
        title: `▶ ${proto} ${target} → no endpoints`,
        tooltip: `${why}; kube-proxy writes no endpoint rules for ${sp.servicePortName}.`,
        packet: null,
        node: null,
      };
    return {
      title: `▶ ${proto} ${target} → ${sharesText(shares)}`,
      tooltip: [`${why}; the shares are those of its KUBE-SVC chain:`, ...shareLines(shares)].join('\n'),
      packet: null,
      node: null,
    };
  }
  const head = `▶ ${probe.protocol} ${probe.target} →`;
  const notes = [
    probe.note,
    probe.predicted ? `${probe.target.replace(/:\d+$/, '')} is predicted: ${probe.predicted}` : null,
    view.modeNote,
  ].filter((n): n is string => n !== null);
  const r = traceProbe(view, probe);
  if (!r.ok) {
    const short = /no ready endpoint/.test(r.error)
      ? 'no ready endpoint'
      : /no node named|no nodes/.test(r.error)
        ? 'no node to trace on'
        : 'cannot trace';
    return {
      title: `${head} ${short}`,
      tooltip: [`${probe.packet}: ${r.error}`, ...notes].join('\n'),
      packet: probe.packet,
      node: probe.node,
    };
  }
  const shares = sharesOfTrace(r, sp.namespace);
  const route = r.value.hops.map(h => `${h.name}${h.address ? ` (${h.address})` : ''}`).join(' → ');
  const assumed = view.predictedEndpoints(sp);
  const tooltip = [
    `${probe.packet} (${probe.kind}): ${route}${view.proxy.wording.lensSuffix}`,
    ...shareLines(shares),
    ...(assumed ? [assumed] : []),
    ...notes,
    TRACE_HINT,
  ];
  return {
    title: `${head} ${sharesText(shares)}${assumed ? ' (predicted)' : ''}`,
    tooltip: tooltip.join('\n'),
    packet: probe.packet,
    node: probe.node,
  };
}

/** The lens of a port kube-proxy writes no rules for (headless and ExternalName Services), or null. */
export function noRulesTitle(service: ServiceM): string | null {
  if (service.type === 'ExternalName')
    return `ExternalName Service: a DNS CNAME to ${service.externalName ?? '(no externalName)'}, no kube-proxy rules`;
  if (service.clusterIP === 'None')
    return 'headless Service (clusterIP: None): DNS returns the pod addresses, kube-proxy writes no rules';
  return null;
}
