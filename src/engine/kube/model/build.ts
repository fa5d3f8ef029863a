/**
 * Builds the cluster model from manifests: nodes (from Node objects, else from a kind Cluster config),
 * pods (given, or placed from workload templates), Services expanded per port with ClusterIP, NodePort,
 * LoadBalancer IPs and endpoints — given, or predicted the way the controllers would (endpoint controller
 * for selectors and named ports in endpoints.ts, MetalLB's allocator for LoadBalancer IPs).
 */
import { type FileDiagnostic, clipWords } from '../../diagnostics.ts';
import type { ManifestSet } from '../manifest/read.ts';
import type {
  EndpointSliceM,
  IPAddressPoolM,
  KindClusterM,
  KubeProxyConfigM,
  ServiceCIDRM,
  L2AdvertisementM,
  NodeM,
  PodM,
  ServiceM,
  WorkloadM,
} from '../manifest/types.ts';
import type { Loc } from '../manifest/yaml-node.ts';
import { normalizeCIDR, normalizeIP } from './addresses.ts';
import { type CostRule, MODEL_BUDGET, POD_BUDGET, RULES_PER_ADDRESS, serviceCost } from './budget.ts';
import { EndpointBuilder } from './endpoints.ts';
import { clusterIPAllocator, nthPodCIDR, nthPodIP, poolAddresses, portAllocator } from './predict.ts';
import type { ClusterModel, KubeProxySettings, NodeInfo, PodInfo, Prediction, ServicePortInfo } from './types.ts';

const EXCLUDE_LB = 'node.kubernetes.io/exclude-from-external-load-balancers';

/**
 * The labels the kubelet puts on every node (kubernetes.io/os and /arch from the Go runtime, hostname from
 * the node name, and their deprecated beta. forms, which kubelets still set), so node selectors such as
 * `kubernetes.io/os: linux` place pods on predicted nodes. The architecture is assumed amd64.
 */
function wellKnownLabels(name: string): Record<string, string> {
  return {
    'kubernetes.io/os': 'linux',
    'kubernetes.io/arch': 'amd64',
    'kubernetes.io/hostname': name,
    'beta.kubernetes.io/os': 'linux',
    'beta.kubernetes.io/arch': 'amd64',
  };
}

export interface BuildOptions {
  /**
   * Predict what the manifests leave to controllers (default true). Off, objects are taken as the API
   * server would hand them to kube-proxy: an absent nodePort or ClusterIP stays absent.
   */
  readonly predict?: boolean;
  /**
   * How the rules of the mode that will be made from the model grow (`modelCost` in modes/index.ts: the mode
   * chosen, else the one the manifests configure, given as `configured`), which the model's budget counts.
   * Default: one rule per address (iptables, nftables).
   */
  readonly cost?: (configured: KubeProxySettings['mode']) => CostRule;
  /** Replace `MODEL_BUDGET` and `POD_BUDGET` (tests). */
  readonly budget?: number;
  readonly podBudget?: number;
}

class Builder {
  readonly predictions: Prediction[] = [];
  readonly diagnostics: FileDiagnostic[];
  private readonly predictOn: boolean;
  private readonly budget: number;
  private readonly podBudget: number;
  private readonly cost: (configured: KubeProxySettings['mode']) => CostRule;
  /** Set when the model's budget left Services or workloads out (`ClusterModel.partial`). */
  private partial: string | null = null;
  private readonly endpoints = new EndpointBuilder((loc, code, message) => this.warn(loc, code, message));

  constructor(
    private readonly set: ManifestSet,
    opts: BuildOptions,
  ) {
    this.predictOn = opts.predict ?? true;
    this.budget = opts.budget ?? MODEL_BUDGET;
    this.podBudget = opts.podBudget ?? POD_BUDGET;
    this.cost = opts.cost ?? (() => RULES_PER_ADDRESS);
    this.diagnostics = [...set.diagnostics];
  }

  private of<K extends string>(kind: K) {
    return this.set.objects.filter(o => o.kind === kind) as never[];
  }

  predict(subject: string, field: string, value: string, reason: string, loc: Loc | null): void {
    this.predictions.push({ subject, field, value, reason, loc });
  }

  warn(
    loc: Loc,
    code: FileDiagnostic['code'],
    message: string,
    severity: FileDiagnostic['severity'] = 'warning',
  ): void {
    this.diagnostics.push({ file: loc.file, code, severity, message: clipWords(message), range: loc.range });
  }

