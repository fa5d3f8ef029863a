/**
 * What a Service field means for packets in *this* cluster (kube-proxy pkg/proxy/iptables/proxier.go and
 * pkg/proxy/topology.go; MetalLB's layer-2 announcer): `type` (where the Service is reachable), the traffic
 * policies (which nodes have endpoints to send to, and who keeps the client address), the selector (which
 * pods it matches), session affinity (what sticks, for how long) and the ClusterIP.
 */
import {
  type NodeInfo,
  type ServiceM,
  type ServicePortInfo,
  l2Announcer,
  serviceChainNames,
} from '../../engine/api.ts';
import { code, escapeMarkdown } from '../hover/markdown.ts';
import { type ClusterView, hostPort } from './cluster.ts';
import { clusterShares } from './cluster-shares.ts';
import type { HoverField } from './positions.ts';
import { sharesText } from './shares.ts';

function list(items: readonly string[], max = 8): string {
  if (items.length === 0) return 'none';
  return items.length > max ? `${items.slice(0, max).join(', ')} and ${items.length - max} more` : items.join(', ');
}

function nodeNames(nodes: readonly NodeInfo[]): string[] {
  return nodes.map(n => code(n.name));
}

/** Nodes with a ready endpoint of the port (and the pods on each), and nodes without one. */
function localEndpoints(view: ClusterView, sp: ServicePortInfo): { with: string[]; without: NodeInfo[] } {
  const byNode = new Map<string, string[]>();
  for (const e of sp.endpoints) {
    if (!e.ready || !e.nodeName) continue;
    const list = byNode.get(e.nodeName) ?? [];
    list.push(e.podName ?? e.ip);
    byNode.set(e.nodeName, list);
  }
  return {
    with: [...byNode].map(([node, pods]) => `${code(node)} (${pods.map(escapeMarkdown).join(', ')})`),
    without: view.model.nodes.filter(n => !byNode.has(n.name)),
  };
}

function typeText(view: ClusterView, service: ServiceM, sp: ServicePortInfo | undefined): string[] {
  const inside = sp?.clusterIP
    ? `from inside the cluster (pods and nodes) at the ClusterIP ${code(hostPort(sp.clusterIP, sp.port))}${sp.predicted.clusterIP ? ' (*predicted*)' : ''}`
    : 'from inside the cluster at its ClusterIP';
  switch (service.type) {
    case 'ExternalName':
      return [
        `A DNS alias (CNAME) for ${code(service.externalName ?? '(no externalName)')}: kube-proxy writes no rules; packets go wherever that name resolves.`,
      ];
    case 'ClusterIP':
      return [
        `Reachable only ${inside}: kube-proxy matches it in nat KUBE-SERVICES on every node. No port opens on the nodes' addresses.`,
      ];
    case 'NodePort': {
      const np = sp?.nodePort;
      const on = np ? view.model.nodes.slice(0, 4).map(n => code(hostPort(n.ips[0] ?? n.name, np))) : [];
      return [
        `Reachable ${inside}, and from outside at NodePort ${np ? code(String(np)) : '(none)'}${sp?.predicted.nodePort ? ' (*predicted*)' : ''} on every node's addresses${on.length ? `: ${list(on, 4)}` : ''} (nat KUBE-NODEPORTS → KUBE-EXT-…).`,
      ];
    }
    case 'LoadBalancer': {
      const out = [
        `Reachable ${inside}, at a NodePort on every node${sp?.nodePort ? ` (${code(String(sp.nodePort))})` : service.allocateLoadBalancerNodePorts ? '' : ' — not here: allocateLoadBalancerNodePorts is false'}, and at its load-balancer address.`,
      ];
      const ip = sp?.lbIPs[0];
      if (!sp || !ip)
        out.push(
          '',
          'No load-balancer address in these manifests: it stays pending (no MetalLB pool with a free address, or no status.loadBalancer).',
        );
      else if (view.model.metallb.pools.length) {
        const a = l2Announcer(view.model, sp, ip);
        out.push(
          '',
          `${code(ip)}${sp.predicted.lbIPs ? ' (*predicted*)' : ''}: ${a.node ? `**${escapeMarkdown(a.node)}** answers ARP for it. ` : ''}${escapeMarkdown(a.reason)}.`,
        );
      } else out.push('', `${code(ip)}: which node your load balancer sends it to is not in these manifests.`);
      return out;
    }
  }
}

