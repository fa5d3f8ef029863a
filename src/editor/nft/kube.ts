/**
 * kube-proxy's nftables names, read back (pkg/proxy/nftables/proxier.go: `servicePortChainNamePrefix`
 * "service-", `serviceExternalChainNamePrefix` "external-", `servicePortEndpointChainNamePrefix`
 * "endpoint-", `serviceFirewallChainNamePrefix` "firewall-", `servicePortEndpointAffinityNamePrefix`
 * "affinity-"): `PREFIX-HASH-namespace/name/protocol/portname`, and for endpoints `…__ip/port`. The hash
 * is one-way; the readable part of the name is what the proxier wrote there.
 */
export type KubeNftKind = 'service' | 'external' | 'endpoint' | 'firewall' | 'affinity';

export interface KubeNftName {
  readonly kind: KubeNftKind;
  readonly namespace: string;
  readonly service: string;
  readonly protocol: string;
  readonly port: string;
  /** Endpoints and affinity sets: `ip:port` (IPv6 in brackets). */
  readonly endpoint: string | null;
}

const NAME =
  /^(service|external|endpoint|firewall|affinity)-[A-Z0-9]{8}-([^/]+)\/([^/]+)\/([a-z]+)\/([^/]*?)(?:__(.+)\/(\d+))?$/;

export function kubeNftName(name: string): KubeNftName | null {
  const m = NAME.exec(name);
  if (!m) return null;
  const ip = m[6];
  return {
    kind: m[1] as KubeNftKind,
    namespace: m[2]!,
    service: m[3]!,
    protocol: m[4]!,
    port: m[5]!,
    endpoint: ip !== undefined ? `${ip.includes(':') ? `[${ip}]` : ip}:${m[7]}` : null,
  };
}

export const KUBE_NFT_TEXT: Readonly<Record<KubeNftKind, string>> = {
  service: "the Service port's chain: it picks an endpoint for new connections (numgen random vmap)",
  external: "the Service port's chain for traffic from outside the cluster (NodePort, external and load-balancer IPs)",
  endpoint: 'one endpoint of the Service port: it DNATs new connections to the endpoint',
  firewall: 'the load balancer source ranges check (loadBalancerSourceRanges) of the Service port',
  affinity: 'the session-affinity set of one endpoint (ClientIP): clients seen recently, filled at run time',
};

export function serviceText(k: KubeNftName): string {
  return `${k.namespace}/${k.service}${k.port ? ` port ${k.port}` : ''} (${k.protocol})`;
}
