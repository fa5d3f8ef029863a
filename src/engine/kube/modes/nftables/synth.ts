/**
 * kube-proxy's nftables mode for one node and family: what `syncProxyRules` (kubernetes
 * pkg/proxy/nftables/proxier.go, `setupNFTables` and the per-Service-port loop) hands to `nft` on a full
 * sync, as knftables writes it. The base-chain layout and the ClusterIP masquerade rule follow the current
 * upstream test expectations (proxier_test.go `baseRules`, `TestOverallNFTablesRules`): filter chains
 * `filter-prerouting-pre-dnat` / `filter-output-pre-dnat` at dstnat-10 and `filter-input` /
 * `filter-forward` / `filter-output` at filter priority, `cluster-ips-check` for unallocated ClusterIPs and
 * unused ports.
 *
 * Endpoint selection is pkg/proxy/topology.go `CategorizeEndpoints`, shared with iptables mode. A
 * synthesized ruleset is a first sync: there are no stale chains to flush or delete (proxier.go keeps them
 * a second before deleting them, which a later sync's `nft list ruleset` may show, empty).
 */
import { isLoopback, netContains, netsMatcher, parseAddr, parseNet, formatNet } from '../../../net/addr.ts';
import type { ClusterModel, EndpointInfo, ServicePortInfo } from '../../model/types.ts';
import { categorize, externalPolicyLocal } from '../iptables/categorize.ts';
import { nftEndpointNames, nftServiceChainNames } from './names.ts';

export interface NftSynthOptions {
  readonly nodeName: string;
  /** Defaults to the node's addresses in the model. */
  readonly nodeIPs?: readonly string[];
  readonly family?: 4 | 6;
  /** The mark as kube-proxy formats it (`%#08x` of 1 << masqueradeBit: 0x004000). */
  readonly masqueradeMark?: string;
  /** The local-traffic detector's CIDR (null: none). Default: the model's. */
  readonly clusterCIDR?: string | null;
  readonly masqueradeAll?: boolean;
  /** `--nodeport-addresses`; null or [] is kube-proxy's nftables default, `primary`. */
  readonly nodePortAddresses?: readonly string[] | null;
  /** The service CIDRs of this family (`cluster-ips-check` drops unallocated ClusterIPs). Default: the model's. */
  readonly serviceCIDRs?: readonly string[];
}

export interface NftSet {
  readonly kind: 'set' | 'map';
  readonly name: string;
  readonly type: string;
  readonly flags?: readonly string[];
  readonly timeout?: number;
  readonly comment?: string;
  readonly elements: { key: string; comment?: string; value?: string }[];
}

export interface NftChain {
  readonly name: string;
  readonly base?: { readonly type: 'filter' | 'nat'; readonly hook: string; readonly priority: number };
  readonly comment?: string;
  /** Rule text as kube-proxy writes it, `comment "…"` included. */
  readonly rules: string[];
  /** The Service port whose rules these are (`ns/svc:port`), for grouping in the script. */
  readonly owner?: string;
}

export interface NftKubeProxyRules {
  readonly family: 4 | 6;
  /** `ip` or `ip6`. */
  readonly nftFamily: 'ip' | 'ip6';
  readonly table: string;
  readonly tableComment: string;
  readonly sets: NftSet[];
  readonly chains: NftChain[];
  readonly masqueradeMark: string;
  readonly notes: string[];
}

const MARK_MASQ = 'mark-for-masquerade';
const REJECT_CHAIN = 'reject-chain';

function familyOf(ip: string): 4 | 6 | null {
  return parseAddr(ip)?.v ?? null;
}

/** proxyutil.NodePortAddresses.GetNodeIPs over the node's addresses; `primary` is the node's own IP. */
function nodePortIPs(
  nodeIPs: readonly string[],
  family: 4 | 6,
  addresses: readonly string[],
): { matchAll: boolean; ips: string[] } {
  const primary = addresses.includes('primary');
  const nets = addresses
    .filter(a => a !== 'primary')
    .map(c => parseNet(c))
    .filter((n): n is NonNullable<typeof n> => n !== null && n.v === family);
  const ofFamily = nodeIPs.filter(ip => familyOf(ip) === family);
  if (primary) return { matchAll: false, ips: ofFamily.slice(0, 1) };
  if (nets.length === 0 || nets.some(n => n.prefix === 0)) return { matchAll: true, ips: [] };
  const inNets = netsMatcher(nets);
  return { matchAll: false, ips: ofFamily.filter(ip => inNets(parseAddr(ip)!)) };
}