function etpText(view: ClusterView, service: ServiceM, sp: ServicePortInfo | undefined): string[] {
  if (service.type !== 'NodePort' && service.type !== 'LoadBalancer')
    return [
      `No effect on a ${escapeMarkdown(service.type)} Service: only NodePort and LoadBalancer Services receive external traffic (kube-proxy ignores it otherwise).`,
    ];
  if (!sp) return ['The Service has no ports.'];
  const names = serviceChainNames(sp.servicePortName, sp.protocol.toLowerCase());
  const { with: withEps, without } = localEndpoints(view, sp);
  if (service.externalTrafficPolicy === 'Cluster') {
    const cs = clusterShares(view, sp);
    return [
      `**Cluster**: external traffic (NodePort, load-balancer and external IPs) may go to a ready endpoint on any node${cs ? ` (${sharesText(cs.shares)})` : ''}, and the receiving node masquerades it (${code(names.ext)} jumps to KUBE-MARK-MASQ): the pod sees the node's address, not the client's.`,
    ];
  }
  const out = [
    `**Local**: external traffic goes only to endpoints on the node that receives it (${code(names.svl)}), and keeps the client's address (no masquerade).`,
    '',
    `Nodes with a ready endpoint: ${list(withEps)}.`,
  ];
  if (withEps.length === 0) out.push('', 'No node has one: external traffic is rejected everywhere.');
  else if (without.length)
    out.push('', `On ${list(nodeNames(without))} external traffic is dropped ("has no local endpoints").`);
  const ip = sp.lbIPs[0];
  if (ip && view.model.metallb.pools.length) {
    const a = l2Announcer(view.model, sp, ip);
    out.push(
      '',
      `MetalLB announces ${code(ip)} only from nodes with a ready endpoint: ${a.node ? code(a.node) : 'none'}.`,
    );
  }
  return out;
}

function itpText(view: ClusterView, service: ServiceM, sp: ServicePortInfo | undefined): string[] {
  if (!sp) return ['The Service has no ports.'];
  const names = serviceChainNames(sp.servicePortName, sp.protocol.toLowerCase());
  if (service.internalTrafficPolicy === 'Cluster') {
    const cs = clusterShares(view, sp);
    return [
      `**Cluster**: traffic from pods and nodes to the ClusterIP goes to any ready endpoint through ${code(names.svc)}${cs ? `: ${sharesText(cs.shares)}` : ''}.`,
    ];
  }
  const { with: withEps, without } = localEndpoints(view, sp);
  const out = [
    `**Local**: traffic from pods and nodes to the ClusterIP goes only to endpoints on the client's own node (${code(names.svl)}).`,
    '',
    `Nodes with a ready endpoint: ${list(withEps)}.`,
  ];
  if (without.length)
    out.push(
      '',
      `Clients on ${list(nodeNames(without))} have none: their packets are dropped ("has no local endpoints").`,
    );
  return out;
}

