/**
 * Kubernetes objects as packetlens reads them from manifests: only the fields that decide where packets
 * go, each object and each Service port with the location it came from.
 */
import type { Loc } from './yaml-node.ts';

export type Protocol = 'TCP' | 'UDP' | 'SCTP';

export interface ServicePortM {
  readonly name: string;
  readonly protocol: Protocol;
  readonly port: number;
  /** A number, a container port name, or null (defaults to `port`). */
  readonly targetPort: number | string | null;
  readonly nodePort: number | null;
  readonly appProtocol: string | null;
  readonly loc: Loc;
}

export interface ServiceM {
  readonly kind: 'Service';
  readonly namespace: string;
  readonly name: string;
  readonly type: 'ClusterIP' | 'NodePort' | 'LoadBalancer' | 'ExternalName';
  /** `None` for a headless Service; null when the manifest leaves it to the apiserver. */
  readonly clusterIP: string | null;
  readonly clusterIPs: readonly string[];
  readonly ports: readonly ServicePortM[];
  readonly externalIPs: readonly string[];
  readonly loadBalancerIP: string | null;
  readonly lbIngress: readonly { ip: string; ipMode: string | null }[];
  readonly loadBalancerSourceRanges: readonly string[];
  readonly externalTrafficPolicy: 'Cluster' | 'Local';
  readonly internalTrafficPolicy: 'Cluster' | 'Local';
  readonly healthCheckNodePort: number | null;
  readonly sessionAffinity: 'None' | 'ClientIP';
  readonly affinityTimeoutSeconds: number;
  readonly ipFamilies: readonly string[];
  readonly ipFamilyPolicy: string | null;
  readonly selector: Readonly<Record<string, string>> | null;
  readonly externalName: string | null;
  readonly allocateLoadBalancerNodePorts: boolean;
  readonly loadBalancerClass: string | null;
  readonly annotations: Readonly<Record<string, string>>;
  readonly loc: Loc;
  /** Locations of fields hovers point at: type, selector, externalTrafficPolicy, sessionAffinity, … */
  readonly fieldLocs: Readonly<Record<string, Loc>>;
}

export interface EndpointM {
  readonly addresses: readonly string[];
  readonly ready: boolean;
  readonly serving: boolean;
  readonly terminating: boolean;
  readonly nodeName: string | null;
  readonly zone: string | null;
  readonly targetPod: string | null;
}

export interface EndpointSliceM {
  readonly kind: 'EndpointSlice';
  readonly namespace: string;
  readonly name: string;
  readonly serviceName: string | null;
  readonly addressType: 'IPv4' | 'IPv6' | 'FQDN';
  readonly endpoints: readonly EndpointM[];
  readonly ports: readonly { name: string; port: number | null; protocol: Protocol }[];
  readonly loc: Loc;
}

export interface ContainerPortM {
  readonly name: string | null;
  readonly containerPort: number;
  readonly protocol: Protocol;
}

export interface PodM {
  readonly kind: 'Pod';
  readonly namespace: string;
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly nodeName: string | null;
  readonly podIPs: readonly string[];
  readonly containerPorts: readonly ContainerPortM[];
  /** The Ready condition when status says; null when the manifest has no status. */
  readonly ready: boolean | null;
  readonly terminating: boolean;
  readonly hostNetwork: boolean;
  /** Set for pods created from a workload's template (predicted). */
  readonly owner: string | null;
  /** For a pod without `nodeName`, which the scheduler places (build.ts predicts where). */
  readonly nodeSelector?: Readonly<Record<string, string>>;
  readonly tolerateControlPlane?: boolean;
  readonly loc: Loc;
}

export interface WorkloadM {
  readonly kind: 'Deployment' | 'ReplicaSet' | 'StatefulSet' | 'DaemonSet' | 'ReplicationController';
  readonly namespace: string;
  readonly name: string;
  readonly replicas: number;
  readonly labels: Readonly<Record<string, string>>;
  readonly nodeName: string | null;
  readonly nodeSelector: Readonly<Record<string, string>>;
  readonly containerPorts: readonly ContainerPortM[];
  readonly hostNetwork: boolean;
  readonly tolerateControlPlane: boolean;
  readonly loc: Loc;
}

export interface NodeM {
  readonly kind: 'Node';
  readonly name: string;
  readonly internalIPs: readonly string[];
  readonly externalIPs: readonly string[];
  readonly podCIDRs: readonly string[];
  readonly labels: Readonly<Record<string, string>>;
  readonly controlPlane: boolean;
  readonly loc: Loc;
}

export interface KindClusterM {
  readonly kind: 'Cluster';
  readonly name: string | null;
  readonly nodes: readonly { role: 'control-plane' | 'worker'; labels: Readonly<Record<string, string>> }[];
  readonly podSubnet: string | null;
  readonly serviceSubnet: string | null;
  readonly kubeProxyMode: string | null;
  readonly loc: Loc;
}

export interface KubeProxyConfigM {
  readonly kind: 'KubeProxyConfiguration';
  readonly mode: 'iptables' | 'ipvs' | 'nftables' | null;
  readonly clusterCIDR: string | null;
  readonly masqueradeAll: boolean | null;
  readonly masqueradeBit: number | null;
  readonly localhostNodePorts: boolean | null;
  readonly nodePortAddresses: readonly string[] | null;
  readonly ipvsScheduler: string | null;
  /** The `nftables:` section, which nftables mode reads instead of `iptables:`. */
  readonly nftables?: { readonly masqueradeAll: boolean | null; readonly masqueradeBit: number | null };
  readonly loc: Loc;
}

/** networking.k8s.io/v1 ServiceCIDR: one or two (dual-stack) ranges ClusterIPs are allocated from. */
export interface ServiceCIDRM {
  readonly kind: 'ServiceCIDR';
  readonly name: string;
  readonly cidrs: readonly string[];
  readonly loc: Loc;
}

export interface IPAddressPoolM {
  readonly kind: 'IPAddressPool';
  readonly namespace: string;
  readonly name: string;
  readonly addresses: readonly string[];
  readonly autoAssign: boolean;
  readonly avoidBuggyIPs: boolean;
  readonly loc: Loc;
}

export interface L2AdvertisementM {
  readonly kind: 'L2Advertisement' | 'BGPAdvertisement';
  readonly namespace: string;
  readonly name: string;
  /** Empty means every pool. */
  readonly ipAddressPools: readonly string[];
  readonly nodeSelectors: readonly Readonly<Record<string, string>>[];
  readonly loc: Loc;
}

export type KubeObject =
  | ServiceM
  | EndpointSliceM
  | PodM
  | WorkloadM
  | NodeM
  | KindClusterM
  | KubeProxyConfigM
  | ServiceCIDRM
  | IPAddressPoolM
  | L2AdvertisementM
  | ({ readonly kind: 'Endpoints' } & Omit<EndpointSliceM, 'kind'>);