class Tx {
  readonly sets = new Map<string, NftSet>();
  readonly chains = new Map<string, NftChain>();

  set(s: NftSet): NftSet {
    const have = this.sets.get(s.name);
    if (have) return have;
    this.sets.set(s.name, s);
    return s;
  }

  chain(name: string, extra: Partial<NftChain> = {}): NftChain {
    let c = this.chains.get(name);
    if (!c) {
      c = { name, rules: [], ...extra };
      this.chains.set(name, c);
    }
    return c;
  }

  rule(chain: string, text: string, comment?: string): void {
    this.chain(chain).rules.push(comment ? `${text} comment "${comment}"` : text);
  }

  elem(set: string, key: string, value?: string, comment?: string): void {
    const s = this.sets.get(set)!;
    s.elements.push({ key, ...(value !== undefined ? { value } : {}), ...(comment ? { comment } : {}) });
  }
}

/** setupNFTables: the table, base chains, top-level chains, sets and maps every sync starts from. */
function setup(
  tx: Tx,
  x: 'ip' | 'ip6',
  mark: string,
  serviceCIDRs: readonly string[],
  np: { matchAll: boolean; ips: string[] },
) {
  const addr = x === 'ip' ? 'ipv4_addr' : 'ipv6_addr';
  const noLocalhost = x === 'ip' ? 'ip daddr != 127.0.0.0/8' : 'ip6 daddr != ::1';
  const base = (name: string, type: 'filter' | 'nat', hook: string, priority: number) =>
    tx.chain(name, { base: { type, hook, priority } });
  // knftables.DNATPriority is -100, SNATPriority 100, FilterPriority 0.
  base('filter-prerouting-pre-dnat', 'filter', 'prerouting', -110);
  base('filter-output-pre-dnat', 'filter', 'output', -110);
  base('filter-input', 'filter', 'input', 0);
  base('filter-forward', 'filter', 'forward', 0);
  base('filter-output', 'filter', 'output', 0);
  base('nat-prerouting', 'nat', 'prerouting', -100);
  base('nat-output', 'nat', 'output', -100);
  base('nat-postrouting', 'nat', 'postrouting', 100);
  // nftablesJumpChains, in order.
  const jumps: [string, string, string][] = [
    ['nodeport-endpoints-check', 'filter-input', 'ct state new'],
    ['service-endpoints-check', 'filter-input', 'ct state new'],
    ['service-endpoints-check', 'filter-forward', 'ct state new'],
    ['service-endpoints-check', 'filter-output', 'ct state new'],
    ['firewall-check', 'filter-prerouting-pre-dnat', 'ct state new'],
    ['firewall-check', 'filter-output-pre-dnat', 'ct state new'],
    ['services', 'nat-output', ''],
    ['services', 'nat-prerouting', ''],
    ['masquerading', 'nat-postrouting', ''],
    ['cluster-ips-check', 'filter-forward', 'ct state new'],
    ['cluster-ips-check', 'filter-output', 'ct state new'],
  ];
  for (const [dst, src, extra] of jumps) {
    tx.chain(dst);
    tx.rule(src, `${extra ? `${extra} ` : ''}jump ${dst}`);
  }
  for (const c of ['services', 'cluster-ips-check', 'masquerading', MARK_MASQ]) tx.chain(c);
  tx.rule(MARK_MASQ, `mark set mark or ${mark}`);
  tx.rule('masquerading', `mark and ${mark} == 0 return`);
  tx.rule('masquerading', `mark set mark xor ${mark}`);
  tx.rule('masquerading', 'masquerade fully-random');
  tx.set({ kind: 'set', name: 'cluster-ips', type: addr, comment: 'Active ClusterIPs', elements: [] });
  tx.rule('cluster-ips-check', `${x} daddr @cluster-ips reject`, 'Reject traffic to invalid ports of ClusterIPs');
  if (serviceCIDRs.length)
    tx.rule(
      'cluster-ips-check',
      `${x} daddr { ${serviceCIDRs.join(',')} } drop`,
      'Drop traffic to unallocated ClusterIPs',
    );
  if (!np.matchAll) {
    tx.set({
      kind: 'set',
      name: 'nodeport-ips',
      type: addr,
      comment: 'IPs that accept NodePort traffic',
      elements: [],
    });
    for (const ip of np.ips) tx.elem('nodeport-ips', ip);
  }
  const triple = `${addr} . inet_proto . inet_service : verdict`;
  const pair = 'inet_proto . inet_service : verdict';
  tx.set({
    kind: 'map',
    name: 'no-endpoint-services',
    type: triple,
    comment: 'vmap to drop or reject packets to services with no endpoints',
    elements: [],
  });
  tx.set({
    kind: 'map',
    name: 'no-endpoint-nodeports',
    type: pair,
    comment: 'vmap to drop or reject packets to service nodeports with no endpoints',
    elements: [],
  });
  tx.chain(REJECT_CHAIN, { comment: 'helper for @no-endpoint-services / @no-endpoint-nodeports' });
  tx.rule(REJECT_CHAIN, 'reject');
  tx.rule('service-endpoints-check', `${x} daddr . meta l4proto . th dport vmap @no-endpoint-services`);
  tx.rule(
    'nodeport-endpoints-check',
    `${np.matchAll ? noLocalhost : `${x} daddr @nodeport-ips`} meta l4proto . th dport vmap @no-endpoint-nodeports`,
  );
  tx.set({
    kind: 'map',
    name: 'firewall-ips',
    type: triple,
    comment: 'destinations that are subject to LoadBalancerSourceRanges',
    elements: [],
  });
  tx.chain('firewall-check');
  tx.rule('firewall-check', `${x} daddr . meta l4proto . th dport vmap @firewall-ips`);
  tx.set({
    kind: 'map',
    name: 'service-ips',
    type: triple,
    comment: 'ClusterIP, ExternalIP and LoadBalancer IP traffic',
    elements: [],
  });
  tx.set({ kind: 'map', name: 'service-nodeports', type: pair, comment: 'NodePort traffic', elements: [] });
  tx.rule('services', `${x} daddr . meta l4proto . th dport vmap @service-ips`);
  tx.rule(
    'services',
    np.matchAll
      ? `fib daddr type local ${noLocalhost} meta l4proto . th dport vmap @service-nodeports`
      : `${x} daddr @nodeport-ips meta l4proto . th dport vmap @service-nodeports`,
  );
}

