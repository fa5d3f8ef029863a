/**
 * kube-proxy's iptables mode, rule for rule: what `syncProxyRules` (kubernetes pkg/proxy/iptables/
 * proxier.go, v1.31 through current upstream, which agree on everything below) hands to iptables-restore
 * for one node. Rules are produced as kube-proxy writes them (its argument order and quoting); see
 * render.ts for the node's iptables-save view and for the order kube-proxy's own tests compare in.
 *
 * Endpoint selection follows pkg/proxy/topology.go `CategorizeEndpoints` (ready endpoints, falling back
 * to serving+terminating ones; local endpoints for Local traffic policies). Topology hints are not modelled.
 */
import { isLoopback, parseAddr, parseNet, netContains } from '../../../net/addr.ts';
import { endpointString } from '../../model/build.ts';
import type { ClusterModel, EndpointInfo, ServicePortInfo } from '../../model/types.ts';
import { endpointChainName, serviceChainNames } from '../../hash.ts';

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

interface Categorized {
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

function externallyAccessible(sp: ServicePortInfo, lbIPs: readonly string[]): boolean {
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

/** `fmt.Sprintf("%0.10f", 1.0/float64(n))`. */
export function kubeProxyProbability(n: number): string {
  return (1 / n).toFixed(10);
}

function familyOf(ip: string): 4 | 6 | null {
  return parseAddr(ip)?.v ?? null;
}

export function synthesizeIptables(model: ClusterModel, opts: SynthOptions): KubeProxyRules {
  const node = model.nodes.find(n => n.name === opts.nodeName);
  const nodeIPs = opts.nodeIPs ?? node?.ips ?? [];
  const family = opts.family ?? (nodeIPs[0] && familyOf(nodeIPs[0]) === 6 ? 6 : 4);
  const kp = model.kubeProxy;
  const markValue = 1 << kp.masqueradeBit;
  const mark = opts.masqueradeMark ?? `0x${markValue.toString(16).padStart(6, '0')}`;
  const clusterCIDR = opts.clusterCIDR !== undefined ? opts.clusterCIDR : kp.clusterCIDR;
  const detector = clusterCIDR && parseNet(clusterCIDR)?.v === family ? clusterCIDR : null;
  const masqueradeAll = opts.masqueradeAll ?? kp.masqueradeAll;
  const localhostNodePorts = opts.localhostNodePorts ?? kp.localhostNodePorts;
  const nodePortAddresses = opts.nodePortAddresses !== undefined ? opts.nodePortAddresses : kp.nodePortAddresses;
  const nfacctInvalid = opts.nfacct?.ctStateInvalid ?? false;
  const nfacctLocalhost = opts.nfacct?.localhostNodePorts ?? false;
  const notes: string[] = [];

  const filterChains = [
    'KUBE-SERVICES',
    'KUBE-EXTERNAL-SERVICES',
    'KUBE-FORWARD',
    'KUBE-NODEPORTS',
    'KUBE-PROXY-FIREWALL',
  ];
  const natChains = ['KUBE-SERVICES', 'KUBE-NODEPORTS', 'KUBE-POSTROUTING', 'KUBE-MARK-MASQ'];
  const filterRules: string[] = [];
  const natRules: string[] = [];
  // Joins words and word lists into one rule line; hot (one call per rule), so no intermediate arrays.
  const w = (rules: string[], ...args: (string | readonly string[])[]) => {
    let line = '';
    for (const a of args) {
      if (typeof a === 'string') line = line ? `${line} ${a}` : a;
      else for (const x of a) line = line ? `${line} ${x}` : x;
    }
    rules.push(line);
  };

  w(natRules, '-A', 'KUBE-POSTROUTING', '-m', 'mark', '!', '--mark', `${mark}/${mark}`, '-j', 'RETURN');
  w(natRules, '-A', 'KUBE-POSTROUTING', '-j', 'MARK', '--xor-mark', mark);
  w(
    natRules,
    '-A',
    'KUBE-POSTROUTING',
    '-m',
    'comment',
    '--comment',
    '"kubernetes service traffic requiring SNAT"',
    '-j',
    'MASQUERADE',
    ...((opts.randomFully ?? true) ? ['--random-fully'] : []),
  );
  w(natRules, '-A', 'KUBE-MARK-MASQ', '-j', 'MARK', '--or-mark', mark);
  if (family === 4 && localhostNodePorts) {
    // Mitigation for route_localnet (https://issue.k8s.io/90259); kubelet writes the same rule.
    filterChains.push('KUBE-FIREWALL');
    w(
      filterRules,
      '-A',
      'KUBE-FIREWALL',
      '-m',
      'comment',
      '--comment',
      '"block incoming localnet connections"',
      '-d',
      '127.0.0.0/8',
      '!',
      '-s',
      '127.0.0.0/8',
      '-m',
      'conntrack',
      '!',
      '--ctstate',
      'RELATED,ESTABLISHED,DNAT',
      '-j',
      'DROP',
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
  const svcComment = (s: string): string[] => (largeCluster ? [] : ['-m', 'comment', '--comment', s]);
  const nodeIPv4 = nodeIPs.map(parseAddr).find(a => a?.v === family) ?? null;

  for (const sp of ports) {
    const protocol = sp.protocol.toLowerCase();
    const name = sp.servicePortName;
    const chains = serviceChainNames(name, protocol);
    const lbIPs = sp.lbIPs.filter(ip => familyOf(ip) === family);
    const externalIPs = sp.externalIPs.filter(ip => familyOf(ip) === family);
    const spv = { ...sp, externalIPs };
    const { cluster, local, allReachable, hasAny } = categorize(
      sp.endpoints.filter(e => familyOf(e.ip) === family),
      spv,
      opts.nodeName,
      lbIPs,
    );
    const itpLocal = sp.service.internalTrafficPolicy === 'Local';
    const etpLocal = externalPolicyLocal(sp);
    const accessible = externallyAccessible(spv, lbIPs);
    const usesClusterEndpoints = !itpLocal || accessible;
    const usesLocalEndpoints = itpLocal || (etpLocal && accessible);
    const usesClusterPolicyChain = cluster.length > 0 && usesClusterEndpoints;
    const usesLocalPolicyChain = local.length > 0 && usesLocalEndpoints;
    const internalTrafficChain = itpLocal ? chains.svl : chains.svc;
    const hasInternal = itpLocal ? hasAny && local.length > 0 : hasAny;
    const externalPolicyChain = etpLocal ? chains.svl : chains.svc;
    const hasExternal = etpLocal ? hasAny && local.length > 0 : hasAny;
    const externalTrafficChain = chains.ext;
    const usesExternalChain = hasAny && accessible;
    const usesFW = hasAny && lbIPs.length > 0 && sp.loadBalancerSourceRanges.length > 0;
    const lbChain = usesFW ? chains.fw : externalTrafficChain;
    if (usesExternalChain) natChains.push(externalTrafficChain);
    if (usesFW) natChains.push(chains.fw);

    let intTarget = '';
    let intComment = '';
    let extTarget = '';
    let extComment = '';
    if (!hasAny) {
      intTarget = extTarget = 'REJECT';
      intComment = extComment = `"${name} has no endpoints"`;
    } else {
      if (!hasInternal) {
        intTarget = 'DROP';
        intComment = `"${name} has no local endpoints"`;
      }
      if (!hasExternal) {
        extTarget = 'DROP';
        extComment = `"${name} has no local endpoints"`;
      }
    }
    const proto = ['-m', protocol, '-p', protocol];
    const port = String(sp.port);
    if (hasInternal)
      w(
        natRules,
        '-A',
        'KUBE-SERVICES',
        '-m',
        'comment',
        '--comment',
        `"${name} cluster IP"`,
        proto,
        '-d',
        sp.clusterIP!,
        '--dport',
        port,
        '-j',
        internalTrafficChain,
      );
    else
      w(
        filterRules,
        '-A',
        'KUBE-SERVICES',
        '-m',
        'comment',
        '--comment',
        intComment,
        proto,
        '-d',
        sp.clusterIP!,
        '--dport',
        port,
        '-j',
        intTarget,
      );
    for (const ip of externalIPs) {
      if (hasAny)
        w(
          natRules,
          '-A',
          'KUBE-SERVICES',
          '-m',
          'comment',
          '--comment',
          `"${name} external IP"`,
          proto,
          '-d',
          ip,
          '--dport',
          port,
          '-j',
          externalTrafficChain,
        );
      if (!hasExternal)
        w(
          filterRules,
          '-A',
          'KUBE-EXTERNAL-SERVICES',
          '-m',
          'comment',
          '--comment',
          extComment,
          proto,
          '-d',
          ip,
          '--dport',
          port,
          '-j',
          extTarget,
        );
    }
    for (const ip of lbIPs) {
      if (hasAny)
        w(
          natRules,
          '-A',
          'KUBE-SERVICES',
          '-m',
          'comment',
          '--comment',
          `"${name} loadbalancer IP"`,
          proto,
          '-d',
          ip,
          '--dport',
          port,
          '-j',
          lbChain,
        );
      if (usesFW)
        w(
          filterRules,
          '-A',
          'KUBE-PROXY-FIREWALL',
          '-m',
          'comment',
          '--comment',
          `"${name} traffic not accepted by ${chains.fw}"`,
          proto,
          '-d',
          ip,
          '--dport',
          port,
          '-j',
          'DROP',
        );
    }
    if (!hasExternal)
      for (const ip of lbIPs)
        w(
          filterRules,
          '-A',
          'KUBE-EXTERNAL-SERVICES',
          '-m',
          'comment',
          '--comment',
          extComment,
          proto,
          '-d',
          ip,
          '--dport',
          port,
          '-j',
          extTarget,
        );
    if (sp.nodePort) {
      if (hasAny) {
        if (family === 4 && localhostNodePorts && nfacctLocalhost) {
          w(
            natRules,
            '-A',
            'KUBE-NODEPORTS',
            '-m',
            'comment',
            '--comment',
            name,
            proto,
            '-d',
            '127.0.0.0/8',
            '--dport',
            String(sp.nodePort),
            '-m',
            'nfacct',
            '--nfacct-name',
            'localhost_nps_accepted_pkts',
            '-j',
            externalTrafficChain,
          );
        }
        w(
          natRules,
          '-A',
          'KUBE-NODEPORTS',
          '-m',
          'comment',
          '--comment',
          name,
          proto,
          '--dport',
          String(sp.nodePort),
          '-j',
          externalTrafficChain,
        );
      }
      if (!hasExternal)
        w(
          filterRules,
          '-A',
          'KUBE-EXTERNAL-SERVICES',
          '-m',
          'comment',
          '--comment',
          extComment,
          '-m',
          'addrtype',
          '--dst-type',
          'LOCAL',
          proto,
          '--dport',
          String(sp.nodePort),
          '-j',
          extTarget,
        );
    }
    const hc = sp.service.healthCheckNodePort;
    if (hc && sp.service.type === 'LoadBalancer' && sp.service.externalTrafficPolicy === 'Local') {
      w(
        filterRules,
        '-A',
        'KUBE-NODEPORTS',
        '-m',
        'comment',
        '--comment',
        `"${name} health check node port"`,
        '-m',
        'tcp',
        '-p',
        'tcp',
        '--dport',
        String(hc),
        '-j',
        'ACCEPT',
      );
    }

    if (hasInternal) {
      const args = [
        '-m',
        'comment',
        '--comment',
        `"${name} cluster IP"`,
        ...proto,
        '-d',
        sp.clusterIP!,
        '--dport',
        port,
      ];
      if (masqueradeAll) w(natRules, '-A', internalTrafficChain, args, '-j', 'KUBE-MARK-MASQ');
      else if (detector) w(natRules, '-A', internalTrafficChain, args, '!', '-s', detector, '-j', 'KUBE-MARK-MASQ');
    }
    if (usesExternalChain) {
      if (!etpLocal) {
        w(
          natRules,
          '-A',
          externalTrafficChain,
          '-m',
          'comment',
          '--comment',
          `"masquerade traffic for ${name} external destinations"`,
          '-j',
          'KUBE-MARK-MASQ',
        );
      } else {
        if (detector)
          w(
            natRules,
            '-A',
            externalTrafficChain,
            '-m',
            'comment',
            '--comment',
            `"pod traffic for ${name} external destinations"`,
            '-s',
            detector,
            '-j',
            chains.svc,
          );
        w(
          natRules,
          '-A',
          externalTrafficChain,
          '-m',
          'comment',
          '--comment',
          `"masquerade LOCAL traffic for ${name} external destinations"`,
          '-m',
          'addrtype',
          '--src-type',
          'LOCAL',
          '-j',
          'KUBE-MARK-MASQ',
        );
        w(
          natRules,
          '-A',
          externalTrafficChain,
          '-m',
          'comment',
          '--comment',
          `"route LOCAL traffic for ${name} external destinations"`,
          '-m',
          'addrtype',
          '--src-type',
          'LOCAL',
          '-j',
          chains.svc,
        );
      }
      if (hasExternal) w(natRules, '-A', externalTrafficChain, '-j', externalPolicyChain);
    }
    if (usesFW) {
      const args = ['-A', chains.fw, '-m', 'comment', '--comment', `"${name} loadbalancer IP"`];
      let allowFromNode = false;
      for (const cidr of sp.loadBalancerSourceRanges) {
        const net = parseNet(cidr);
        if (!net || net.v !== family) continue;
        w(natRules, args, '-s', cidr, '-j', externalTrafficChain);
        if (nodeIPv4 && netContains(net, nodeIPv4)) allowFromNode = true;
      }
      // A node reaching its own VIP-style LB address arrives with the VIP as source.
      if (allowFromNode) for (const ip of lbIPs) w(natRules, args, '-s', ip, '-j', externalTrafficChain);
      w(
        natRules,
        '-A',
        chains.fw,
        '-m',
        'comment',
        '--comment',
        `"other traffic to ${name} will be dropped by KUBE-PROXY-FIREWALL"`,
      );
    }
    const affinity = sp.service.sessionAffinity === 'ClientIP';
    const sepNames = new Map<EndpointInfo, string>();
    const sepOf = (e: EndpointInfo): string => {
      let n = sepNames.get(e);
      if (n === undefined) {
        n = endpointChainName(name, protocol, endpointString(e));
        sepNames.set(e, n);
      }
      return n;
    };
    const writeEndpointRules = (chain: string, eps: EndpointInfo[]) => {
      if (affinity) {
        for (const e of eps) {
          const sep = sepOf(e);
          w(
            natRules,
            '-A',
            chain,
            svcComment(`"${name} -> ${endpointString(e)}"`),
            '-m',
            'recent',
            '--name',
            sep,
            '--rcheck',
            '--seconds',
            String(sp.service.affinityTimeoutSeconds),
            '--reap',
            '-j',
            sep,
          );
        }
      }
      eps.forEach((e, i) => {
        const sep = sepOf(e);
        const stat =
          i < eps.length - 1
            ? ['-m', 'statistic', '--mode', 'random', '--probability', kubeProxyProbability(eps.length - i)]
            : [];
        w(natRules, '-A', chain, svcComment(`"${name} -> ${endpointString(e)}"`), stat, '-j', sep);
      });
    };
    if (usesClusterPolicyChain) {
      natChains.push(chains.svc);
      writeEndpointRules(chains.svc, cluster);
    }
    if (usesLocalPolicyChain) {
      natChains.push(chains.svl);
      writeEndpointRules(chains.svl, local);
    }
    for (const e of allReachable) {
      const sep = sepOf(e);
      natChains.push(sep);
      const args = ['-A', sep, ...svcComment(name)];
      w(natRules, args, '-s', e.ip, '-j', 'KUBE-MARK-MASQ');
      w(
        natRules,
        args,
        ...(affinity ? ['-m', 'recent', '--name', sep, '--set'] : []),
        '-m',
        protocol,
        '-p',
        protocol,
        '-j',
        'DNAT',
        '--to-destination',
        endpointString(e),
      );
    }
  }

  // The tail call to KUBE-NODEPORTS must be the last rule of KUBE-SERVICES.
  const npComment = '"kubernetes service nodeports; NOTE: this must be the last rule in this chain"';
  if (!nodePortAddresses || nodePortAddresses.length === 0) {
    const dest = ['-m', 'addrtype', '--dst-type', 'LOCAL'];
    if (family === 6) dest.push('!', '-d', '::1/128');
    else if (!localhostNodePorts) dest.push('!', '-d', '127.0.0.0/8');
    w(natRules, '-A', 'KUBE-SERVICES', '-m', 'comment', '--comment', npComment, dest, '-j', 'KUBE-NODEPORTS');
  } else {
    // Only the node's addresses inside nodePortAddresses (loopback: IPv4 and localhostNodePorts only).
    const nets = nodePortAddresses.map(c => parseNet(c)).filter(n => n !== null && n.v === family);
    const candidates = [...nodeIPs, ...(family === 4 ? ['127.0.0.1'] : ['::1'])];
    for (const ipText of candidates) {
      const ip = parseAddr(ipText);
      if (!ip || ip.v !== family || !nets.some(n => netContains(n!, ip))) continue;
      if (isLoopback(ip) && (family === 6 || !localhostNodePorts)) continue;
      w(natRules, '-A', 'KUBE-SERVICES', '-m', 'comment', '--comment', npComment, '-d', ipText, '-j', 'KUBE-NODEPORTS');
    }
  }
  if (!(opts.conntrackTCPLiberal ?? false)) {
    w(
      filterRules,
      '-A',
      'KUBE-FORWARD',
      '-m',
      'conntrack',
      '--ctstate',
      'INVALID',
      ...(nfacctInvalid ? ['-m', 'nfacct', '--nfacct-name', 'ct_state_invalid_dropped_pkts'] : []),
      '-j',
      'DROP',
    );
  }
  w(
    filterRules,
    '-A',
    'KUBE-FORWARD',
    '-m',
    'comment',
    '--comment',
    '"kubernetes forwarding rules"',
    '-m',
    'mark',
    '--mark',
    `${mark}/${mark}`,
    '-j',
    'ACCEPT',
  );
  w(
    filterRules,
    '-A',
    'KUBE-FORWARD',
    '-m',
    'comment',
    '--comment',
    '"kubernetes forwarding conntrack rule"',
    '-m',
    'conntrack',
    '--ctstate',
    'RELATED,ESTABLISHED',
    '-j',
    'ACCEPT',
  );
  return {
    family,
    filter: { chains: filterChains, rules: filterRules },
    nat: { chains: natChains, rules: natRules },
    masqueradeMark: mark,
    notes,
  };
}