  build(): ClusterModel {
    const kind = (this.of('Cluster') as KindClusterM[])[0] ?? null;
    const kpc = (this.of('KubeProxyConfiguration') as KubeProxyConfigM[])[0] ?? null;
    // The service CIDRs: networking.k8s.io/v1 ServiceCIDR objects, else kind's serviceSubnet (comma-separated
    // when dual-stack), else the apiserver's default --service-cluster-ip-range.
    const fromObjects = (this.of('ServiceCIDR') as ServiceCIDRM[]).flatMap(o => o.cidrs);
    const serviceCIDRs = fromObjects.length
      ? fromObjects
      : (kind?.serviceSubnet ?? '10.96.0.0/12')
          .split(',')
          .map(c => c.trim())
          .filter(Boolean);
    const serviceCIDR = serviceCIDRs[0] ?? '10.96.0.0/12';
    // No Node objects and no kind config: a default cluster, given kind's defaults (podSubnet 10.244.0.0/16).
    const defaultCluster = this.predictOn && !kind && this.of('Node').length === 0;
    const podSubnet = kpc?.clusterCIDR ?? kind?.podSubnet ?? (kind || defaultCluster ? '10.244.0.0/16' : null);
    if (defaultCluster && !kpc?.clusterCIDR)
      this.predict(
        'kube-proxy',
        'clusterCIDR',
        '10.244.0.0/16',
        "no Node objects or kind config: a default cluster with kind's pod subnet",
        null,
      );
    const nodes = this.nodes(kind, podSubnet);
    const pods = this.pods(nodes);
    const services = this.uniqueServices(this.of('Service') as ServiceM[]);
    const mode =
      kpc?.mode ??
      (kind?.kubeProxyMode === 'ipvs' || kind?.kubeProxyMode === 'nftables' ? kind.kubeProxyMode : 'iptables');
    const kubeProxy: KubeProxySettings = {
      mode,
      clusterCIDR: podSubnet,
      // kube-proxy reads the masquerade settings of the section of its mode (nftables: or iptables:).
      masqueradeAll: (mode === 'nftables' ? kpc?.nftables?.masqueradeAll : kpc?.masqueradeAll) ?? false,
      masqueradeBit: (mode === 'nftables' ? kpc?.nftables?.masqueradeBit : kpc?.masqueradeBit) ?? 14,
      localhostNodePorts: kpc?.localhostNodePorts ?? true,
      nodePortAddresses: kpc?.nodePortAddresses ?? null,
      ipvsScheduler: kpc?.ipvsScheduler ?? 'rr',
    };
    const pools = this.of('IPAddressPool') as IPAddressPoolM[];
    const ads = this.of('L2Advertisement') as L2AdvertisementM[];
    const bgp = this.of('BGPAdvertisement') as L2AdvertisementM[];
    const servicePorts = this.servicePorts(services, pods, serviceCIDR, pools, this.cost(mode), nodes);
    return {
      nodes,
      pods,
      servicePorts,
      services,
      serviceCIDR,
      serviceCIDRs,
      kubeProxy,
      metallb: { pools, l2: ads, bgp },
      predictions: this.predictions,
      diagnostics: this.diagnostics,
      partial: [this.set.partial, this.partial].filter(Boolean).join('; ') || null,
    };
  }

  /**
   * One Service per namespace and name, as the API server holds them: the last one read is used (applying
   * these files in order would leave it; a kustomize base and its overlay in one folder are read base/
   * before overlays/), and each earlier copy gets a warning naming the one used. Before, every copy made
   * rules of its own, which kube-proxy never has.
   */
  private uniqueServices(all: ServiceM[]): ServiceM[] {
    const key = (s: ServiceM) => `${s.namespace}/${s.name}`;
    const last = new Map<string, ServiceM>();
    for (const s of all) last.set(key(s), s);
    if (last.size === all.length) return all;
    const out: ServiceM[] = [];
    // One warning per name, on its first copy (an alias bomb can repeat one Service 50,000 times).
    const copies = new Map<string, { first: ServiceM; count: number }>();
    for (const s of all) {
      const kept = last.get(key(s))!;
      if (kept === s) out.push(s);
      else {
        const c = copies.get(key(s));
        if (c) c.count++;
        else copies.set(key(s), { first: s, count: 1 });
      }
    }
    for (const [name, { first, count }] of copies) {
      const kept = last.get(name)!;
      const times = count === 1 ? 'again' : `${count} more times`;
      this.warn(
        first.loc,
        'duplicate-object',
        `Service ${name} is defined ${times}, last at ${kept.loc.file}:${kept.loc.range.start.line + 1}: a cluster holds one Service of each namespace and name, so this answer uses that one (the last read, as applying these files in order would leave) and not the others`,
      );
    }
    return out;
  }