export function synthesizeNftables(model: ClusterModel, opts: NftSynthOptions): NftKubeProxyRules {
  const node = model.nodes.find(n => n.name === opts.nodeName);
  const nodeIPs = opts.nodeIPs ?? node?.ips ?? [];
  const family = opts.family ?? (nodeIPs[0] && familyOf(nodeIPs[0]) === 6 ? 6 : 4);
  const x = family === 4 ? 'ip' : 'ip6';
  const kp = model.kubeProxy;
  const mark = opts.masqueradeMark ?? `0x${(1 << kp.masqueradeBit).toString(16).padStart(6, '0')}`;
  const clusterCIDR = opts.clusterCIDR !== undefined ? opts.clusterCIDR : kp.clusterCIDR;
  const detector = clusterCIDR && parseNet(clusterCIDR)?.v === family ? clusterCIDR : null;
  const masqueradeAll = opts.masqueradeAll ?? kp.masqueradeAll;
  const npa = (opts.nodePortAddresses !== undefined ? opts.nodePortAddresses : kp.nodePortAddresses) ?? [];
  const notes: string[] = [];
  // cmd/kube-proxy/app/server_linux.go platformApplyDefaults: nftables mode defaults nodePortAddresses to "primary".
  const addresses = npa.length ? npa : ['primary'];
  if (!npa.length)
    notes.push(
      'nodePortAddresses unset: nftables mode accepts NodePorts on the node\'s primary IP only (kube-proxy\'s "primary" default)',
    );
  const np = nodePortIPs(nodeIPs, family, addresses);
  const loopbacks = nodeIPs.filter(ip => familyOf(ip) === family && isLoopback(parseAddr(ip)!));
  if (loopbacks.length)
    notes.push(`localhost NodePorts are not supported in nftables mode (${loopbacks.join(', ')} left out)`);
  const serviceCIDRs = (opts.serviceCIDRs ?? model.serviceCIDRs)
    .map(c => parseNet(c.trim()))
    .filter((n): n is NonNullable<typeof n> => n !== null && n.v === family)
    .map(formatNet);
  const tx = new Tx();
  setup(tx, x, mark, serviceCIDRs, np);
  const nodeIP = nodeIPs.map(parseAddr).find(a => a?.v === family) ?? null;
  const ports = model.servicePorts
    .filter(sp => sp.clusterIP && familyOf(sp.clusterIP) === family)
    .sort((a, b) => (a.servicePortName < b.servicePortName ? -1 : a.servicePortName > b.servicePortName ? 1 : 0));
  for (const sp of ports) servicePort(tx, sp, { x, family, nodeName: opts.nodeName, detector, masqueradeAll, nodeIP });
  return {
    family,
    nftFamily: x,
    table: 'kube-proxy',
    tableComment: 'rules for kube-proxy',
    sets: [...tx.sets.values()],
    chains: [...tx.chains.values()],
    masqueradeMark: mark,
    notes,
  };
}

