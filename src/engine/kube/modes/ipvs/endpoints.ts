/**
 * Which endpoints become real servers of a virtual server, as IPVS mode's `syncEndpoint` picks them
 * (kubernetes pkg/proxy/ipvs/proxier.go) from pkg/proxy/topology.go `CategorizeEndpoints`:
 *  - cluster endpoints: the ready ones, else (none ready) the serving and terminating ones;
 *  - local endpoints (for a Local traffic policy): this node's ready ones, else its serving+terminating ones;
 *  - `onlyNodeLocalEndpoints` (the ClusterIP with internalTrafficPolicy Local; external IPs, load-balancer
 *    IPs and NodePorts with externalTrafficPolicy Local): the local endpoints, or the cluster endpoints when
 *    there are none (kubernetes#97081: IPVS keeps serving local pods; iptables mode drops instead).
 * Topology hints are not modelled (as in the iptables synthesizer).
 */
import type { EndpointInfo, ServicePortInfo } from '../../model/types.ts';

export function externalPolicyLocal(sp: ServicePortInfo): boolean {
  const t = sp.service.type;
  return (t === 'LoadBalancer' || t === 'NodePort') && sp.service.externalTrafficPolicy === 'Local';
}

export function internalPolicyLocal(sp: ServicePortInfo): boolean {
  return sp.service.internalTrafficPolicy === 'Local';
}

interface Categories {
  readonly cluster: readonly EndpointInfo[];
  readonly local: readonly EndpointInfo[];
}

function categorize(
  eps: readonly EndpointInfo[],
  sp: ServicePortInfo,
  nodeName: string,
  accessible: boolean,
): Categories {
  const usesCluster = !internalPolicyLocal(sp) || accessible;
  const usesLocal = internalPolicyLocal(sp) || (externalPolicyLocal(sp) && accessible);
  let cluster: EndpointInfo[] = [];
  if (usesCluster) {
    cluster = eps.filter(e => e.ready);
    if (cluster.length === 0) cluster = eps.filter(e => e.serving && e.terminating);
  }
  let local: EndpointInfo[] = [];
  if (usesLocal) {
    const mine = eps.filter(e => e.nodeName === nodeName);
    local = mine.filter(e => e.ready);
    if (local.length === 0) local = mine.filter(e => e.serving && e.terminating);
  }
  return { cluster, local };
}

/** The endpoints of one virtual server, `onlyNodeLocal` as syncEndpoint is called for it. */
export function realServerEndpoints(
  eps: readonly EndpointInfo[],
  sp: ServicePortInfo,
  nodeName: string,
  accessible: boolean,
  onlyNodeLocal: boolean,
): readonly EndpointInfo[] {
  const { cluster, local } = categorize(eps, sp, nodeName, accessible);
  if (!onlyNodeLocal) return cluster;
  return local.length > 0 ? local : cluster;
}