  private nodes(kind: KindClusterM | null, podSubnet: string | null): NodeInfo[] {
    const given = this.of('Node') as NodeM[];
    if (given.length) {
      return given.map(n => ({
        name: n.name,
        ips: [...n.internalIPs, ...n.externalIPs],
        podCIDRs: n.podCIDRs,
        labels: n.labels,
        controlPlane: n.controlPlane,
        excludedFromLB: EXCLUDE_LB in n.labels,
        predicted: false,
      }));
    }
    if (!kind) return this.predictOn ? this.defaultNodes(podSubnet) : [];
    // kind names nodes <cluster>-control-plane, <cluster>-worker, <cluster>-worker2, … and gives them
    // addresses on its docker network in creation order; kubeadm labels control planes as excluded from
    // external load balancers.
    const cluster = kind.name ?? 'kind';
    let cp = 0;
    let wk = 0;
    // A one-node kind cluster runs pods on its control plane: kind removes the control-plane taint there
    // (kind, pkg/cluster/internal/create/actions/kubeadminit/init.go: "if we are only provisioning one
    // node, remove the … taint"); the exclude-from-external-load-balancers label stays.
    const single = kind.nodes.length === 1;
    return kind.nodes.map((n, i) => {
      const isCP = n.role === 'control-plane';
      const idx = isCP ? ++cp : ++wk;
      const name = `${cluster}-${isCP ? 'control-plane' : 'worker'}${idx > 1 ? idx : ''}`;
      const ip = `172.18.0.${2 + i}`;
      const podCIDR = podSubnet ? nthPodCIDR(podSubnet, i) : null;
      this.predict(
        `Node ${name}`,
        'InternalIP',
        ip,
        'kind gives nodes addresses on its docker network (172.18.0.0/16) in creation order',
        kind.loc,
      );
      if (podCIDR) this.predict(`Node ${name}`, 'podCIDR', podCIDR, `the n-th /24 of podSubnet ${podSubnet}`, kind.loc);
      const labels: Record<string, string> = { ...wellKnownLabels(name), ...n.labels };
      if (isCP) {
        labels['node-role.kubernetes.io/control-plane'] = '';
        labels[EXCLUDE_LB] = '';
      }
      if (isCP && single)
        this.predict(
          `Node ${name}`,
          'taints',
          'none',
          'kind removes the control-plane taint from a one-node cluster, so its pods run there',
          kind.loc,
        );
      return {
        name,
        ips: [ip],
        podCIDRs: podCIDR ? [podCIDR] : [],
        labels,
        controlPlane: isCP,
        excludedFromLB: isCP,
        predicted: true,
        ...(isCP && single ? { schedulable: true } : {}),
      };
    });
  }

  /**
   * Manifests without Node objects or a kind config (an app repo): the nodes the pods name, else one
   * default node, each predicted like kind's workers (address on kind's network, a /24 of 10.244.0.0/16,
   * the labels the kubelet sets), so Services show the endpoints their selectors would get.
   */
  private defaultNodes(podSubnet: string | null): NodeInfo[] {
    const objs = [
      ...(this.of('Pod') as PodM[]),
      ...(this.of('Deployment') as WorkloadM[]),
      ...(this.of('ReplicaSet') as WorkloadM[]),
      ...(this.of('StatefulSet') as WorkloadM[]),
      ...(this.of('DaemonSet') as WorkloadM[]),
      ...(this.of('ReplicationController') as WorkloadM[]),
    ];
    const named = [...new Set(objs.map(o => o.nodeName).filter((n): n is string => !!n))].slice(0, 256);
    const names = named.length ? named : ['node-1'];
    const subnet = podSubnet ?? '10.244.0.0/16';
    return names.map((name, i) => {
      const ip = `172.18.0.${2 + i}`;
      const podCIDR = nthPodCIDR(subnet, i);
      const why = named.length
        ? `no Node objects or kind config: node ${name} is named by the pods`
        : 'no Node objects or kind config: a default single-node cluster is assumed';
      this.predict(`Node ${name}`, 'node', name, why, null);
      this.predict(
        `Node ${name}`,
        'InternalIP',
        ip,
        `${why}; its address is predicted on kind's docker network (172.18.0.0/16)`,
        null,
      );
      if (podCIDR) this.predict(`Node ${name}`, 'podCIDR', podCIDR, `the n-th /24 of the pod subnet ${subnet}`, null);
      return {
        name,
        ips: [ip],
        podCIDRs: podCIDR ? [podCIDR] : [],
        labels: wellKnownLabels(name),
        controlPlane: false,
        excludedFromLB: false,
        predicted: true,
      };
    });
  }