function selectorText(view: ClusterView, service: ServiceM, sp: ServicePortInfo | undefined): string[] {
  if (!service.selector || Object.keys(service.selector).length === 0) {
    return [
      `No selector: kube-proxy takes the endpoints from EndpointSlices or Endpoints objects${sp ? ` (${sp.endpoints.length} in these manifests)` : ''}.`,
    ];
  }
  const sel = Object.entries(service.selector)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  const matches = (labels: Readonly<Record<string, string>>) =>
    Object.entries(service.selector!).every(([k, v]) => labels[k] === v);
  const pods = view.model.pods.filter(p => p.namespace === service.namespace && matches(p.labels));
  const elsewhere = view.model.pods.filter(p => p.namespace !== service.namespace && matches(p.labels));
  const out: string[] = [];
  if (pods.length === 0) {
    out.push(
      `${code(sel)} matches no pod in namespace ${code(service.namespace)} in these manifests: the Service has no endpoints, and kube-proxy rejects its traffic ("has no endpoints").`,
    );
  } else {
    const shown = pods.map(
      p =>
        `${code(p.name)} (${[p.ip ?? 'no address', p.nodeName ?? 'unscheduled', p.ready && !p.terminating ? 'ready' : p.terminating ? 'terminating' : 'not ready'].map(escapeMarkdown).join(', ')}${p.predicted ? `, *predicted* from ${escapeMarkdown(p.owner ?? 'a workload')}` : ''})`,
    );
    out.push(
      `${code(sel)} matches ${pods.length} pod${pods.length === 1 ? '' : 's'} in namespace ${code(service.namespace)}: ${list(shown)}.`,
    );
  }
  if (elsewhere.length)
    out.push(
      '',
      `A selector never reaches other namespaces: ${list(elsewhere.map(p => code(`${p.namespace}/${p.name}`)))} match${elsewhere.length === 1 ? 'es' : ''} the labels but are not selected.`,
    );
  if (sp && (sp.endpointSource === 'EndpointSlice' || sp.endpointSource === 'Endpoints'))
    out.push(
      '',
      `The manifests also hold ${sp.endpointSource} objects for it: kube-proxy takes its ${sp.endpoints.length} endpoints from those, not from the pods the selector matches.`,
    );
  return out;
}

function affinityText(view: ClusterView, service: ServiceM, sp: ServicePortInfo | undefined): string[] {
  const cs = sp ? clusterShares(view, sp) : null;
  const balance = cs ? ` (${sharesText(cs.shares)})` : '';
  const md = { code, escape: escapeMarkdown };
  if (service.sessionAffinity === 'None') return [view.proxy.wording.affinityNone(view.model, balance, md)];
  return [view.proxy.wording.affinityClientIP(view.model, sp, service.affinityTimeoutSeconds, balance, md)];
}

function clusterIPText(view: ClusterView, service: ServiceM, sp: ServicePortInfo | undefined): string[] {
  if (service.clusterIP === 'None')
    return [
      '**None**: a headless Service. DNS returns the pod addresses directly and kube-proxy writes no rules for it.',
    ];
  if (!sp?.clusterIP) return ['No ClusterIP in these manifests.'];
  const reason = sp.predicted.clusterIP ? view.prediction(sp, 'clusterIP') : null;
  return [
    `${code(sp.clusterIP)}: the address pods and nodes connect to; kube-proxy matches it in nat KUBE-SERVICES on every node.${reason ? ` *predicted*: ${escapeMarkdown(reason)}.` : ''}`,
  ];
}

export function fieldHover(view: ClusterView, service: ServiceM, field: HoverField): string {
  const sp = view.portsOf(service)[0];
  const title = `**${code(field)}** of Service ${code(`${service.namespace}/${service.name}`)}${view.portsOf(service).length > 1 ? ` (shown for its first port, ${code(sp!.servicePortName)})` : ''}`;
  const body =
    field === 'type'
      ? typeText(view, service, sp)
      : field === 'externalTrafficPolicy'
        ? etpText(view, service, sp)
        : field === 'internalTrafficPolicy'
          ? itpText(view, service, sp)
          : field === 'selector'
            ? selectorText(view, service, sp)
            : field === 'sessionAffinity'
              ? affinityText(view, service, sp)
              : clusterIPText(view, service, sp);
  return [title, '', ...body].join('\n');
}
