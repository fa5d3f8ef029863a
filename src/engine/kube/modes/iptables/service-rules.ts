/**
 * The rules kube-proxy's iptables mode writes for one Service port (kubernetes pkg/proxy/iptables/proxier.go,
 * the per-`svcName` body of `syncProxyRules`), in its order and argument order: the KUBE-SERVICES /
 * KUBE-NODEPORTS dispatch (or the filter table's REJECT/DROP when there are no usable endpoints), the
 * health-check ACCEPT, the policy chains' masquerade rules, KUBE-EXT-*, KUBE-FW-*, then KUBE-SVC-* / KUBE-SVL-*
 * (one `statistic` rule per endpoint, `1/(n-i)` each) and KUBE-SEP-* (endpoint-rules.ts).
 * Rules are written as whole lines: one template per rule kind, the words as kube-proxy's `Write` calls give them.
 */
import { netContains, parseNet, type Addr } from '../../../net/addr.ts';
import type { EndpointInfo, ServicePortInfo } from '../../model/types.ts';
import { serviceChainNames } from '../../hash.ts';
import { categorize, externalPolicyLocal, externallyAccessible } from './categorize.ts';
import { type RuleItem, endpointBlock, partChain, partCount } from './endpoint-rules.ts';

/** What the per-port rules need from the node and the proxy's settings, and where they write. */
export interface PortContext {
  readonly family: 4 | 6;
  readonly nodeName: string;
  readonly nodeIP: Addr | null;
  readonly detector: string | null;
  readonly masqueradeAll: boolean;
  readonly localhostNodePorts: boolean;
  readonly nfacctLocalhost: boolean;
  /** Above kube-proxy's large-cluster threshold per-endpoint rules carry no comments. */
  readonly largeCluster: boolean;
  readonly familyOf: (ip: string) => 4 | 6 | null;
  readonly filter: string[];
  /** Whole rules, and each port's endpoint rules as one block. */
  readonly nat: RuleItem[];
  readonly natChains: string[];
}

/** The decisions proxier.go makes for a port before writing its rules. */
interface PortPlan {
  readonly sp: ServicePortInfo;
  readonly name: string;
  readonly protocol: string;
  /** `-m tcp -p tcp`. */
  readonly proto: string;
  readonly port: string;
  readonly chains: ReturnType<typeof serviceChainNames>;
  readonly lbIPs: readonly string[];
  readonly externalIPs: readonly string[];
  readonly cluster: EndpointInfo[];
  readonly local: EndpointInfo[];
  readonly allReachable: EndpointInfo[];
  readonly hasAny: boolean;
  readonly hasInternal: boolean;
  readonly hasExternal: boolean;
  readonly etpLocal: boolean;
  readonly internalTrafficChain: string;
  readonly externalPolicyChain: string;
  readonly usesExternalChain: boolean;
  readonly usesClusterPolicyChain: boolean;
  readonly usesLocalPolicyChain: boolean;
  readonly usesFW: boolean;
  readonly lbChain: string;
  /** Filter-table target and comment for internal / external traffic without usable endpoints. */
  readonly intTarget: string;
  readonly intComment: string;
  readonly extTarget: string;
  readonly extComment: string;
}

/** The addresses of the node's family: the list itself when all are (no copy per port). */
function ipsOfFamily(ctx: PortContext, list: readonly string[]): readonly string[] {
  for (const ip of list) if (ctx.familyOf(ip) !== ctx.family) return list.filter(x => ctx.familyOf(x) === ctx.family);
  return list;
}

/** The endpoints of the node's family: the list itself when all are. */
function endpointsOfFamily(ctx: PortContext, list: readonly EndpointInfo[]): readonly EndpointInfo[] {
  for (const e of list)
    if (ctx.familyOf(e.ip) !== ctx.family) return list.filter(x => ctx.familyOf(x.ip) === ctx.family);
  return list;
}
const protoWords = new Map<string, string>();