  private pods(nodes: NodeInfo[]): PodInfo[] {
    const out: PodInfo[] = [];
    const perNode = new Map<string, number>();
    const nextIP = (node: NodeInfo | undefined): string | null => {
      if (!node || !node.podCIDRs[0]) return null;
      const k = perNode.get(node.name) ?? 0;
      perNode.set(node.name, k + 1);
      return nthPodIP(node.podCIDRs[0], k);
    };
    const eligibleFor = (sel: Readonly<Record<string, string>>, tolerates: boolean) =>
      nodes.filter(
        n =>
          (!n.controlPlane || n.schedulable || tolerates) && Object.entries(sel).every(([k, v]) => n.labels[k] === v),
      );
    let spread = 0;
    for (const p of this.of('Pod') as PodM[]) {
      let ip = p.podIPs[0] ?? null;
      let nodeName = p.nodeName;
      if (!nodeName && !ip && this.predictOn) {
        // A bare pod without nodeName is scheduled like any other: the scheduler picks an eligible node.
        const eligible = eligibleFor(p.nodeSelector ?? {}, p.tolerateControlPlane ?? false);
        const target = eligible[spread++ % Math.max(1, eligible.length)];
        if (target) {
          nodeName = target.name;
          this.predict(
            `Pod ${p.namespace}/${p.name}`,
            'nodeName',
            target.name,
            'no nodeName: kube-scheduler places it on an eligible node (node selector, control-plane taint), here the next in order',
            p.loc,
          );
        } else
          this.warn(
            p.loc,
            'prediction',
            `Pod ${p.namespace}/${p.name}: no node can run it (node selector, control-plane taint), so it stays Pending and has no address`,
          );
      }
      const node = nodes.find(n => n.name === nodeName);
      if (p.hostNetwork && !ip && node) ip = node.ips[0] ?? null;
      if (!ip && node) {
        ip = nextIP(node);
        if (ip)
          this.predict(
            `Pod ${p.namespace}/${p.name}`,
            'podIP',
            ip,
            `next free address of ${node.name}'s pod CIDR ${node.podCIDRs[0]}`,
            p.loc,
          );
      }
      out.push({
        namespace: p.namespace,
        name: p.name,
        ip,
        nodeName,
        labels: p.labels,
        ready: p.ready ?? true,
        terminating: p.terminating,
        containerPorts: p.containerPorts,
        hostNetwork: p.hostNetwork,
        predicted: false,
        owner: null,
        loc: p.loc,
      });
    }
    let placed = 0;
    for (const w of this.of('Deployment').concat(
      this.of('ReplicaSet'),
      this.of('StatefulSet'),
      this.of('DaemonSet'),
      this.of('ReplicationController'),
    ) as WorkloadM[]) {
      const eligible = eligibleFor(w.nodeSelector, w.tolerateControlPlane);
      const targets = w.nodeName ? nodes.filter(n => n.name === w.nodeName) : eligible;
      const count = w.kind === 'DaemonSet' ? targets.length : w.replicas;
      // A DaemonSet is one pod per node: DaemonSets × nodes is a product the reader's budget cannot see.
      if (targets.length > 0 && placed + count > this.podBudget) {
        const line = w.loc.range.start.line + 1;
        const message = `${w.loc.file}: ${w.kind} ${w.namespace}/${w.name} (line ${line}) places ${count} pods${w.kind === 'DaemonSet' ? ` (one on each of ${count} nodes)` : ''}, past the cluster model's budget of ${this.podBudget} placed pods${placed ? ` (${placed} already placed for the workloads before it)` : ''}; this workload and the workloads after it, from line ${line}, were not placed (they have no pods and give no endpoints): the answer is partial`;
        this.cut(w.loc, message);
        break;
      }
      if (targets.length > 0) placed += count;
      if (count > 0 && targets.length === 0) {
        this.warn(
          w.loc,
          'prediction',
          `${w.kind} ${w.namespace}/${w.name}: no node can run its pods (node selector, control-plane taint), so it has no endpoints`,
        );
        continue;
      }
      for (let i = 0; i < count; i++) {
        const node = targets[i % targets.length]!;
        const name =
          w.kind === 'StatefulSet'
            ? `${w.name}-${i}`
            : w.kind === 'DaemonSet'
              ? `${w.name}-${node.name}`
              : `${w.name}-${i + 1}`;
        const ip = w.hostNetwork ? (node.ips[0] ?? null) : nextIP(node);
        this.predict(
          `Pod ${w.namespace}/${name}`,
          'placement',
          `${node.name}${ip ? ` ${ip}` : ''}`,
          `${w.kind} ${w.name} replica ${i + 1} of ${count}, spread over the eligible nodes in order`,
          w.loc,
        );
        out.push({
          namespace: w.namespace,
          name,
          ip,
          nodeName: node.name,
          labels: w.labels,
          ready: true,
          terminating: false,
          containerPorts: w.containerPorts,
          hostNetwork: w.hostNetwork,
          predicted: true,
          owner: `${w.kind}/${w.name}`,
          loc: w.loc,
        });
      }
    }
    return out;
  }

