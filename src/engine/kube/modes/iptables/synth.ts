/**
 * kube-proxy's iptables mode, rule for rule: what `syncProxyRules` (kubernetes pkg/proxy/iptables/
 * proxier.go, v1.31 through current upstream, which agree on everything below) hands to iptables-restore
 * for one node. Rules are produced as kube-proxy writes them (its argument order and quoting); see
 * render.ts for the node's iptables-save view and for the order kube-proxy's own tests compare in.
 *
 * This file holds the node-wide rules and settings; service-rules.ts writes each Service port's rules, and
 * categorize.ts picks their endpoints (pkg/proxy/topology.go `CategorizeEndpoints`).
 */
import {
  type Net,
  isLoopback,
  parseAddr,
  parseIPv4Number,
  parseIPv6Bigint,
  parseNet,
  netsMatcher,
} from '../../../net/addr.ts';
import type { ClusterModel } from '../../model/types.ts';
import { forwardAcceptRules, markMasqRule, postroutingRules } from './common-rules.ts';
import { writeServicePortRules, type PortContext } from './service-rules.ts';
import { type RuleItem, itemTable } from './endpoint-rules.ts';

export interface SynthOptions {
  readonly nodeName: string;
  /** Defaults to the node's addresses in the model. */
  readonly nodeIPs?: readonly string[];
  readonly family?: 4 | 6;
  /** The mark as kube-proxy formats it (`%#08x` of 1 << masqueradeBit, e.g. 0x004000). */
  readonly masqueradeMark?: string;
  /** iptables supports `--random-fully` (true for every iptables since 1.6.2). */
  readonly randomFully?: boolean;
  /**
   * The nfacct counters kube-proxy adds when the kernel has nfnetlink_acct (default: none):
   * `ct_state_invalid_dropped_pkts` on the INVALID drop, `localhost_nps_accepted_pkts` on localhost NodePorts.
   */
  readonly nfacct?: { readonly ctStateInvalid?: boolean; readonly localhostNodePorts?: boolean };
  readonly conntrackTCPLiberal?: boolean;
  /** Override the model's local-traffic detector CIDR (null: no detector). */
  readonly clusterCIDR?: string | null;
  readonly masqueradeAll?: boolean;
  readonly localhostNodePorts?: boolean;
  readonly nodePortAddresses?: readonly string[] | null;
  /** Above this many endpoints kube-proxy stops writing per-endpoint comments (largeClusterMode). */
  readonly largeClusterEndpointsThreshold?: number;
}

export interface TableRules {
  /** Chain declaration order as kube-proxy writes them. */
  readonly chains: string[];
  /** `-A CHAIN …` lines in kube-proxy's argument order. */
  readonly rules: string[];
}

export interface KubeProxyRules {
  readonly family: 4 | 6;
  readonly filter: TableRules;
  readonly nat: TableRules;
  readonly masqueradeMark: string;
  readonly notes: string[];
}

/** `parseAddr(ip)?.v ?? null` without building the address (it is asked once per endpoint). */
function familyOf(ip: string): 4 | 6 | null {
  if (parseIPv4Number(ip) >= 0) return 4;
  return ip.includes(':') && parseIPv6Bigint(ip) !== null ? 6 : null;
}

