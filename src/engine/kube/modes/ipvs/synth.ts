/**
 * kube-proxy's IPVS mode for one node: what `syncProxyRules` (kubernetes pkg/proxy/ipvs/proxier.go; the
 * stored copy is a post-1.31 revision, see docs/ipvs.md) sets up from the Services and endpoints:
 *  - a virtual server per ClusterIP, external IP, load-balancer IP and (for each node address) NodePort,
 *    with the configured scheduler (default rr), persistence for ClientIP affinity, `mh-port` for mh,
 *    and real servers of weight 1 (endpoints.ts);
 *  - the addresses bound on the dummy interface kube-ipvs0 (ClusterIPs, and external / load-balancer IPs
 *    that are not the node's own), which makes them local to the node;
 *  - the ipsets and their entries (ipset-names.ts), entries written as pkg/proxy/ipvs/ipset `Entry.String`;
 *  - the iptables rules, from rules.ts.
 * Virtual servers are kept in ipvsadm's sorted order; kube-proxy adds them and their real servers in Go map
 * order, so the kernel's real-server list order is unknown (`order: 'unknown'`).
 */
import { type IpvsRealServer, type IpvsService, type IpvsTable, type IpvsProtocol } from '../../../ipvs/types.ts';
import { compareRealServers, compareServices } from '../../../ipvs/render.ts';
import { formatNet, isLoopback, netContains, netsMatcher, parseAddr, parseNet } from '../../../net/addr.ts';
import type { ClusterModel, ServicePortInfo } from '../../model/types.ts';
import type { TableRules } from '../iptables/synth.ts';
import { externalPolicyLocal, internalPolicyLocal, realServerEndpoints } from './endpoints.ts';
import * as S from './ipset-names.ts';
import { type IpsetDef, IPSET_DEFS, familyName } from './ipset-names.ts';
import { writeIptablesRules } from './rules.ts';

export interface IpvsSynthOptions {
  readonly nodeName: string;
  /** The node's addresses (default: the model's); NodePort virtual servers are made on these. */
  readonly nodeIPs?: readonly string[];
  readonly family?: 4 | 6;
  /** Default: the model's KubeProxyConfiguration ipvs.scheduler, else rr. */
  readonly scheduler?: string;
  /** The local-traffic detector's CIDR; null: none (kube-proxy then masquerades by `src,dst`). */
  readonly clusterCIDR?: string | null;
  readonly masqueradeAll?: boolean;
  readonly nodePortAddresses?: readonly string[] | null;
  /** iptables supports `--random-fully` (every iptables since 1.6.2). */
  readonly randomFully?: boolean;
}

export interface IpsetContent {
  readonly def: IpsetDef;
  /** The name in this family (`KUBE-6-…` for IPv6). */
  readonly name: string;
  /** In the order `ipset save` lists them: ports ascending for bitmap:port, sorted text otherwise. */
  readonly entries: readonly string[];
}

export interface IpvsProxyState {
  readonly family: 4 | 6;
  readonly nodeName: string;
  readonly table: IpvsTable;
  /** Addresses on kube-ipvs0. */
  readonly bound: readonly string[];
  readonly ipsets: readonly IpsetContent[];
  readonly nat: TableRules;
  readonly filter: TableRules;
  readonly masqueradeMark: string;
  readonly notes: readonly string[];
}

function familyOf(ip: string): 4 | 6 | null {
  return parseAddr(ip)?.v ?? null;
}

/** The node addresses NodePorts listen on (`nodeAddressSet` or `nodePortAddresses.GetNodeIPs`, no loopback). */
function nodePortIPs(nodeIPs: readonly string[], family: 4 | 6, cidrs: readonly string[] | null): string[] {
  const nets = (cidrs ?? [])
    .map(c => parseNet(c))
    .filter((n): n is NonNullable<typeof n> => n !== null && n.v === family);
  const matchAll = nets.length === 0 || nets.some(n => n.prefix === 0);
  const inNets = netsMatcher(nets);
  return nodeIPs.filter(ip => {
    const a = parseAddr(ip);
    return a && a.v === family && !isLoopback(a) && (matchAll || inNets(a));
  });
}

class Collector {
  readonly services = new Map<string, IpvsService>();
  readonly bound = new Set<string>();
  readonly sets = new Map<string, Set<string>>(IPSET_DEFS.map(d => [d.name, new Set<string>()]));
  /** Load-balancer IP:port:protocol the node may not reach (KUBE-IPVS-OUT-FILTER). */
  readonly lbNoNodeAccess: { ip: string; port: number; protocol: string }[] = [];

