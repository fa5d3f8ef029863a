/**
 * Which endpoints a Service port's rules use on one node: kubernetes pkg/proxy/topology.go
 * `CategorizeEndpoints` (ready endpoints, falling back to serving+terminating ones; local endpoints for Local
 * traffic policies). Topology hints are not modelled. Shared by the iptables and nftables modes.
 */
import { endpointString } from '../../model/build.ts';
import type { EndpointInfo, ServicePortInfo } from '../../model/types.ts';

export interface Categorized {
  readonly cluster: EndpointInfo[];
  readonly local: EndpointInfo[];
  readonly allReachable: EndpointInfo[];
  readonly hasAny: boolean;
}

export function externalPolicyLocal(sp: ServicePortInfo): boolean {
  // apiservice.ExternalPolicyLocal: only NodePort and LoadBalancer Services have an external policy.
  const t = sp.service.type;
  return (t === 'LoadBalancer' || t === 'NodePort') && sp.service.externalTrafficPolicy === 'Local';
}

export function externallyAccessible(sp: ServicePortInfo, lbIPs: readonly string[]): boolean {
  return (sp.nodePort ?? 0) !== 0 || lbIPs.length > 0 || sp.externalIPs.length > 0;
}

export function categorize(
  eps: readonly EndpointInfo[],
  sp: ServicePortInfo,
  nodeName: string,
  lbIPs: readonly string[],
): Categorized {
  const itpLocal = sp.service.internalTrafficPolicy === 'Local';
  const accessible = externallyAccessible(sp, lbIPs);
  const usesCluster = !itpLocal || accessible;
  const usesLocal = itpLocal || (externalPolicyLocal(sp) && accessible);
  const isLocal = (e: EndpointInfo) => e.nodeName === nodeName;
  let cluster: EndpointInfo[] = [];
  let local: EndpointInfo[] = [];
  let hasAny = false;
  if (usesCluster) {
    cluster = eps.filter(e => e.ready);
    if (cluster.length === 0) cluster = eps.filter(e => e.serving && e.terminating);
    if (cluster.length > 0) hasAny = true;
  }
  if (!usesLocal) return { cluster, local, allReachable: cluster, hasAny };
  let localReady = false;
  let localTerminating = false;
  for (const e of eps) {
    if (e.ready) {
      hasAny = true;
      if (isLocal(e)) localReady = true;
    } else if (e.serving && e.terminating) {
      hasAny = true;
      if (isLocal(e)) localTerminating = true;
    }
  }
  if (localReady) local = eps.filter(e => isLocal(e) && e.ready);
  else if (localTerminating) local = eps.filter(e => isLocal(e) && e.serving && e.terminating);
  if (!usesCluster) return { cluster, local, allReachable: local, hasAny };
  const seen = new Set(cluster.map(endpointString));
  return { cluster, local, allReachable: [...cluster, ...local.filter(e => !seen.has(endpointString(e)))], hasAny };
}
