/**
 * The cluster model's budget: what kube-proxy's rules grow with is not the number of objects the reader
 * counted (`MANIFEST_BUDGET`) but products of them — every port of a Service times every endpoint, times
 * every address the port listens on in IPVS mode, and a DaemonSet times the nodes. A 150 KB EndpointSlice of
 * 1,000 ports × 1,000 endpoints is 4,000,000 iptables rules. The builder counts each product before it builds
 * it, and stops at the first Service (or workload) that does not fit: that one and those after it are left
 * out of the model, and every answer says so (`ClusterModel.partial`).
 */
import type { ServiceM } from '../manifest/types.ts';

/**
 * Endpoint-port pairs (and, separately, placed pods) the model builds. Chosen from numbers:
 *  - the reader admits 160,000 entries (objects, ports, endpoints); Kubernetes' own scalability thresholds
 *    (kubernetes/community sig-scalability/configs-and-limits/thresholds.md: 150,000 pods, 10,000 Services,
 *    250 endpoints per Service in a namespace) fit in it, and Services of up to three ports with ten endpoints
 *    each (1 + 3 + 1 + 3 + 10 entries for 30 pairs) fill it with 252,000 pairs: 300,000 cuts no cluster the
 *    reader reads whole that is built like a real one. The bench's 10k Services × 10 endpoints is 100,000.
 *  - an EndpointSlice holds at most 100 ports and 1,000 endpoints (the API server's validation,
 *    pkg/apis/discovery/validation: maxPorts, maxEndpoints), so one slice is at most 100,000 pairs; larger
 *    products come from shapes the API server refuses or no cluster has (a Service of 1,000 ports, 10,000
 *    external IPs, a Node of thousands of addresses).
 *  - measured (docs/bad-inputs.md, Manifests): 250,000 pairs (one Service, 250 ports × 1,000 endpoints) take
 *    `synth` 526 MB and `trace --manifests` 554 MB; 400,000 took 865 and 843 MB, near the CLI's heap cap.
 * Counted, not measured, because the engine also runs in a browser.
 */
export const MODEL_BUDGET = 300_000;

/**
 * Pods the model places from workloads' replica counts. The reader counts every replica of a Deployment,
 * StatefulSet… as entries (at most 160,000), but a DaemonSet's pods are one per node: DaemonSets × nodes. The
 * same 160,000 (above the thresholds' 150,000 pods per cluster); measured, 300,000 placed pods (60 DaemonSets
 * × 5,000 nodes) took `synth` 678 MB with no Service at all.
 */
export const POD_BUDGET = 160_000;

/** How a kube-proxy mode's rules grow with a Service port (`ProxyMode.cost`, each mode's own). */
export interface CostRule {
  /**
   * Every address of the port (ClusterIP, external IPs, load-balancer IPs, a NodePort on each node address) is
   * a virtual server holding every endpoint (IPVS); otherwise the endpoints' rules are written once per port
   * and each address adds one rule (iptables, nftables).
   */
  readonly addressesMultiplyEndpoints: boolean;
  /** What the product counts, in the budget's message (`endpoint-port pairs`). */
  readonly unit: string;
}

/** iptables' and nftables' growth: a port's endpoints once, plus one rule per address. */
export const RULES_PER_ADDRESS: CostRule = { addressesMultiplyEndpoints: false, unit: 'endpoint-port pairs' };

/** What one Service costs the model and the synthesizers, and how to say so. */
export interface ServiceCost {
  readonly cost: number;
  /** `1000 ports × 1000 endpoints = 1000000 endpoint-port pairs`, with the addresses when they count. */
  readonly shape: string;
}

/**
 * A Service's cost: per port, its endpoints (one set of rules each: the KUBE-SVC rule, the KUBE-SEP chain and
 * its rules, or an nftables element and chain) plus one rule per external IP, load-balancer IP and source
 * range. In IPVS mode every address of the port (ClusterIP, external IPs, load-balancer IPs, a NodePort on
 * each of the node's addresses) is a virtual server holding every endpoint as a real server, so the addresses
 * multiply the endpoints (pkg/proxy/ipvs/proxier.go, syncService / syncEndpoint per address): `rule` says which.
 */
export function serviceCost(
  svc: ServiceM,
  endpointsPerPort: readonly number[],
  rule: CostRule,
  /** The most addresses any node has (IPVS: a NodePort virtual server on each). */
  nodeAddresses: number,
): ServiceCost {
  const x = svc.externalIPs.length;
  // A LoadBalancer Service without an ingress IP may get one predicted (MetalLB): count it.
  const l = Math.max(svc.lbIngress.length, svc.type === 'LoadBalancer' ? 1 : 0);
  const r = l > 0 ? svc.loadBalancerSourceRanges.length : 0;
  const nodePorts = svc.type === 'NodePort' || svc.type === 'LoadBalancer' || svc.ports.some(p => p.nodePort !== null);
  const addresses = rule.addressesMultiplyEndpoints ? 1 + x + l + (nodePorts ? nodeAddresses : 0) : 1;
  let cost = 0;
  let most = 0;
  let least = Infinity;
  for (const e of endpointsPerPort) {
    cost += rule.addressesMultiplyEndpoints ? addresses * Math.max(1, e) + l * r : e + x + l + r;
    most = Math.max(most, e);
    least = Math.min(least, e);
  }
  const ports = endpointsPerPort.length;
  const endpoints = least === most ? `${most} endpoints` : `up to ${most} endpoints`;
  const p = `${ports} port${ports === 1 ? '' : 's'}`;
  let shape: string;
  if (rule.addressesMultiplyEndpoints)
    shape = `${p}${most ? ` × ${endpoints}` : ''}${addresses > 1 ? ` × ${addresses} addresses (ClusterIP${x ? `, ${x} external IPs` : ''}${l ? `, ${l} load-balancer IPs` : ''}${nodePorts && nodeAddresses ? `, a NodePort on each of ${nodeAddresses} node addresses` : ''})` : ''} = ${cost} ${most ? rule.unit : 'virtual servers (no endpoints)'}`;
  else if (x + l + r > 0)
    shape = `${p} × (${endpoints} + ${x + l + r} addresses: external IPs, load-balancer IPs, source ranges) = ${cost} endpoint-port and address-port pairs`;
  else shape = `${p} × ${endpoints} = ${cost} ${rule.unit}`;
  return { cost, shape };
}
