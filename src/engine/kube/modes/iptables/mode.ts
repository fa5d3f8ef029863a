/** kube-proxy's iptables mode as a ProxyMode (modes/types.ts). */
import { parseIptables } from '../../../iptables/parse.ts';
import { endpointChainName, serviceChainNames } from '../../hash.ts';
import { RULES_PER_ADDRESS } from '../../model/budget.ts';
import { endpointString } from '../../model/build.ts';
import type { ClusterModel, ServicePortInfo } from '../../model/types.ts';
import type { Markdown, ProxyMode } from '../types.ts';
import { renderKubeProxyRestore, renderNodeSave } from './render.ts';
import { synthesizeIptables } from './synth.ts';

export function externallyAccessible(sp: ServicePortInfo): boolean {
  return sp.nodePort !== null || sp.lbIPs.length > 0 || sp.externalIPs.length > 0;
}

/** The nat chains kube-proxy writes for a Service port (pkg/proxy/iptables/proxier.go syncProxyRules). */
function portChains(sp: ServicePortInfo, md: Markdown): string[] {
  const { code, escape } = md;
  const proto = sp.protocol.toLowerCase();
  const names = serviceChainNames(sp.servicePortName, proto);
  const s = sp.service;
  const etpLocal = (s.type === 'LoadBalancer' || s.type === 'NodePort') && s.externalTrafficPolicy === 'Local';
  const itpLocal = s.internalTrafficPolicy === 'Local';
  const ready = sp.endpoints.some(e => e.ready || (e.serving && e.terminating));
  const parts: string[] = [];
  if (ready && (!itpLocal || externallyAccessible(sp))) parts.push(`${code(names.svc)} (all endpoints)`);
  if (ready && (itpLocal || (etpLocal && externallyAccessible(sp))))
    parts.push(`${code(names.svl)} (the node's own endpoints, on nodes that have one)`);
  if (ready && externallyAccessible(sp)) parts.push(`${code(names.ext)} (external traffic)`);
  if (ready && sp.lbIPs.length && sp.loadBalancerSourceRanges.length)
    parts.push(`${code(names.fw)} (loadBalancerSourceRanges)`);
  const seps = sp.endpoints.filter(e => e.ready || (e.serving && e.terminating));
  for (const e of seps.slice(0, 8))
    parts.push(
      `${code(endpointChainName(sp.servicePortName, proto, endpointString(e)))} (${escape(endpointString(e))})`,
    );
  if (seps.length > 8) parts.push(`and ${seps.length - 8} more KUBE-SEP chains`);
  if (!parts.length)
    return ['', `**Chains**: none besides a ${code('REJECT')} rule in filter KUBE-SERVICES (no endpoints).`];
  return ['', `**Chains** (nat): ${parts.join(' · ')}`];
}

export const iptablesMode: ProxyMode = {
  name: 'iptables',
  // Per port: the endpoints' KUBE-SVC/SEP rules once, one rule per external, load-balancer IP and source range.
  cost: RULES_PER_ADDRESS,
  formats: ['save', 'restore'],
  synthesize(model, opts) {
    const rules = synthesizeIptables(model, {
      nodeName: opts.nodeName,
      ...(opts.nodeIPs ? { nodeIPs: opts.nodeIPs } : {}),
      ...(opts.nfacct ? { nfacct: opts.nfacct } : {}),
      ...(opts.randomFully !== undefined ? { randomFully: opts.randomFully } : {}),
    });
    // Rendered when first read: `synth` prints `render(…)` and never reads it.
    let text: string | undefined;
    return {
      get rules() {
        return (text ??= renderNodeSave(rules));
      },
      rulesTitle: 'iptables-save',
      notes: rules.notes,
      facts: [],
      sideFiles: [],
      traceOptions: node => ({ node }),
      render: (format, header) =>
        format === 'restore' ? renderKubeProxyRestore(rules) : renderNodeSave(rules, { header }),
    };
  },
  parse: (rules, file) => parseIptables(rules, { file, lazy: true }),
  wording: {
    headline: () => 'kube-proxy v1.31 iptables mode',
    traceNote: () => null,
    lensSuffix: '',
    affinityNone: (_model, balance, { code }) =>
      `**None**: each new connection is balanced on its own by the ${code('-m statistic')} rules${balance}.`,
    affinityClientIP(_model, sp, t, balance, { code }) {
      const svc = sp ? code(serviceChainNames(sp.servicePortName, sp.protocol.toLowerCase()).svc) : 'KUBE-SVC-…';
      return `**ClientIP**: a client's connections stick to the endpoint its first connection reached, for ${t} s: kube-proxy puts a ${code(`-m recent --rcheck --seconds ${t} --reap`)} rule per endpoint first in ${svc}, and ${code('-m recent --set')} in each KUBE-SEP chain. The first connection is balanced as usual${balance}.`;
    },
    portObjects: (_model: ClusterModel, sp, md) => portChains(sp, md),
  },
};
