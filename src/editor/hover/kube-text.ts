/**
 * One sentence per kube-proxy chain (iptables mode, kubernetes pkg/proxy/iptables/proxier.go and
 * pkg/kubelet/kubelet_network_linux.go).
 */
import type { KubeChainKind } from '../kube-proxy-chains.ts';

export const KUBE_CHAIN_TEXT: Record<KubeChainKind, string> = {
  services:
    'the entry point for Service traffic: one rule per Service address and port (cluster IPs, external and load-balancer IPs), then NodePorts for local destinations.',
  nodeports: "NodePort Services: matched by destination port when the destination is one of the node's addresses.",
  svc: 'a Service port: spreads new connections over all its endpoints with `-m statistic` rules (marking off-cluster sources for masquerade first).',
  svl: 'a Service port, local endpoints only (`externalTrafficPolicy: Local` / `internalTrafficPolicy: Local`).',
  ext: "external traffic to a Service port (NodePort, external or load-balancer IP): marks it for masquerade where needed, then sends it to the Service's endpoints.",
  fw: 'the load-balancer firewall of a Service (`loadBalancerSourceRanges`): sources outside the ranges are dropped.',
  sep: 'one endpoint of a Service port: DNAT to the endpoint, after marking hairpin traffic (the endpoint talking to itself) for masquerade.',
  'mark-masq': 'marks packets (0x4000) that KUBE-POSTROUTING must masquerade.',
  'mark-drop': 'marks packets (0x8000) for KUBE-FIREWALL to drop (older kube-proxy).',
  postrouting: 'masquerades the packets KUBE-MARK-MASQ marked, clearing the mark first.',
  forward:
    'lets forwarded Service traffic through filter FORWARD (marked or established connections) and drops INVALID ones.',
  firewall: 'drops packets to 127.0.0.0/8 from elsewhere (route_localnet protection) and marked packets.',
  'proxy-firewall': 'drops traffic for load balancers outside their source ranges.',
  'external-services': 'rejects or drops external traffic to Services without endpoints.',
  canary:
    'an empty chain kube-proxy or the kubelet creates to notice when the table is flushed; never jumped to on purpose.',
  other: 'a chain of kube-proxy or the kubelet.',
};