  add(set: string, entry: string): void {
    this.sets.get(set)!.add(entry);
  }

  virtualServer(sp: ServicePortInfo, addr: string, port: number, scheduler: string, servers: IpvsRealServer[]): void {
    const protocol = sp.protocol as IpvsProtocol;
    const svc: IpvsService = {
      protocol,
      addr,
      port,
      fwmark: null,
      scheduler,
      // `serv.Flags |= utilipvs.FlagSourceHash` for mh is IP_VS_SVC_F_SCHED2, which ipvsadm names mh-port.
      schedFlags: scheduler === 'mh' ? ['mh-port'] : [],
      persistent: sp.service.sessionAffinity === 'ClientIP' ? sp.service.affinityTimeoutSeconds : null,
      realServers: servers.sort(compareRealServers),
      range: null,
    };
    this.services.set(`${protocol}|${addr}|${port}`, svc);
  }
}

export function synthesizeIpvs(model: ClusterModel, opts: IpvsSynthOptions): IpvsProxyState {
  const node = model.nodes.find(n => n.name === opts.nodeName);
  const allNodeIPs = opts.nodeIPs ?? node?.ips ?? [];
  const family = opts.family ?? (allNodeIPs[0] && familyOf(allNodeIPs[0]) === 6 ? 6 : 4);
  const kp = model.kubeProxy;
  const scheduler = opts.scheduler ?? (kp.ipvsScheduler || 'rr');
  const nodeAddrs = new Set(allNodeIPs.filter(ip => familyOf(ip) === family));
  const npIPs = nodePortIPs(
    allNodeIPs,
    family,
    opts.nodePortAddresses !== undefined ? opts.nodePortAddresses : kp.nodePortAddresses,
  );
  const primaryNodeIP = parseAddr([...nodeAddrs][0] ?? '');
  const c = new Collector();
  const notes: string[] = [];
  const ports = model.servicePorts
    .filter(sp => sp.clusterIP && familyOf(sp.clusterIP) === family)
    .sort((a, b) => (a.servicePortName < b.servicePortName ? -1 : a.servicePortName > b.servicePortName ? 1 : 0));

  for (const sp of ports) {
    const protocol = sp.protocol.toLowerCase();
    const eps = sp.endpoints.filter(e => familyOf(e.ip) === family);
    const externalIPs = sp.externalIPs.filter(ip => familyOf(ip) === family);
    const lbIPs = sp.lbIPs.filter(ip => familyOf(ip) === family);
    const accessible = (sp.nodePort ?? 0) !== 0 || lbIPs.length > 0 || externalIPs.length > 0;
    const etpLocal = externalPolicyLocal(sp);
    const rs = (onlyLocal: boolean): IpvsRealServer[] => {
      const seen = new Map<string, IpvsRealServer>();
      for (const e of realServerEndpoints(eps, sp, opts.nodeName, accessible, onlyLocal)) {
        seen.set(`${e.ip}|${e.port}`, {
          addr: e.ip,
          port: e.port,
          forward: 'Masq',
          weight: 1,
          activeConns: null,
          inactiveConns: null,
          range: null,
        });
      }
      return [...seen.values()];
    };
    // Hairpin: every endpoint on this node, whatever its condition (proxier.go iterates endpointsMap).
    for (const e of eps)
      if (e.nodeName === opts.nodeName) c.add(S.KUBE_LOOP_BACK, `${e.ip},${protocol}:${e.port},${e.ip}`);

    c.add(S.KUBE_CLUSTER_IP, `${sp.clusterIP},${protocol}:${sp.port}`);
    c.virtualServer(sp, sp.clusterIP!, sp.port, scheduler, rs(internalPolicyLocal(sp)));
    c.bound.add(sp.clusterIP!);

    for (const ip of externalIPs) {
      c.add(etpLocal ? S.KUBE_EXTERNAL_IP_LOCAL : S.KUBE_EXTERNAL_IP, `${ip},${protocol}:${sp.port}`);
      c.virtualServer(sp, ip, sp.port, scheduler, rs(etpLocal));
      // "We must not add the address to the dummy device if it exist on another interface".
      if (!nodeAddrs.has(ip)) c.bound.add(ip);
    }

    for (const ip of lbIPs) {
      const entry = `${ip},${protocol}:${sp.port}`;
      c.add(S.KUBE_LOAD_BALANCER, entry);
      if (etpLocal) c.add(S.KUBE_LOAD_BALANCER_LOCAL, entry);
      const ranges = sp.loadBalancerSourceRanges
        .map(r => parseNet(r))
        .filter((n): n is NonNullable<typeof n> => n !== null && n.v === family);
      if (ranges.length) {
        c.add(S.KUBE_LOAD_BALANCER_FW, entry);
        let allowFromNode = false;
        for (const net of ranges) {
          c.add(S.KUBE_LOAD_BALANCER_SOURCE_CIDR, `${entry},${formatNet(net)}`);
          if (primaryNodeIP && netContains(net, primaryNodeIP)) allowFromNode = true;
        }
        // A node reaching its own load-balancer address does so with the address as source.
        if (allowFromNode) c.add(S.KUBE_LOAD_BALANCER_SOURCE_IP, `${entry},${ip}`);
        else c.lbNoNodeAccess.push({ ip, port: sp.port, protocol });
      }
      c.virtualServer(sp, ip, sp.port, scheduler, rs(etpLocal));
      if (!nodeAddrs.has(ip)) c.bound.add(ip);
    }

    if (sp.nodePort) {
      // proxier.go: with no node address to listen on, the NodePort (and the health check port) is skipped.
      if (npIPs.length === 0) {
        notes.push(`${sp.servicePortName}: NodePort ${sp.nodePort} has no node address to listen on`);
        continue;
      }
      const entries = protocol === 'sctp' ? npIPs.map(ip => `${ip},sctp:${sp.nodePort}`) : [String(sp.nodePort)];
      const [set, localSet] =
        protocol === 'tcp'
          ? [S.KUBE_NODE_PORT_TCP, S.KUBE_NODE_PORT_LOCAL_TCP]
          : protocol === 'udp'
            ? [S.KUBE_NODE_PORT_UDP, S.KUBE_NODE_PORT_LOCAL_UDP]
            : [S.KUBE_NODE_PORT_SCTP, S.KUBE_NODE_PORT_LOCAL_SCTP];
      for (const e of entries) {
        c.add(set, e);
        if (etpLocal) c.add(localSet, e);
      }
      for (const ip of npIPs) c.virtualServer(sp, ip, sp.nodePort, scheduler, rs(etpLocal));
    }

    // BaseServicePortInfo keeps a health check port only for LoadBalancer + externalTrafficPolicy Local.
    const hc = sp.service.healthCheckNodePort;
    if (hc && sp.service.type === 'LoadBalancer' && sp.service.externalTrafficPolicy === 'Local')
      c.add(S.KUBE_HEALTH_CHECK_NODE_PORT, String(hc));
  }
  for (const ip of c.bound) c.add(S.KUBE_IPVS_IPS, ip);

  const ipsets: IpsetContent[] = IPSET_DEFS.map(def => {
    const entries = [...c.sets.get(def.name)!];
    entries.sort(def.type === 'bitmap:port' ? (a, b) => Number(a) - Number(b) : (a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return { def, name: familyName(def.name, family), entries };
  });
  const nonEmpty = new Set(ipsets.filter(s => s.entries.length > 0).map(s => s.def.name));
  const clusterCIDR = opts.clusterCIDR !== undefined ? opts.clusterCIDR : kp.clusterCIDR;
  const detector = clusterCIDR && parseNet(clusterCIDR)?.v === family ? clusterCIDR : null;
  const mark = `0x${(1 << kp.masqueradeBit).toString(16).padStart(6, '0')}`;
  const { nat, filter } = writeIptablesRules({
    family,
    nonEmpty,
    setName: n => familyName(n, family),
    masqueradeAll: opts.masqueradeAll ?? kp.masqueradeAll,
    detector,
    lbNoNodeAccess: c.lbNoNodeAccess,
    mark,
    randomFully: opts.randomFully ?? true,
  });
  const table: IpvsTable = { services: [...c.services.values()].sort(compareServices), order: 'unknown' };
  return {
    family,
    nodeName: opts.nodeName,
    table,
    bound: [...c.bound].sort(),
    ipsets,
    nat,
    filter,
    masqueradeMark: mark,
    notes,
  };
}
