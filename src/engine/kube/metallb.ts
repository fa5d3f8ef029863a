/**
 * Which node answers ARP for a LoadBalancer IP in MetalLB layer 2 mode (metallb speaker/
 * layer2_controller.go, `ShouldAnnounce`): the speakers usable for the address's pool — nodes with a
 * speaker, not labelled node.kubernetes.io/exclude-from-external-load-balancers, matched by an
 * L2Advertisement for the pool — restricted to nodes with a ready endpoint when the Service's
 * externalTrafficPolicy is Local, sorted by sha256(nodeName + "#" + ip); the first one announces.
 */
import { inRange, parseAddr, parseAddrRange, parseNet, netContains } from '../net/addr.ts';
import { sha256 } from './hash.ts';
import type { ClusterModel, NodeInfo, ServicePortInfo } from './model/types.ts';

export interface Announcement {
  readonly node: string | null;
  readonly candidates: readonly string[];
  readonly reason: string;
}

function poolOf(model: ClusterModel, ip: string) {
  const a = parseAddr(ip);
  if (!a) return null;
  return (
    model.metallb.pools.find(p =>
      p.addresses.some(entry => {
        const e = entry.trim();
        if (e.includes('-')) {
          const r = parseAddrRange(e);
          return r !== null && inRange(r, a);
        }
        const n = parseNet(e);
        return n !== null && netContains(n, a);
      }),
    ) ?? null
  );
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}

export function l2Announcer(model: ClusterModel, sp: ServicePortInfo, ip: string): Announcement {
  const pool = poolOf(model, ip);
  if (!pool) return { node: null, candidates: [], reason: `${ip} is in no MetalLB IPAddressPool of these manifests` };
  const ads = model.metallb.l2.filter(ad => ad.ipAddressPools.length === 0 || ad.ipAddressPools.includes(pool.name));
  if (ads.length === 0)
    return { node: null, candidates: [], reason: `no L2Advertisement advertises pool ${pool.name}` };
  const matchesAd = (n: NodeInfo) =>
    ads.some(
      ad =>
        ad.nodeSelectors.length === 0 ||
        ad.nodeSelectors.some(sel => Object.entries(sel).every(([k, v]) => n.labels[k] === v)),
    );
  let nodes = model.nodes.filter(n => !n.excludedFromLB && matchesAd(n));
  const excluded = model.nodes.filter(n => n.excludedFromLB).map(n => n.name);
  // No active endpoint anywhere: no speaker announces the address.
  if (!sp.endpoints.some(e => e.ready))
    return {
      node: null,
      candidates: [],
      reason: `${sp.servicePortName} has no ready endpoint, so no speaker announces ${ip}`,
    };
  if (sp.service.externalTrafficPolicy === 'Local') {
    const withEndpoints = new Set(sp.endpoints.filter(e => e.ready && e.nodeName).map(e => e.nodeName!));
    nodes = nodes.filter(n => withEndpoints.has(n.name));
  }
  const ranked = [...nodes].sort((a, b) => compareBytes(sha256(`${a.name}#${ip}`), sha256(`${b.name}#${ip}`)));
  if (ranked.length === 0)
    return {
      node: null,
      candidates: [],
      reason: `no eligible speaker for ${ip}${sp.service.externalTrafficPolicy === 'Local' ? ' (externalTrafficPolicy Local: only nodes with a ready endpoint)' : ''}`,
    };
  const names = ranked.map(n => n.name);
  return {
    node: names[0]!,
    candidates: names,
    reason: `MetalLB L2: speakers for pool ${pool.name} sorted by sha256(node + "#${ip}") are ${names.join(', ')}${excluded.length ? ` (${excluded.join(', ')} excluded from load balancers)` : ''}${sp.service.externalTrafficPolicy === 'Local' ? '; externalTrafficPolicy Local keeps only nodes with a ready endpoint' : ''}; the first announces`,
  };
}