export function synthesizeIptables(model: ClusterModel, opts: SynthOptions): KubeProxyRules {
  const node = model.nodes.find(n => n.name === opts.nodeName);
  const nodeIPs = opts.nodeIPs ?? node?.ips ?? [];
  const family = opts.family ?? (nodeIPs[0] && familyOf(nodeIPs[0]) === 6 ? 6 : 4);
  const kp = model.kubeProxy;
  const mark = opts.masqueradeMark ?? `0x${(1 << kp.masqueradeBit).toString(16).padStart(6, '0')}`;
  const clusterCIDR = opts.clusterCIDR !== undefined ? opts.clusterCIDR : kp.clusterCIDR;
  const localhostNodePorts = opts.localhostNodePorts ?? kp.localhostNodePorts;
  const notes: string[] = [];
  const filterChains = [
    'KUBE-SERVICES',
    'KUBE-EXTERNAL-SERVICES',
    'KUBE-FORWARD',
    'KUBE-NODEPORTS',
    'KUBE-PROXY-FIREWALL',
  ];
  const natChains = ['KUBE-SERVICES', 'KUBE-NODEPORTS', 'KUBE-POSTROUTING', 'KUBE-MARK-MASQ'];
  const filter: string[] = [];
  const nat: RuleItem[] = [...postroutingRules(mark, opts.randomFully ?? true), markMasqRule(mark)];
  if (family === 4 && localhostNodePorts) {
    // Mitigation for route_localnet (https://issue.k8s.io/90259); kubelet writes the same rule.
    filterChains.push('KUBE-FIREWALL');
    filter.push(
      '-A KUBE-FIREWALL -m comment --comment "block incoming localnet connections" -d 127.0.0.0/8 ! -s 127.0.0.0/8 -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP',
    );
  }

  const ports = model.servicePorts
    .filter(sp => sp.clusterIP && familyOf(sp.clusterIP) === family)
    .sort((a, b) => (a.servicePortName < b.servicePortName ? -1 : a.servicePortName > b.servicePortName ? 1 : 0));
  const totalEndpoints = ports.reduce((n, sp) => n + sp.endpoints.length, 0);
  const largeCluster = totalEndpoints > (opts.largeClusterEndpointsThreshold ?? 1000);
  if (largeCluster)
    notes.push(
      `${totalEndpoints} endpoints: above kube-proxy's large-cluster threshold, per-endpoint rules carry no comments`,
    );
  const ctx: PortContext = {
    family,
    nodeName: opts.nodeName,
    nodeIP: nodeIPs.map(parseAddr).find(a => a?.v === family) ?? null,
    detector: clusterCIDR && parseNet(clusterCIDR)?.v === family ? clusterCIDR : null,
    masqueradeAll: opts.masqueradeAll ?? kp.masqueradeAll,
    localhostNodePorts,
    nfacctLocalhost: opts.nfacct?.localhostNodePorts ?? false,
    largeCluster,
    familyOf,
    filter,
    nat,
    natChains,
  };
  for (const sp of ports) writeServicePortRules(ctx, sp);

  const nodePortAddresses = opts.nodePortAddresses !== undefined ? opts.nodePortAddresses : kp.nodePortAddresses;
  nat.push(...nodePortsTail(family, nodeIPs, nodePortAddresses, localhostNodePorts));
  if (!(opts.conntrackTCPLiberal ?? false)) {
    const nfacct = opts.nfacct?.ctStateInvalid ? ' -m nfacct --nfacct-name ct_state_invalid_dropped_pkts' : '';
    filter.push(`-A KUBE-FORWARD -m conntrack --ctstate INVALID${nfacct} -j DROP`);
  }
  filter.push(...forwardAcceptRules(mark));
  return {
    family,
    filter: { chains: filterChains, rules: filter },
    // The endpoint rules stay blocks until rendered (endpoint-rules.ts); `nat.rules` writes them out when read.
    nat: itemTable(natChains, nat),
    masqueradeMark: mark,
    notes,
  };
}

/**
 * The tail call to KUBE-NODEPORTS, which must be the last rule of KUBE-SERVICES: every local address, or only
 * the node's addresses inside nodePortAddresses (loopback: IPv4 and localhostNodePorts only).
 */
function nodePortsTail(
  family: 4 | 6,
  nodeIPs: readonly string[],
  nodePortAddresses: readonly string[] | null,
  localhostNodePorts: boolean,
): string[] {
  const head =
    '-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain"';
  if (!nodePortAddresses || nodePortAddresses.length === 0) {
    const notLoopback = family === 6 ? ' ! -d ::1/128' : !localhostNodePorts ? ' ! -d 127.0.0.0/8' : '';
    return [`${head} -m addrtype --dst-type LOCAL${notLoopback} -j KUBE-NODEPORTS`];
  }
  const inNets = netsMatcher(
    nodePortAddresses.map(c => parseNet(c)).filter((n): n is Net => n !== null && n.v === family),
  );
  const out: string[] = [];
  for (const ipText of [...nodeIPs, family === 4 ? '127.0.0.1' : '::1']) {
    const ip = parseAddr(ipText);
    if (!ip || ip.v !== family || !inNets(ip)) continue;
    if (isLoopback(ip) && (family === 6 || !localhostNodePorts)) continue;
    out.push(`${head} -d ${ipText} -j KUBE-NODEPORTS`);
  }
  return out;
}