interface PortContext {
  readonly x: 'ip' | 'ip6';
  readonly family: 4 | 6;
  readonly nodeName: string;
  readonly detector: string | null;
  readonly masqueradeAll: boolean;
  readonly nodeIP: ReturnType<typeof parseAddr>;
}

/** The per-Service-port body of syncProxyRules. */
function servicePort(tx: Tx, sp: ServicePortInfo, c: PortContext): void {
  const { x } = c;
  const protocol = sp.protocol.toLowerCase();
  const owner = sp.servicePortName;
  const names = nftServiceChainNames(sp.namespace, sp.name, protocol, sp.portName);
  const lbIPs = sp.lbIPs.filter(ip => familyOf(ip) === c.family);
  const externalIPs = sp.externalIPs.filter(ip => familyOf(ip) === c.family);
  const spv = { ...sp, externalIPs };
  const eps = sp.endpoints.filter(e => familyOf(e.ip) === c.family);
  const { cluster, local, allReachable, hasAny } = categorize(eps, spv, c.nodeName, lbIPs);
  const epNames = (e: EndpointInfo) => nftEndpointNames(sp.namespace, sp.name, protocol, sp.portName, e.ip, e.port);
  const affinity = sp.service.sessionAffinity === 'ClientIP';
  const chain = (name: string) => tx.chain(name, { owner });
  for (const e of allReachable) chain(epNames(e).chain);
  const itpLocal = sp.service.internalTrafficPolicy === 'Local';
  const etpLocal = externalPolicyLocal(sp);
  const accessible = (sp.nodePort ?? 0) !== 0 || lbIPs.length > 0 || externalIPs.length > 0;
  const usesClusterPolicyChain = cluster.length > 0 && (!itpLocal || accessible);
  const usesLocalPolicyChain = local.length > 0 && (itpLocal || (etpLocal && accessible));
  if (usesClusterPolicyChain) chain(names.cluster);
  if (usesLocalPolicyChain) chain(names.local);
  const internalChain = itpLocal ? names.local : names.cluster;
  const hasInternal = itpLocal ? hasAny && local.length > 0 : hasAny;
  const externalPolicyChain = etpLocal ? names.local : names.cluster;
  const hasExternal = etpLocal ? hasAny && local.length > 0 : hasAny;
  const usesExternalChain = hasAny && accessible;
  if (usesExternalChain) chain(names.external);
  const intVerdict = !hasAny ? `goto ${REJECT_CHAIN}` : !hasInternal ? 'drop' : '';
  const extVerdict = !hasAny ? `goto ${REJECT_CHAIN}` : !hasExternal ? 'drop' : '';
  const port = String(sp.port);
  const cip = sp.clusterIP!;
  tx.elem('cluster-ips', cip);
  if (hasInternal) tx.elem('service-ips', `${cip} . ${protocol} . ${port}`, `goto ${internalChain}`);
  else tx.elem('no-endpoint-services', `${cip} . ${protocol} . ${port}`, intVerdict, owner);
  for (const ip of externalIPs) {
    if (hasAny) tx.elem('service-ips', `${ip} . ${protocol} . ${port}`, `goto ${names.external}`);
    if (!hasExternal) tx.elem('no-endpoint-services', `${ip} . ${protocol} . ${port}`, extVerdict, owner);
  }
  const usesFW = lbIPs.length > 0 && sp.loadBalancerSourceRanges.length > 0;
  if (usesFW) chain(names.firewall);
  for (const ip of lbIPs) {
    if (hasAny) tx.elem('service-ips', `${ip} . ${protocol} . ${port}`, `goto ${names.external}`);
    if (usesFW) tx.elem('firewall-ips', `${ip} . ${protocol} . ${port}`, `goto ${names.firewall}`);
  }
  if (!hasExternal)
    for (const ip of lbIPs) tx.elem('no-endpoint-services', `${ip} . ${protocol} . ${port}`, extVerdict, owner);
  if (sp.nodePort) {
    if (hasAny) tx.elem('service-nodeports', `${protocol} . ${sp.nodePort}`, `goto ${names.external}`);
    if (!hasExternal) tx.elem('no-endpoint-nodeports', `${protocol} . ${sp.nodePort}`, extVerdict, owner);
  }
  if (hasInternal) {
    // Current upstream matches the ClusterIP alone: the service-ips map already chose protocol and port.
    if (c.masqueradeAll) tx.rule(internalChain, `${x} daddr ${cip} jump ${MARK_MASQ}`);
    else if (c.detector) tx.rule(internalChain, `${x} daddr ${cip} ${x} saddr != ${c.detector} jump ${MARK_MASQ}`);
  }
  if (usesExternalChain) {
    const ext = names.external;
    if (!etpLocal) tx.rule(ext, `jump ${MARK_MASQ}`);
    else {
      if (c.detector) tx.rule(ext, `${x} saddr ${c.detector} goto ${names.cluster}`, 'short-circuit pod traffic');
      tx.rule(ext, `fib saddr type local jump ${MARK_MASQ}`, 'masquerade local traffic');
      tx.rule(ext, `fib saddr type local goto ${names.cluster}`, 'short-circuit local traffic');
    }
    if (hasExternal) tx.rule(ext, `goto ${externalPolicyChain}`);
  }
  if (usesFW) firewallRule(tx, sp, c, names.firewall, lbIPs);
  if (affinity)
    for (const e of allReachable)
      tx.set({
        kind: 'set',
        name: epNames(e).affinity,
        type: c.family === 4 ? 'ipv4_addr' : 'ipv6_addr',
        flags: ['dynamic', 'timeout'],
        timeout: sp.service.affinityTimeoutSeconds,
        elements: [],
      });
  if (usesClusterPolicyChain) endpointDispatch(tx, c, names.cluster, cluster, epNames, affinity);
  if (usesLocalPolicyChain) endpointDispatch(tx, c, names.local, local, epNames, affinity);
  for (const e of allReachable) {
    const n = epNames(e);
    tx.rule(n.chain, `${x} saddr ${e.ip} jump ${MARK_MASQ}`);
    if (affinity) tx.rule(n.chain, `update @${n.affinity} { ${x} saddr }`);
    tx.rule(n.chain, `meta l4proto ${protocol} dnat to ${e.ip.includes(':') ? `[${e.ip}]` : e.ip}:${e.port}`);
  }
}