function planPort(ctx: PortContext, sp: ServicePortInfo): PortPlan {
  const protocol = sp.protocol.toLowerCase();
  const name = sp.servicePortName;
  const chains = serviceChainNames(name, protocol);
  const lbIPs = ipsOfFamily(ctx, sp.lbIPs);
  const externalIPs = ipsOfFamily(ctx, sp.externalIPs);
  const spv = externalIPs === sp.externalIPs ? sp : { ...sp, externalIPs };
  const eps = endpointsOfFamily(ctx, sp.endpoints);
  const { cluster, local, allReachable, hasAny } = categorize(eps, spv, ctx.nodeName, lbIPs);
  const itpLocal = sp.service.internalTrafficPolicy === 'Local';
  const etpLocal = externalPolicyLocal(sp);
  const accessible = externallyAccessible(spv, lbIPs);
  const usesFW = hasAny && lbIPs.length > 0 && sp.loadBalancerSourceRanges.length > 0;
  const hasInternal = itpLocal ? hasAny && local.length > 0 : hasAny;
  const hasExternal = etpLocal ? hasAny && local.length > 0 : hasAny;
  const noEndpoints = () => `"${name} has no endpoints"`;
  const noLocal = () => `"${name} has no local endpoints"`;
  let proto = protoWords.get(protocol);
  if (proto === undefined) protoWords.set(protocol, (proto = `-m ${protocol} -p ${protocol}`));
  return {
    sp,
    name,
    protocol,
    proto,
    port: String(sp.port),
    chains,
    lbIPs,
    externalIPs,
    cluster,
    local,
    allReachable,
    hasAny,
    hasInternal,
    hasExternal,
    etpLocal,
    internalTrafficChain: itpLocal ? chains.svl : chains.svc,
    externalPolicyChain: etpLocal ? chains.svl : chains.svc,
    usesExternalChain: hasAny && accessible,
    usesClusterPolicyChain: cluster.length > 0 && (!itpLocal || accessible),
    usesLocalPolicyChain: local.length > 0 && (itpLocal || (etpLocal && accessible)),
    usesFW,
    lbChain: usesFW ? chains.fw : chains.ext,
    intTarget: !hasAny ? 'REJECT' : !hasInternal ? 'DROP' : '',
    intComment: !hasAny ? noEndpoints() : !hasInternal ? noLocal() : '',
    extTarget: !hasAny ? 'REJECT' : !hasExternal ? 'DROP' : '',
    extComment: !hasAny ? noEndpoints() : !hasExternal ? noLocal() : '',
  };
}

export function writeServicePortRules(ctx: PortContext, sp: ServicePortInfo): void {
  const p = planPort(ctx, sp);
  if (p.usesExternalChain) ctx.natChains.push(p.chains.ext);
  if (p.usesFW) ctx.natChains.push(p.chains.fw);
  writeDispatchRules(ctx, p);
  writeNodePortRules(ctx, p);
  if (p.hasInternal) writeInternalMasquerade(ctx, p);
  if (p.usesExternalChain) writeExternalChain(ctx, p);
  if (p.usesFW) writeFirewallChain(ctx, p);
  writeEndpointChains(ctx, p);
}

/** KUBE-SERVICES entries for the cluster IP, external IPs and load-balancer IPs (or their filter-table drops). */
function writeDispatchRules(ctx: PortContext, p: PortPlan): void {
  const { name, proto, port } = p;
  const to = (ip: string) => `${proto} -d ${ip} --dport ${port}`;
  if (p.hasInternal)
    ctx.nat.push(
      `-A KUBE-SERVICES -m comment --comment "${name} cluster IP" ${to(p.sp.clusterIP!)} -j ${p.internalTrafficChain}`,
    );
  else
    ctx.filter.push(`-A KUBE-SERVICES -m comment --comment ${p.intComment} ${to(p.sp.clusterIP!)} -j ${p.intTarget}`);
  const externalDrop = (ip: string) =>
    `-A KUBE-EXTERNAL-SERVICES -m comment --comment ${p.extComment} ${to(ip)} -j ${p.extTarget}`;
  for (const ip of p.externalIPs) {
    if (p.hasAny)
      ctx.nat.push(`-A KUBE-SERVICES -m comment --comment "${name} external IP" ${to(ip)} -j ${p.chains.ext}`);
    if (!p.hasExternal) ctx.filter.push(externalDrop(ip));
  }
  for (const ip of p.lbIPs) {
    if (p.hasAny)
      ctx.nat.push(`-A KUBE-SERVICES -m comment --comment "${name} loadbalancer IP" ${to(ip)} -j ${p.lbChain}`);
    if (p.usesFW)
      ctx.filter.push(
        `-A KUBE-PROXY-FIREWALL -m comment --comment "${name} traffic not accepted by ${p.chains.fw}" ${to(ip)} -j DROP`,
      );
  }
  if (!p.hasExternal) for (const ip of p.lbIPs) ctx.filter.push(externalDrop(ip));
}

