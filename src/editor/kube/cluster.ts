/**
 * One cluster as the editor sees it: the manifest files of a cluster folder, read and turned into the
 * engine's cluster model once, with the kube-proxy mode to show and a memo for everything derived from the
 * model (traces per Service port, synthesized dumps per node). A new edit makes a new view; nothing here
 * is ever updated in place.
 */
import {
  type ClusterModel,
  type ManifestSet,
  type NodeInfo,
  type PodInfo,
  type ProxyMode,
  type ProxyModeName,
  type ServiceM,
  type ServicePortInfo,
  buildClusterModel,
  configuredMode,
  modelCost,
  proxyMode,
  readManifests,
} from '../../engine/api.ts';

export interface ManifestFile {
  /** The file's URI as a string: manifest locations (`loc.file`) carry it, so ranges map back to documents. */
  readonly file: string;
  readonly text: string;
}

/** `packetlens.kubeProxy.mode`: `auto` follows the manifests (KubeProxyConfiguration, kind's kubeProxyMode). */
export type ModeSetting = 'auto' | 'iptables' | 'ipvs' | 'nftables';

export class ClusterView {
  readonly set: ManifestSet;
  readonly model: ClusterModel;
  /** The kube-proxy mode shown: its rules, trace options and wording. */
  readonly proxy: ProxyMode;
  readonly mode: ProxyModeName;
  /** Why the mode shown differs from what the manifests configure, if it does. */
  readonly modeNote: string | null;
  private readonly memo = new Map<string, unknown>();

  constructor(
    /** How the folder is named to the user (`examples/seed-003`). */
    readonly label: string,
    readonly files: readonly ManifestFile[],
    modeSetting: ModeSetting = 'auto',
  ) {
    this.set = readManifests(files);
    // A mode chosen in the settings is the one whose rules are made: the model's budget counts for it.
    this.model = buildClusterModel(this.set, { cost: modelCost(modeSetting === 'auto' ? undefined : modeSetting) });
    const configured = this.model.kubeProxy.mode;
    const wanted = modeSetting === 'auto' ? configured : modeSetting;
    const chosen = proxyMode(wanted);
    this.proxy = chosen ?? configuredMode(wanted).mode;
    this.mode = this.proxy.name;
    this.modeNote = !chosen
      ? `kube-proxy's ${wanted} mode is not modelled: the rules shown are ${this.mode} mode's`
      : wanted !== configured
        ? `packetlens.kubeProxy.mode is ${wanted}; the manifests configure ${configured} mode`
        : null;
  }

  /** Computes `f` once per view. */
  memoize<T>(key: string, f: () => T): T {
    if (this.memo.has(key)) return this.memo.get(key) as T;
    const v = f();
    this.memo.set(key, v);
    return v;
  }

  servicesIn(file: string): ServiceM[] {
    return this.model.services.filter(s => s.loc.file === file);
  }

  /** The Service's ports as the model expanded them (none for headless and ExternalName Services). */
  portsOf(service: ServiceM): ServicePortInfo[] {
    return this.portIndexes().byService.get(service) ?? [];
  }

  portIndex(sp: ServicePortInfo): number {
    return this.portIndexes().index.get(sp) ?? -1;
  }

  /**
   * Service ports by Service and their index, built once: the CodeLens rows ask for every Service's ports,
   * and filtering (and `indexOf`) per Service made 80k Services take minutes.
   */
  private portIndexes() {
    return this.memoize('port indexes', () => {
      const byService = new Map<ServiceM, ServicePortInfo[]>();
      const index = new Map<ServicePortInfo, number>();
      this.model.servicePorts.forEach((sp, i) => {
        if (!index.has(sp)) index.set(sp, i);
        const list = byService.get(sp.service);
        if (list) list.push(sp);
        else byService.set(sp.service, [sp]);
      });
      return { byService, index };
    });
  }

  node(name: string | null): NodeInfo | undefined {
    return name === null ? undefined : this.model.nodes.find(n => n.name === name);
  }

  pod(qualified: string | null): PodInfo | undefined {
    if (!qualified) return undefined;
    const slash = qualified.indexOf('/');
    const ns = qualified.slice(0, slash);
    const name = qualified.slice(slash + 1);
    return this.model.pods.find(p => p.namespace === ns && p.name === name);
  }

  /** The first node that runs ordinary pods (a worker), else the first node: the stand-in client of ClusterIP traces. */
  workerNode(): NodeInfo | undefined {
    return this.model.nodes.find(n => !n.controlPlane) ?? this.model.nodes[0];
  }

  /**
   * What a port's endpoints rest on that the manifests do not say: nodes assumed because there are none
   * (a default single-node cluster) and pods placed from workloads. Null when nothing is predicted.
   */
  predictedEndpoints(sp: ServicePortInfo): string | null {
    const parts: string[] = [];
    const assumed = this.model.predictions.filter(p => p.field === 'node');
    if (assumed.length) parts.push(`${assumed[0]!.reason} (${assumed.map(p => p.value).join(', ')})`);
    const placed = new Set(
      sp.endpoints
        .map(e => this.pod(e.podName ? `${sp.namespace}/${e.podName}` : null))
        .filter(p => p?.predicted)
        .map(p => p!.owner),
    );
    if (placed.size) parts.push(`pods of ${[...placed].join(', ')} placed by replica count`);
    return parts.length ? `predicted: ${parts.join('; ')}` : null;
  }

  /** The prediction that filled in `field` of a Service (`clusterIP`, `loadBalancer IP`) or of one port (`nodePort`). */
  prediction(sp: ServicePortInfo, field: 'clusterIP' | 'loadBalancer IP' | 'nodePort'): string | null {
    const subject =
      field === 'nodePort'
        ? `Service ${sp.namespace}/${sp.name}:${sp.portName || sp.port}`
        : `Service ${sp.namespace}/${sp.name}`;
    return this.model.predictions.find(p => p.subject === subject && p.field === field)?.reason ?? null;
  }
}

/** `webpod1` for a pod in the Service's own namespace, `other/webpod1` otherwise. */
export function podLabel(qualified: string, namespace: string): string {
  return qualified.startsWith(`${namespace}/`) ? qualified.slice(namespace.length + 1) : qualified;
}

export function hostPort(ip: string, port: number | null): string {
  const host = ip.includes(':') ? `[${ip}]` : ip;
  return port === null ? host : `${host}:${port}`;
}
