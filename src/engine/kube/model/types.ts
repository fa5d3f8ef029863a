/**
 * The cluster model: what the manifests say plus what packetlens predicts for what they leave out. Every
 * predicted value is marked `predicted` and listed in `predictions` with the rule that produced it, so the
 * editor and the CLI can label it wherever it shows.
 */
import type { FileDiagnostic } from '../../diagnostics.ts';
import type { IPAddressPoolM, L2AdvertisementM, Protocol, ServiceM } from '../manifest/types.ts';
import type { Loc } from '../manifest/yaml-node.ts';

export interface Prediction {
  readonly subject: string;
  readonly field: string;
  readonly value: string;
  readonly reason: string;
  readonly loc: Loc | null;
}

export interface NodeInfo {
  readonly name: string;
  /** InternalIPs first. */
  readonly ips: readonly string[];
  readonly podCIDRs: readonly string[];
  readonly labels: Readonly<Record<string, string>>;
  readonly controlPlane: boolean;
  /** A control plane without the control-plane taint (kind's one-node cluster): pods run there. */
  readonly schedulable?: boolean;
  /** node.kubernetes.io/exclude-from-external-load-balancers (kubeadm labels control-plane nodes). */
  readonly excludedFromLB: boolean;
  readonly predicted: boolean;
}

export interface PodInfo {
  readonly namespace: string;
  readonly name: string;
  readonly ip: string | null;
  readonly nodeName: string | null;
  readonly labels: Readonly<Record<string, string>>;
  readonly ready: boolean;
  readonly terminating: boolean;
  readonly containerPorts: readonly { name: string | null; containerPort: number; protocol: Protocol }[];
  readonly hostNetwork: boolean;
  readonly predicted: boolean;
  readonly owner: string | null;
  readonly loc: Loc | null;
}

export interface EndpointInfo {
  readonly ip: string;
  readonly port: number;
  readonly nodeName: string | null;
  readonly ready: boolean;
  readonly serving: boolean;
  readonly terminating: boolean;
  readonly podName: string | null;
  readonly predicted: boolean;
}

export interface ServicePortInfo {
  readonly service: ServiceM;
  readonly namespace: string;
  readonly name: string;
  readonly portName: string;
  /** kube-proxy's ServicePortName string: `ns/name:port`, or `ns/name` for an unnamed port. */
  readonly servicePortName: string;
  readonly protocol: Protocol;
  readonly port: number;
  readonly clusterIP: string | null;
  readonly nodePort: number | null;
  readonly externalIPs: readonly string[];
  readonly lbIPs: readonly string[];
  readonly loadBalancerSourceRanges: readonly string[];
  readonly endpoints: readonly EndpointInfo[];
  readonly endpointSource: 'EndpointSlice' | 'Endpoints' | 'selector' | 'none';
  readonly predicted: {
    readonly clusterIP: boolean;
    readonly nodePort: boolean;
    readonly lbIPs: boolean;
    readonly endpoints: boolean;
  };
  readonly loc: Loc;
}

export interface KubeProxySettings {
  readonly mode: 'iptables' | 'ipvs' | 'nftables';
  /** The local-traffic detector (`--cluster-cidr`); null = no detector. */
  readonly clusterCIDR: string | null;
  readonly masqueradeAll: boolean;
  readonly masqueradeBit: number;
  readonly localhostNodePorts: boolean;
  readonly nodePortAddresses: readonly string[] | null;
  readonly ipvsScheduler: string;
}

export interface ClusterModel {
  readonly nodes: readonly NodeInfo[];
  readonly pods: readonly PodInfo[];
  readonly servicePorts: readonly ServicePortInfo[];
  readonly services: readonly ServiceM[];
  /** The first service CIDR (ClusterIPs are predicted from it). */
  readonly serviceCIDR: string;
  /** Every service CIDR: ServiceCIDR objects, else kind's serviceSubnet, else 10.96.0.0/12. */
  readonly serviceCIDRs: readonly string[];
  readonly kubeProxy: KubeProxySettings;
  readonly metallb: {
    readonly pools: readonly IPAddressPoolM[];
    readonly l2: readonly L2AdvertisementM[];
    readonly bgp: readonly L2AdvertisementM[];
  };
  readonly predictions: readonly Prediction[];
  readonly diagnostics: readonly FileDiagnostic[];
  /**
   * The reader stopped at a limit (`ManifestSet.partial`): the objects past it are not in this model, so an
   * answer about them (a Service that is "not there") would be wrong. Every answer from the model says so.
   */
  readonly partial?: string | null;
}
