/**
 * The ipsets kube-proxy's IPVS mode creates, in the order of `ipsetInfo` (kubernetes pkg/proxy/ipvs/
 * proxier.go), with the names and comments of pkg/proxy/ipvs/ipset.go and the set types of
 * pkg/proxy/ipvs/ipset/types.go. IPv6 sets are renamed `KUBE-6-…`, cut to 31 characters (ipset.go
 * `NewIPSet`). kube-proxy creates every set on every sync, empty or not.
 */
export type IpsetType = 'hash:ip' | 'hash:ip,port' | 'hash:ip,port,ip' | 'hash:ip,port,net' | 'bitmap:port';

export interface IpsetDef {
  readonly name: string;
  readonly type: IpsetType;
  readonly comment: string;
}

export const KUBE_LOOP_BACK = 'KUBE-LOOP-BACK';
export const KUBE_CLUSTER_IP = 'KUBE-CLUSTER-IP';
export const KUBE_EXTERNAL_IP = 'KUBE-EXTERNAL-IP';
export const KUBE_EXTERNAL_IP_LOCAL = 'KUBE-EXTERNAL-IP-LOCAL';
export const KUBE_LOAD_BALANCER = 'KUBE-LOAD-BALANCER';
export const KUBE_LOAD_BALANCER_FW = 'KUBE-LOAD-BALANCER-FW';
export const KUBE_LOAD_BALANCER_LOCAL = 'KUBE-LOAD-BALANCER-LOCAL';
export const KUBE_LOAD_BALANCER_SOURCE_IP = 'KUBE-LOAD-BALANCER-SOURCE-IP';
export const KUBE_LOAD_BALANCER_SOURCE_CIDR = 'KUBE-LOAD-BALANCER-SOURCE-CIDR';
export const KUBE_NODE_PORT_TCP = 'KUBE-NODE-PORT-TCP';
export const KUBE_NODE_PORT_LOCAL_TCP = 'KUBE-NODE-PORT-LOCAL-TCP';
export const KUBE_NODE_PORT_UDP = 'KUBE-NODE-PORT-UDP';
export const KUBE_NODE_PORT_LOCAL_UDP = 'KUBE-NODE-PORT-LOCAL-UDP';
export const KUBE_NODE_PORT_SCTP = 'KUBE-NODE-PORT-SCTP-HASH';
export const KUBE_NODE_PORT_LOCAL_SCTP = 'KUBE-NODE-PORT-LOCAL-SCTP-HASH';
export const KUBE_HEALTH_CHECK_NODE_PORT = 'KUBE-HEALTH-CHECK-NODE-PORT';
export const KUBE_IPVS_IPS = 'KUBE-IPVS-IPS';

export const IPSET_DEFS: readonly IpsetDef[] = [
  {
    name: KUBE_LOOP_BACK,
    type: 'hash:ip,port,ip',
    comment: 'Kubernetes endpoints dst ip:port, source ip for solving hairpin purpose',
  },
  {
    name: KUBE_CLUSTER_IP,
    type: 'hash:ip,port',
    comment: 'Kubernetes service cluster ip + port for masquerade purpose',
  },
  {
    name: KUBE_EXTERNAL_IP,
    type: 'hash:ip,port',
    comment: 'Kubernetes service external ip + port for masquerade and filter purpose',
  },
  {
    name: KUBE_EXTERNAL_IP_LOCAL,
    type: 'hash:ip,port',
    comment: 'Kubernetes service external ip + port with externalTrafficPolicy=local',
  },
  { name: KUBE_LOAD_BALANCER, type: 'hash:ip,port', comment: 'Kubernetes service lb portal' },
  {
    name: KUBE_LOAD_BALANCER_FW,
    type: 'hash:ip,port',
    comment: 'Kubernetes service load balancer ip + port for load balancer with sourceRange',
  },
  {
    name: KUBE_LOAD_BALANCER_LOCAL,
    type: 'hash:ip,port',
    comment: 'Kubernetes service load balancer ip + port with externalTrafficPolicy=local',
  },
  {
    name: KUBE_LOAD_BALANCER_SOURCE_IP,
    type: 'hash:ip,port,ip',
    comment: 'Kubernetes service load balancer ip + port + source IP for packet filter purpose',
  },
  {
    name: KUBE_LOAD_BALANCER_SOURCE_CIDR,
    type: 'hash:ip,port,net',
    comment: 'Kubernetes service load balancer ip + port + source cidr for packet filter purpose',
  },
  { name: KUBE_NODE_PORT_TCP, type: 'bitmap:port', comment: 'Kubernetes nodeport TCP port for masquerade purpose' },
  {
    name: KUBE_NODE_PORT_LOCAL_TCP,
    type: 'bitmap:port',
    comment: 'Kubernetes nodeport TCP port with externalTrafficPolicy=local',
  },
  { name: KUBE_NODE_PORT_UDP, type: 'bitmap:port', comment: 'Kubernetes nodeport UDP port for masquerade purpose' },
  {
    name: KUBE_NODE_PORT_LOCAL_UDP,
    type: 'bitmap:port',
    comment: 'Kubernetes nodeport UDP port with externalTrafficPolicy=local',
  },
  {
    name: KUBE_NODE_PORT_SCTP,
    type: 'hash:ip,port',
    comment: "Kubernetes nodeport SCTP port for masquerade purpose with type 'hash ip:port'",
  },
  {
    name: KUBE_NODE_PORT_LOCAL_SCTP,
    type: 'hash:ip,port',
    comment: "Kubernetes nodeport SCTP port with externalTrafficPolicy=local with type 'hash ip:port'",
  },
  { name: KUBE_HEALTH_CHECK_NODE_PORT, type: 'bitmap:port', comment: 'Kubernetes health check node port' },
  { name: KUBE_IPVS_IPS, type: 'hash:ip', comment: 'Addresses on the ipvs interface' },
];

/** The name a set has in the given family (`KUBE-6-` for IPv6, at most 31 characters). */
export function familyName(name: string, family: 4 | 6): string {
  if (family === 4) return name;
  return name.replace(/^KUBE-/, 'KUBE-6-').slice(0, 31);
}