/** KUBE-NODEPORTS (nat), the filter table's drop for NodePorts without usable endpoints, the health-check port. */
function writeNodePortRules(ctx: PortContext, p: PortPlan): void {
  const { name, proto, sp } = p;
  if (sp.nodePort) {
    const np = String(sp.nodePort);
    if (p.hasAny) {
      if (ctx.family === 4 && ctx.localhostNodePorts && ctx.nfacctLocalhost)
        ctx.nat.push(
          `-A KUBE-NODEPORTS -m comment --comment ${name} ${proto} -d 127.0.0.0/8 --dport ${np} -m nfacct --nfacct-name localhost_nps_accepted_pkts -j ${p.chains.ext}`,
        );
      ctx.nat.push(`-A KUBE-NODEPORTS -m comment --comment ${name} ${proto} --dport ${np} -j ${p.chains.ext}`);
    }
    if (!p.hasExternal)
      ctx.filter.push(
        `-A KUBE-EXTERNAL-SERVICES -m comment --comment ${p.extComment} -m addrtype --dst-type LOCAL ${proto} --dport ${np} -j ${p.extTarget}`,
      );
  }
  const hc = sp.service.healthCheckNodePort;
  if (hc && sp.service.type === 'LoadBalancer' && sp.service.externalTrafficPolicy === 'Local')
    ctx.filter.push(
      `-A KUBE-NODEPORTS -m comment --comment "${name} health check node port" -m tcp -p tcp --dport ${hc} -j ACCEPT`,
    );
}

/** The internal policy chain's first rule: masquerade traffic from outside the cluster (or everything). */
function writeInternalMasquerade(ctx: PortContext, p: PortPlan): void {
  const head = `-A ${p.internalTrafficChain} -m comment --comment "${p.name} cluster IP" ${p.proto} -d ${p.sp.clusterIP!} --dport ${p.port}`;
  if (ctx.masqueradeAll) ctx.nat.push(`${head} -j KUBE-MARK-MASQ`);
  else if (ctx.detector) ctx.nat.push(`${head} ! -s ${ctx.detector} -j KUBE-MARK-MASQ`);
}

/** KUBE-EXT-*: masquerade external traffic (Cluster policy), or keep pod and local traffic on the cluster chain. */
function writeExternalChain(ctx: PortContext, p: PortPlan): void {
  const ext = `-A ${p.chains.ext} -m comment --comment`;
  const dest = `${p.name} external destinations`;
  if (!p.etpLocal) ctx.nat.push(`${ext} "masquerade traffic for ${dest}" -j KUBE-MARK-MASQ`);
  else {
    if (ctx.detector) ctx.nat.push(`${ext} "pod traffic for ${dest}" -s ${ctx.detector} -j ${p.chains.svc}`);
    ctx.nat.push(`${ext} "masquerade LOCAL traffic for ${dest}" -m addrtype --src-type LOCAL -j KUBE-MARK-MASQ`);
    ctx.nat.push(`${ext} "route LOCAL traffic for ${dest}" -m addrtype --src-type LOCAL -j ${p.chains.svc}`);
  }
  if (p.hasExternal) ctx.nat.push(`-A ${p.chains.ext} -j ${p.externalPolicyChain}`);
}

/** KUBE-FW-*: loadBalancerSourceRanges, the node's own LB addresses when a range holds the node, then fall through. */
function writeFirewallChain(ctx: PortContext, p: PortPlan): void {
  const fw = p.chains.fw;
  const head = `-A ${fw} -m comment --comment "${p.name} loadbalancer IP"`;
  let allowFromNode = false;
  for (const cidr of p.sp.loadBalancerSourceRanges) {
    const net = parseNet(cidr);
    if (!net || net.v !== ctx.family) continue;
    ctx.nat.push(`${head} -s ${cidr} -j ${p.chains.ext}`);
    if (ctx.nodeIP && netContains(net, ctx.nodeIP)) allowFromNode = true;
  }
  // A node reaching its own VIP-style LB address arrives with the VIP as source.
  if (allowFromNode) for (const ip of p.lbIPs) ctx.nat.push(`${head} -s ${ip} -j ${p.chains.ext}`);
  ctx.nat.push(`-A ${fw} -m comment --comment "other traffic to ${p.name} will be dropped by KUBE-PROXY-FIREWALL"`);
}

/**
 * KUBE-SVC-* / KUBE-SVL-* (affinity checks, then one statistic rule per endpoint) and each KUBE-SEP-*: one
 * record for the port (endpoint-rules.ts), its text written when the rules are rendered.
 */
function writeEndpointChains(ctx: PortContext, p: PortPlan): void {
  const policy: { chain: string; endpoints: EndpointInfo[] }[] = [];
  if (p.usesClusterPolicyChain) policy.push({ chain: p.chains.svc, endpoints: p.cluster });
  if (p.usesLocalPolicyChain) policy.push({ chain: p.chains.svl, endpoints: p.local });
  if (policy.length === 0 && p.allReachable.length === 0) return;
  const s = p.sp.service;
  const block = endpointBlock(
    ctx.family,
    p.name,
    p.protocol,
    { on: s.sessionAffinity === 'ClientIP', timeout: s.affinityTimeoutSeconds },
    !ctx.largeCluster,
    policy,
    p.allReachable,
  );
  const parts = partCount(block);
  for (let part = 0; part < parts; part++) ctx.natChains.push(partChain(block, part));
  ctx.nat.push(block);
}