  private servicePorts(
    services: ServiceM[],
    pods: PodInfo[],
    serviceCIDR: string,
    pools: IPAddressPoolM[],
    cost: CostRule,
    nodes: readonly NodeInfo[],
  ): ServicePortInfo[] {
    const usedIPs = new Set<string>(services.map(s => s.clusterIP).filter((ip): ip is string => !!ip && ip !== 'None'));
    const usedPorts = new Set<number>(
      services
        .flatMap(s => [...s.ports.map(p => p.nodePort), s.healthCheckNodePort])
        .filter((p): p is number => p !== null),
    );
    const usedLB = new Set<string>(services.flatMap(s => s.lbIngress.map(i => i.ip)));
    const allocateClusterIP = clusterIPAllocator(serviceCIDR, usedIPs);
    const allocatePort = portAllocator(usedPorts);
    const slices = (this.of('EndpointSlice') as EndpointSliceM[]).concat(this.of('Endpoints') as EndpointSliceM[]);
    const slicesByService = new Map<string, EndpointSliceM[]>();
    for (const s of slices) {
      const k = `${s.namespace}/${s.serviceName}`;
      const list = slicesByService.get(k);
      if (list) list.push(s);
      else slicesByService.set(k, [s]);
    }
    const podsByNamespace = new Map<string, PodInfo[]>();
    for (const p of pods) {
      const list = podsByNamespace.get(p.namespace);
      if (list) list.push(p);
      else podsByNamespace.set(p.namespace, [p]);
    }
    const out: ServicePortInfo[] = [];
    const nodeAddresses = nodes.reduce((most, n) => Math.max(most, n.ips.length), 0);
    let spent = 0;
    for (const svc of services) {
      if (svc.type === 'ExternalName' || svc.clusterIP === 'None') continue;
      const key = `${svc.namespace}/${svc.name}`;
      const mySlices = slicesByService.get(key) ?? [];
      const myPods = podsByNamespace.get(svc.namespace) ?? [];
      // The product is counted before anything of it is built.
      const counts = svc.ports.map(port => this.endpoints.countFor(svc, port, mySlices, myPods));
      const priced = serviceCost(svc, counts, cost, nodeAddresses);
      if (spent + priced.cost > this.budget) {
        this.leaveOut(svc, `${priced.shape}${endpointOrigin(mySlices, svc)}`, spent);
        break;
      }
      spent += priced.cost;
      let clusterIP = svc.clusterIP ? normalizeIP(svc.clusterIP) : null;
      let ipPredicted = false;
      if (!clusterIP && this.predictOn) {
        clusterIP = allocateClusterIP();
        ipPredicted = clusterIP !== null;
        if (clusterIP)
          this.predict(
            `Service ${key}`,
            'clusterIP',
            clusterIP,
            `the apiserver allocates from the service CIDR ${serviceCIDR} (randomly; this is the lowest free address)`,
            svc.fieldLocs.clusterIP ?? svc.loc,
          );
      }
      let lbIPs = ips(svc.lbIngress.map(i => i.ip));
      let lbPredicted = false;
      if (svc.type === 'LoadBalancer' && lbIPs.length === 0 && this.predictOn) {
        const ip = this.metallbAllocate(svc, pools, usedLB);
        if (ip) {
          lbIPs = [ip];
          lbPredicted = true;
        }
      }
      const externalIPs = ips(svc.externalIPs);
      const sourceRanges = svc.loadBalancerSourceRanges.map(normalizeCIDR).filter((x): x is string => x !== null);
      for (const port of svc.ports) {
        let nodePort = port.nodePort;
        let npPredicted = false;
        const wantsNodePort =
          svc.type === 'NodePort' || (svc.type === 'LoadBalancer' && svc.allocateLoadBalancerNodePorts);
        if (wantsNodePort && nodePort === null && this.predictOn) {
          nodePort = allocatePort();
          npPredicted = nodePort !== null;
          if (nodePort !== null)
            this.predict(
              `Service ${key}:${port.name || port.port}`,
              'nodePort',
              String(nodePort),
              'the apiserver allocates NodePorts from 30000-32767 (randomly; this is the lowest free port)',
              port.loc,
            );
        }
        const spn = port.name ? `${key}:${port.name}` : key;
        const { endpoints, source } = this.endpoints.endpointsFor(svc, port, mySlices, myPods);
        out.push({
          service: svc,
          namespace: svc.namespace,
          name: svc.name,
          portName: port.name,
          servicePortName: spn,
          protocol: port.protocol,
          port: port.port,
          clusterIP,
          nodePort: wantsNodePort || port.nodePort !== null ? nodePort : null,
          // One array per Service, shared by its ports: a Service of many ports and addresses is not their product.
          externalIPs,
          lbIPs,
          loadBalancerSourceRanges: sourceRanges,
          endpoints,
          endpointSource: source,
          predicted: {
            clusterIP: ipPredicted,
            nodePort: npPredicted,
            lbIPs: lbPredicted,
            endpoints: source === 'selector',
          },
          loc: port.loc,
        });
      }
    }
    return out;
  }

