/**
 * The packet that stands for a Service port: what a client would send to reach it, and from where, so an
 * end-to-end trace (`traceFromManifests`) can follow it client → node → pod.
 *
 *  - A LoadBalancer IP, an external IP or (for `type: NodePort`) a node's NodePort is reached from outside
 *    the cluster: the client is an address on the nodes' own network that no node or pod uses (`.100` of
 *    the first node's /24, as a host on kind's docker network would be), else a documentation address.
 *  - A ClusterIP is reached from inside: the client is a process on the first worker node.
 *
 * When the manifests cannot say which node receives the packet (an external IP, or a LoadBalancer IP
 * without MetalLB), the probe names a node and says why.
 */
import type { ClusterModel, NodeInfo, ServicePortInfo } from '../../engine/api.ts';
import { OUTSIDE_CLIENT } from '../packet-suggest.ts';
import { type ClusterView, hostPort } from './cluster.ts';

export type ProbeKind = 'LoadBalancer IP' | 'external IP' | 'NodePort' | 'ClusterIP';

export interface Probe {
  /** The packet, in `packetlens trace --packet` syntax. */
  readonly packet: string;
  readonly protocol: string;
  /** The Service address as shown: `172.18.255.200:80`. */
  readonly target: string;
  readonly kind: ProbeKind;
  /** The node the trace must run on, when the manifests cannot tell which node receives the packet. */
  readonly node: string | null;
  /** Why that node, or who the client is. */
  readonly note: string | null;
  /** The prediction behind the address, when the manifests leave it to the cluster. */
  readonly predicted: string | null;
}

const family = (ip: string): 4 | 6 => (ip.includes(':') ? 6 : 4);

/** An address outside the cluster on the nodes' network: not a node, pod or Service address. */
export function outsideClient(model: ClusterModel, fam: 4 | 6 = 4): string {
  const taken = new Set<string>([
    ...model.nodes.flatMap(n => n.ips),
    ...model.pods.flatMap(p => (p.ip ? [p.ip] : [])),
    ...model.servicePorts.flatMap(sp => [...(sp.clusterIP ? [sp.clusterIP] : []), ...sp.lbIPs, ...sp.externalIPs]),
  ]);
  const nodeIP = model.nodes.flatMap(n => n.ips).find(ip => family(ip) === fam);
  if (nodeIP && fam === 4) {
    const base = nodeIP.split('.').slice(0, 3).join('.');
    for (let i = 100; i < 255; i++) if (!taken.has(`${base}.${i}`)) return `${base}.${i}`;
  }
  return OUTSIDE_CLIENT[fam];
}

function packetText(protocol: string, src: string, dst: string, port: number): string {
  return `${protocol} ${hostPort(src, null)} -> ${hostPort(dst, port)}`;
}

function addressOf(node: NodeInfo | undefined, fam: 4 | 6): string | null {
  return node?.ips.find(ip => family(ip) === fam) ?? null;
}

/** The probe from outside: a LoadBalancer IP, else an external IP, else a NodePort Service's node port. */
export function externalProbe(view: ClusterView, sp: ServicePortInfo): Probe | null {
  const model = view.model;
  const protocol = sp.protocol.toLowerCase();
  const lb = sp.lbIPs[0];
  if (lb) {
    const eligible = model.nodes.find(n => !n.excludedFromLB) ?? model.nodes[0];
    const viaMetalLB = model.metallb.pools.length > 0;
    return {
      packet: packetText(protocol, outsideClient(model, family(lb)), lb, sp.port),
      protocol,
      target: hostPort(lb, sp.port),
      kind: 'LoadBalancer IP',
      node: viaMetalLB || !eligible ? null : eligible.name,
      note: viaMetalLB
        ? null
        : eligible
          ? `which node the load balancer sends ${lb} to is not in these manifests: traced on ${eligible.name}`
          : null,
      predicted: sp.predicted.lbIPs ? view.prediction(sp, 'loadBalancer IP') : null,
    };
  }
  const ext = sp.externalIPs[0];
  if (ext) {
    const worker = view.workerNode();
    return {
      packet: packetText(protocol, outsideClient(model, family(ext)), ext, sp.port),
      protocol,
      target: hostPort(ext, sp.port),
      kind: 'external IP',
      node: worker?.name ?? null,
      note: worker ? `your network decides which node receives the external IP ${ext}: traced on ${worker.name}` : null,
      predicted: null,
    };
  }
  if (sp.service.type === 'NodePort' && sp.nodePort !== null) {
    const worker = view.workerNode();
    const fam = sp.clusterIP ? family(sp.clusterIP) : 4;
    const ip = addressOf(worker, fam);
    if (!worker || !ip) return null;
    return {
      packet: packetText(protocol, outsideClient(model, fam), ip, sp.nodePort),
      protocol,
      target: hostPort(ip, sp.nodePort),
      kind: 'NodePort',
      node: null,
      note: `NodePort ${sp.nodePort} on ${worker.name}`,
      predicted: sp.predicted.nodePort ? view.prediction(sp, 'nodePort') : null,
    };
  }
  return null;
}

/** The probe from inside: a process on the first worker node connects to the ClusterIP. */
export function clusterIPProbe(view: ClusterView, sp: ServicePortInfo): Probe | null {
  if (!sp.clusterIP) return null;
  const worker = view.workerNode();
  const src = addressOf(worker, family(sp.clusterIP));
  if (!worker || !src) return null;
  const protocol = sp.protocol.toLowerCase();
  return {
    packet: packetText(protocol, src, sp.clusterIP, sp.port),
    protocol,
    target: hostPort(sp.clusterIP, sp.port),
    kind: 'ClusterIP',
    node: null,
    note: `from a process on ${worker.name}`,
    predicted: sp.predicted.clusterIP ? view.prediction(sp, 'clusterIP') : null,
  };
}

/** The address a Service port is best known by: its outside address when it has one, else its ClusterIP. */
export function portProbe(view: ClusterView, sp: ServicePortInfo): Probe | null {
  return externalProbe(view, sp) ?? clusterIPProbe(view, sp);
}