function firewallRule(tx: Tx, sp: ServicePortInfo, c: PortContext, fw: string, lbIPs: readonly string[]): void {
  const sources: string[] = [];
  let allowFromNode = false;
  for (const text of sp.loadBalancerSourceRanges) {
    // kube-proxy trims and parses each range (a bad one is dropped, with an event).
    const net = parseNet(text.trim());
    if (!net || net.v !== c.family) continue;
    sources.push(formatNet(net));
    if (c.nodeIP && netContains(net, c.nodeIP)) allowFromNode = true;
  }
  if (allowFromNode) sources.push(...lbIPs);
  tx.rule(fw, `${c.x} saddr != { ${sources.join(' , ')} } drop`);
}

function endpointDispatch(
  tx: Tx,
  c: PortContext,
  chain: string,
  eps: readonly EndpointInfo[],
  names: (e: EndpointInfo) => { chain: string; affinity: string },
  affinity: boolean,
): void {
  if (affinity) for (const e of eps) tx.rule(chain, `${c.x} saddr @${names(e).affinity} goto ${names(e).chain}`);
  const elements = eps.map((e, i) => `${i} : goto ${names(e).chain}`).join(' , ');
  tx.rule(chain, `numgen random mod ${eps.length} vmap { ${elements} }`);
}