  /**
   * The model's budget stops at this Service: it and the Services after it are left out, with an error at the
   * Service and the sentence every answer carries (as the reader's budget does for objects past a line).
   */
  private leaveOut(svc: ServiceM, what: string, spent: number): void {
    const line = svc.loc.range.start.line + 1;
    const message = `${svc.loc.file}: Service ${svc.namespace}/${svc.name} (line ${line}) has ${what}, past the cluster model's budget of ${this.budget}${spent ? ` (${spent} already taken by the Services before it)` : ''}: kube-proxy's rules grow with this product; this Service and the Services after it, from line ${line}, were left out: the answer is partial`;
    this.cut(svc.loc, message);
  }

  /** A budget stopped the model at `loc`: an error there, and the sentence every answer carries. */
  private cut(loc: Loc, message: string): void {
    this.partial = this.partial ? `${this.partial}; ${message}` : message;
    this.warn(loc, 'input-too-large', message, 'error');
  }

  /** Per pool, the address entry and the place in it the allocator has reached (`fromPool`). */
  private readonly poolCursors = new Map<IPAddressPoolM, { entry: number; at: Iterator<string> | null }>();
  private poolOrderMemo: { auto: IPAddressPoolM[]; byName: Map<string, IPAddressPoolM[]>; autoStart: number } | null =
    null;

  /** The auto-assign pools by name, and the pools of each name, sorted once (not per Service). */
  private poolOrder(pools: IPAddressPoolM[]) {
    if (this.poolOrderMemo) return this.poolOrderMemo;
    const sorted = [...pools].sort((a, b) => a.name.localeCompare(b.name));
    const byName = new Map<string, IPAddressPoolM[]>();
    for (const p of sorted) {
      const list = byName.get(p.name);
      if (list) list.push(p);
      else byName.set(p.name, [p]);
    }
    return (this.poolOrderMemo = { auto: sorted.filter(p => p.autoAssign), byName, autoStart: 0 });
  }

