/**
 * kube-proxy's nftables mode as a ProxyMode (modes/types.ts): one `kube-proxy` table per IP family of the
 * node (`ip`, and `ip6` when the node has an IPv6 address), written as the `nft -f` script knftables sends.
 * The trace runs that script through the nftables front end and evaluator.
 */
import { parseAddr } from '../../../net/addr.ts';
import { parseRuleset } from '../../../parse-ruleset.ts';
import { RULES_PER_ADDRESS } from '../../model/budget.ts';
import { endpointString } from '../../model/build.ts';
import type { ClusterModel, ServicePortInfo } from '../../model/types.ts';
import { categorize, externalPolicyLocal } from '../iptables/categorize.ts';
import type { Markdown, ProxyMode } from '../types.ts';
import { nftEndpointNames, nftServiceChainNames } from './names.ts';

import { renderNftList } from './list.ts';
import { renderNftScript } from './render.ts';
import { type NftKubeProxyRules, synthesizeNftables } from './synth.ts';

function families(nodeIPs: readonly string[]): (4 | 6)[] {
  const v = new Set(nodeIPs.map(ip => parseAddr(ip)?.v).filter((x): x is 4 | 6 => x === 4 || x === 6));
  return v.size === 0 ? [4] : ([4, 6] as const).filter(f => v.has(f));
}

/** The chains kube-proxy writes for one Service port on a node (the same choices as synth.ts). */
function portChains(model: ClusterModel, sp: ServicePortInfo, md: Markdown): string[] {
  const { code, escape } = md;
  const proto = sp.protocol.toLowerCase();
  const names = nftServiceChainNames(sp.namespace, sp.name, proto, sp.portName);
  const node = model.nodes.find(n => !n.controlPlane) ?? model.nodes[0];
  const { cluster, local, allReachable, hasAny } = categorize(sp.endpoints, sp, node?.name ?? '', sp.lbIPs);
  const accessible = (sp.nodePort ?? 0) !== 0 || sp.lbIPs.length > 0 || sp.externalIPs.length > 0;
  const itpLocal = sp.service.internalTrafficPolicy === 'Local';
  const parts: string[] = [];
  if (cluster.length && (!itpLocal || accessible)) parts.push(`${code(names.cluster)} (all endpoints)`);
  if (local.length && (itpLocal || (externalPolicyLocal(sp) && accessible)))
    parts.push(`${code(names.local)} (the node's own endpoints)`);
  if (hasAny && accessible) parts.push(`${code(names.external)} (external traffic)`);
  if (sp.lbIPs.length && sp.loadBalancerSourceRanges.length)
    parts.push(`${code(names.firewall)} (loadBalancerSourceRanges)`);
  for (const e of allReachable.slice(0, 8))
    parts.push(
      `${code(nftEndpointNames(sp.namespace, sp.name, proto, sp.portName, e.ip, e.port).chain)} (${escape(endpointString(e))})`,
    );
  if (allReachable.length > 8) parts.push(`and ${allReachable.length - 8} more endpoint chains`);
  if (!hasAny)
    return [
      '',
      `**nftables**: no chains; its addresses are in the ${code('no-endpoint-services')} map with ${code('goto reject-chain')} (no endpoints).`,
    ];
  return [
    '',
    `**Chains** (table ${code('kube-proxy')}${node ? `, on ${escape(node.name)}` : ''}; reached through the ${code('service-ips')} / ${code('service-nodeports')} verdict maps): ${parts.join(' · ')}`,
  ];
}

export const nftablesMode: ProxyMode = {
  name: 'nftables',
  // Per port: the endpoints' chains and vmap elements once, one element or rule per address.
  cost: RULES_PER_ADDRESS,
  formats: ['script', 'list'],
  synthesize(model, opts) {
    const node = model.nodes.find(n => n.name === opts.nodeName);
    const nodeIPs = opts.nodeIPs ?? node?.ips ?? [];
    const tables: NftKubeProxyRules[] = families(nodeIPs).map(family =>
      synthesizeNftables(model, { nodeName: opts.nodeName, nodeIPs, family }),
    );
    const script = (header?: string) =>
      tables.map((t, i) => renderNftScript(t, i === 0 && header ? { header } : {})).join('\n');
    // Rendered when first read: `synth` prints `render(…)` and never reads it.
    let text: string | undefined;
    return {
      get rules() {
        return (text ??= script());
      },
      rulesTitle: "nft -f (kube-proxy's transaction)",
      notes: [...new Set(tables.flatMap(t => t.notes))],
      facts: [],
      sideFiles: [],
      traceOptions: node => ({ node }),
      render: (format, header) => (format === 'list' ? tables.map(renderNftList).join('') : script(header)),
    };
  },
  parse: (rules, file) => parseRuleset(rules, { file, lazy: true }).ruleset,
  wording: {
    headline: () => 'kube-proxy nftables mode (current upstream rules)',
    traceNote: (_model, node) =>
      `kube-proxy nftables mode on ${node}: table ip kube-proxy; services are dispatched by the service-ips and service-nodeports verdict maps, endpoints by numgen (see packetlens synth --mode nftables)`,
    lensSuffix: ', kube-proxy nftables mode',
    affinityNone: (_model, balance, { code }) =>
      `**None**: each new connection is balanced on its own by the service chain's ${code('numgen random mod N vmap')} rule${balance}.`,
    affinityClientIP: (_model, _sp, t, balance, { code }) =>
      `**ClientIP**: a client's connections stick to the endpoint its first connection reached, for ${t} s: each endpoint chain adds the client to its ${code('affinity-…')} set (${code(`flags dynamic,timeout; timeout ${t}s`)}, ${code('update @affinity-… { ip saddr }')}), and the service chain's ${code('ip saddr @affinity-… goto endpoint-…')} rules come before its numgen rule. The first connection is balanced as usual${balance}.`,
    portObjects: portChains,
  },
};