  /**
   * The first free address of a pool, in MetalLB's order, or null when it is full. `used` only grows, so the
   * search resumes where the last one stopped: searching each pool from its start for every Service made
   * 20,000 LoadBalancer Services take 49 s of CPU.
   */
  private fromPool(pool: IPAddressPoolM, used: Set<string>): string | null {
    let c = this.poolCursors.get(pool);
    if (!c) this.poolCursors.set(pool, (c = { entry: 0, at: null }));
    while (c.entry < pool.addresses.length) {
      c.at ??= poolAddresses(pool.addresses[c.entry]!, pool.avoidBuggyIPs);
      for (let r = c.at.next(); !r.done; r = c.at.next()) {
        if (used.has(r.value)) continue;
        used.add(r.value);
        return r.value;
      }
      c.entry++;
      c.at = null;
    }
    return null;
  }

  /** MetalLB's allocator: the first free address of the auto-assign pools, pools by name, skipping buggy IPs when asked. */
  private metallbAllocate(svc: ServiceM, pools: IPAddressPoolM[], used: Set<string>): string | null {
    if (svc.loadBalancerClass && svc.loadBalancerClass !== 'metallb.io/metallb') return null;
    const requested =
      svc.loadBalancerIP ??
      svc.annotations['metallb.universe.tf/loadBalancerIPs'] ??
      svc.annotations['metallb.io/loadBalancerIPs'] ??
      null;
    const poolName =
      svc.annotations['metallb.universe.tf/address-pool'] ?? svc.annotations['metallb.io/address-pool'] ?? null;
    const key = `Service ${svc.namespace}/${svc.name}`;
    if (requested) {
      const ip = requested.split(',')[0]!.trim();
      used.add(ip);
      this.predict(
        key,
        'loadBalancer IP',
        ip,
        'requested by the Service (loadBalancerIP / metallb loadBalancerIPs annotation); MetalLB assigns it if a pool contains it',
        svc.fieldLocs.type ?? svc.loc,
      );
      return ip;
    }
    const order = this.poolOrder(pools);
    const candidates = poolName ? (order.byName.get(poolName) ?? []) : order.auto;
    // Pools before `order.autoStart` are full (fullness is permanent): not walked again for every Service.
    for (let i = poolName ? 0 : order.autoStart; i < candidates.length; i++) {
      const pool = candidates[i]!;
      const ip = this.fromPool(pool, used);
      if (ip === null) {
        if (!poolName && i === order.autoStart) order.autoStart++;
        continue;
      }
      this.predict(
        key,
        'loadBalancer IP',
        ip,
        `MetalLB assigns the first free address of pool ${pool.name} (${clipList(pool.addresses)}), Services taken in manifest order`,
        svc.fieldLocs.type ?? svc.loc,
      );
      return ip;
    }
    if (pools.length)
      this.warn(
        svc.fieldLocs.type ?? svc.loc,
        'prediction',
        `${key}: no MetalLB pool has a free address for it: its LoadBalancer IP stays pending`,
      );
    return null;
  }
}

/** A pool's address entries for a message: at most three, then how many more. */
function clipList(list: readonly string[]): string {
  return list.length > 3 ? `${list.slice(0, 3).join(', ')} and ${list.length - 3} more` : list.join(', ');
}

/** Where a Service's endpoints come from, for the budget's message. */
function endpointOrigin(slices: readonly EndpointSliceM[], svc: ServiceM): string {
  if (slices.length === 0) return svc.selector ? ' (endpoints: the pods its selector matches)' : '';
  const first = slices[0]!;
  const kind = (first as { kind: string }).kind;
  const more = slices.length > 1 ? ` and ${slices.length - 1} more` : '';
  return ` (endpoints from ${kind} ${first.namespace}/${first.name}, ${first.loc.file}:${first.loc.range.start.line + 1}${more})`;
}

function ips(list: readonly string[]): string[] {
  return list.map(normalizeIP).filter((x): x is string => x !== null);
}

export function buildClusterModel(set: ManifestSet, opts: BuildOptions = {}): ClusterModel {
  return new Builder(set, opts).build();
}

// Moved to endpoints.ts and addresses.ts; re-exported for the modules that import them from here.
export { endpointString } from './endpoints.ts';
export { normalizeCIDR, normalizeIP } from './addresses.ts';
