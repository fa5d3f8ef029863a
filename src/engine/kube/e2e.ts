/**
 * End-to-end traces from manifests: which node receives the packet (MetalLB's L2 announcer for a
 * LoadBalancer IP, the owner of a node address, the client's own node for pods and nodes), that node's
 * synthesized kube-proxy rules through the netfilter engine, and which pod on which node each outcome
 * reaches. Every choice is a hop with its reason.
 *
 * The node's rules come from its kube-proxy mode (modes/: iptables, IPVS, …), which also says how they are
 * read and what else the evaluator needs (IPVS's kube-ipvs0 addresses, ipsets and scheduler).
 */
import { isLoopback, parseAddr } from '../net/addr.ts';
import { tracePacket } from '../eval/trace.ts';
import type { NodeConfig } from '../eval/node.ts';
import type { PacketInput } from '../eval/packet-spec.ts';
import type { Trace } from '../eval/trace-types.ts';
import type { IpvsTraceOptions } from '../ipvs/intercept.ts';
import type { Ruleset } from '../model.ts';
import { configuredMode, proxyMode } from './modes/index.ts';
import type { NodeRules, NodeSynthOptions, ProxyModeName } from './modes/types.ts';
import { l2Announcer } from './metallb.ts';
import type { ClusterModel, NodeInfo, PodInfo } from './model/types.ts';

export interface Hop {
  readonly kind: 'client' | 'node' | 'pod' | 'external';
  readonly name: string;
  readonly address: string | null;
  readonly reason: string;
}

export interface OutcomeDestination {
  readonly outcome: number;
  readonly pod: string | null;
  readonly node: string | null;
  readonly hops: readonly Hop[];
}

export interface ManifestTrace {
  readonly node: string;
  readonly trace: Trace;
  readonly hops: readonly Hop[];
  readonly destinations: readonly OutcomeDestination[];
  readonly rules: string;
  /** The kube-proxy mode traced (the model's, unless overridden). */
  readonly mode: ProxyModeName;
  /** What else the mode leaves on the node (IPVS: `ipvsadm -Ln`, `ipset save`). */
  readonly sideFiles: NodeRules['sideFiles'];
  /** IPVS mode: the node's `ipvsadm -Ln` and `ipset save` text; null in other modes. */
  readonly ipvsadm: string | null;
  readonly ipsets: string | null;
  /** The manifests were read only in part (`ClusterModel.partial`): this answer may miss what was not read. */
  readonly partial: string | null;
}

export interface ManifestTraceOptions {
  readonly node?: string | null;
  readonly synth?: Partial<Omit<NodeSynthOptions, 'nodeName' | 'ipvs'>>;
  /** Default: the model's kube-proxy mode. */
  readonly mode?: ProxyModeName;
  readonly ipvs?: IpvsTraceOptions;
  /** The trace's why-not record (`TraceOptions.explain`; default every miss). */
  readonly explain?: boolean | 'grouped';
}

export type ManifestTraceResult = { ok: true; value: ManifestTrace } | { ok: false; error: string };

function podByIP(model: ClusterModel, ip: string): PodInfo | undefined {
  return model.pods.find(p => p.ip === ip && !p.hostNetwork);
}

function isLoopbackText(ip: string): boolean {
  const a = parseAddr(ip);
  return a !== null && isLoopback(a);
}

function nodeByIP(model: ClusterModel, ip: string): NodeInfo | undefined {
  return model.nodes.find(n => n.ips.includes(ip));
}

/** The veth name packetlens gives a pod's host-side interface in traces. */
export function podIface(pod: PodInfo): string {
  return `veth-${pod.name}`.slice(0, 15);
}

/** The node as the engine models it: its addresses on eth0, a veth per local pod, other pod CIDRs via eth0. */
export function nodeContext(model: ClusterModel, node: NodeInfo): NodeConfig {
  const local = model.pods.filter(p => p.nodeName === node.name && p.ip && !p.hostNetwork);
  return {
    uplink: 'eth0',
    addresses: [...node.ips],
    interfaces: [
      { name: 'eth0', addresses: node.ips.map(ip => `${ip}/32`) },
      ...local.map(p => ({ name: podIface(p), addresses: [] as string[] })),
    ],
    routes: local.map(p => ({ dst: `${p.ip}/32`, iface: podIface(p) })),
    // kube-proxy sets route_localnet=1 for localhost NodePorts.
    routeLocalnet: model.kubeProxy.localhostNodePorts,
  };
}

function receivingNode(
  model: ClusterModel,
  input: PacketInput,
  requested: string | null,
): { node: NodeInfo; hop: Hop } | { error: string } {
  if (requested) {
    const n = model.nodes.find(x => x.name === requested);
    return n
      ? { node: n, hop: { kind: 'node', name: n.name, address: n.ips[0] ?? null, reason: 'chosen with --node' } }
      : {
          error: `no node named ${requested} in these manifests (${model.nodes.map(x => x.name).join(', ') || 'none'})`,
        };
  }
  const src = input.src ?? null;
  if (src && isLoopbackText(src)) {
    // 127.0.0.1 / ::1 exist only inside a node: the client is a process on the node that receives it.
    const owner = nodeByIP(model, input.dst);
    const n = owner ?? (model.nodes.length === 1 ? model.nodes[0]! : null);
    if (!n)
      return {
        error: `${src} is the node itself, but which node is not in the packet: give --node (${model.nodes.map(x => x.name).join(', ') || 'no nodes'})`,
      };
    return {
      node: n,
      hop: {
        kind: 'node',
        name: n.name,
        address: n.ips[0] ?? null,
        reason: `the source ${src} is the node's loopback: a process on ${n.name}${owner ? '' : ' (the only node)'}`,
      },
    };
  }
  const fromPod = src ? podByIP(model, src) : undefined;
  if (fromPod?.nodeName) {
    const n = model.nodes.find(x => x.name === fromPod.nodeName);
    if (n)
      return {
        node: n,
        hop: {
          kind: 'node',
          name: n.name,
          address: n.ips[0] ?? null,
          reason: `the client pod ${fromPod.namespace}/${fromPod.name} runs on ${n.name}`,
        },
      };
  }
  const fromNode = src ? nodeByIP(model, src) : undefined;
  if (fromNode)
    return {
      node: fromNode,
      hop: { kind: 'node', name: fromNode.name, address: src, reason: `the client is node ${fromNode.name} itself` },
    };
  const owner = nodeByIP(model, input.dst);
  if (owner)
    return {
      node: owner,
      hop: { kind: 'node', name: owner.name, address: input.dst, reason: `${input.dst} is ${owner.name}'s address` },
    };
  // One node: whatever reaches the cluster reaches it.
  const only = model.nodes.length === 1 ? model.nodes[0]! : null;
  const onlyHop = (why: string) => ({
    node: only!,
    hop: {
      kind: 'node' as const,
      name: only!.name,
      address: only!.ips[0] ?? null,
      reason: `${why}; ${only!.name} is the cluster's only node`,
    },
  });
  const lb = model.servicePorts.find(sp => sp.lbIPs.includes(input.dst));
  if (lb) {
    if (model.metallb.pools.length) {
      const a = l2Announcer(model, lb, input.dst);
      if (!a.node) return { error: `nothing receives ${input.dst}: ${a.reason}` };
      const n = model.nodes.find(x => x.name === a.node)!;
      return { node: n, hop: { kind: 'node', name: n.name, address: n.ips[0] ?? null, reason: a.reason } };
    }
    if (only) return onlyHop(`${input.dst} is ${lb.servicePortName}'s LoadBalancer address`);
    return {
      error: `${input.dst} is ${lb.servicePortName}'s LoadBalancer address, but which node the external load balancer sends it to is not in these manifests: give --node`,
    };
  }
  const ext = model.servicePorts.find(sp => sp.externalIPs.includes(input.dst));
  if (ext && only) return onlyHop(`${input.dst} is an externalIP of ${ext.servicePortName}`);
  if (ext)
    return {
      error: `${input.dst} is an externalIP of ${ext.servicePortName}; your network decides which node receives it: give --node`,
    };
  if (only) return onlyHop(`the client ${src ?? ''} is outside the cluster`.replace('  ', ' '));
  return {
    error: `cannot tell which node receives a packet to ${input.dst} from ${src ?? 'this client'}: give --node`,
  };
}

/** The node's kube-proxy output and the evaluator options that trace it, in the chosen mode. */
function nodeSetup(model: ClusterModel, node: NodeInfo, opts: ManifestTraceOptions) {
  const mode = (opts.mode && proxyMode(opts.mode)) || configuredMode(model.kubeProxy.mode).mode;
  const out = mode.synthesize(model, {
    ...opts.synth,
    nodeName: node.name,
    ...(opts.ipvs ? { ipvs: opts.ipvs } : {}),
  });
  const side = (title: string) => out.sideFiles.find(f => f.title === title)?.text ?? null;
  return {
    mode,
    rules: out.rules,
    rulesTitle: out.rulesTitle,
    notes: out.notes,
    facts: out.facts,
    sideFiles: out.sideFiles,
    ipvsadm: side('ipvsadm -Ln'),
    ipsets: side('ipset save'),
    trace: out.traceOptions(nodeContext(model, node)),
  };
}

/**
 * A node's synthesized rules, and once traced their parse, per model: the editor traces every Service
 * port of a cluster (one CodeLens each) against the same few nodes and shows the same node's rules as a
 * document, and synthesizing and parsing a node's rules costs far more than a trace. Keyed by the model
 * object (a new model per manifest change) and the options that shape the output. One synthesis serves
 * both the traces and the document (a second copy of a big cluster's rules was a quarter of the editor's
 * manifests worker's memory).
 */
const setups = new WeakMap<ClusterModel, Map<string, { setup: ReturnType<typeof nodeSetup>; rs: Ruleset | null }>>();

function cachedSetup(
  model: ClusterModel,
  node: NodeInfo,
  opts: ManifestTraceOptions,
): { setup: ReturnType<typeof nodeSetup>; rs: Ruleset | null } {
  let perModel = setups.get(model);
  if (!perModel) {
    perModel = new Map();
    setups.set(model, perModel);
  }
  const key = JSON.stringify([node.name, opts.mode ?? null, opts.synth ?? null, opts.ipvs ?? null]);
  let hit = perModel.get(key);
  if (!hit) {
    hit = { setup: nodeSetup(model, node, opts), rs: null };
    perModel.set(key, hit);
  }
  return hit;
}

/**
 * A node's synthesized kube-proxy output as `traceFromManifests` traces it (the same text, computed once per
 * model, node and options); null when the model has no such node.
 */
export function synthesizedNode(
  model: ClusterModel,
  nodeName: string,
  opts: Omit<ManifestTraceOptions, 'node'> = {},
): Omit<NodeRules, 'traceOptions' | 'render'> | null {
  const node = model.nodes.find(n => n.name === nodeName);
  return node ? cachedSetup(model, node, opts).setup : null;
}

export function traceFromManifests(
  model: ClusterModel,
  input: PacketInput,
  opts: ManifestTraceOptions = {},
): ManifestTraceResult {
  const r = receivingNode(model, input, opts.node ?? null);
  if ('error' in r) return { ok: false, error: r.error };
  const node = r.node;
  const hit = cachedSetup(model, node, opts);
  const setup = hit.setup;
  const rs = (hit.rs ??= setup.mode.parse(setup.rules, `${node.name} (synthesized kube-proxy rules)`));
  const rulesText = setup.rules;
  const src = input.src ?? null;
  const clientPod = src ? podByIP(model, src) : undefined;
  // A loopback source is the receiving node itself (kube-proxy's "localhost to NodePort" cases).
  const loopback = src !== null && isLoopbackText(src);
  const clientNode = src ? (loopback ? node : nodeByIP(model, src)) : undefined;
  const onThisNode = clientNode?.name === node.name;
  const packet: PacketInput = {
    ...input,
    from: onThisNode || (!src && !clientPod) ? 'local' : 'outside',
    ...(clientPod && clientPod.nodeName === node.name ? { in: podIface(clientPod) } : {}),
  };
  const t = tracePacket(
    rs,
    packet,
    opts.explain === undefined ? setup.trace : { ...setup.trace, explain: opts.explain },
  );
  if (!t.ok) return { ok: false, error: t.error };
  const client: Hop = clientPod
    ? {
        kind: 'client',
        name: `pod ${clientPod.namespace}/${clientPod.name}`,
        address: src,
        reason: `on ${clientPod.nodeName ?? 'an unknown node'}`,
      }
    : clientNode
      ? {
          kind: 'client',
          name: `node ${clientNode.name}`,
          address: src,
          reason: loopback ? 'a process on the node, over loopback' : 'a process on the node',
        }
      : { kind: 'client', name: 'outside client', address: src, reason: 'not a pod or node of these manifests' };
  const destinations = t.trace.outcomes.map((o, i) => {
    const dst = o.packet.dst;
    const pod = podByIP(model, dst);
    const hops: Hop[] = [];
    if (o.disposition === 'forwarded' || o.disposition === 'output' || o.disposition === 'local') {
      if (pod) {
        const remote = pod.nodeName && pod.nodeName !== node.name;
        if (remote)
          hops.push({
            kind: 'node',
            name: pod.nodeName!,
            address: model.nodes.find(n => n.name === pod.nodeName)?.ips[0] ?? null,
            reason: `${pod.namespace}/${pod.name} runs on ${pod.nodeName}: routed to it over the node network`,
          });
        hops.push({
          kind: 'pod',
          name: `${pod.namespace}/${pod.name}`,
          address: o.dnat ?? dst,
          reason: `${o.snat ? `source seen ${o.snat}${o.masquerade ? ' (masqueraded)' : ''}` : `source kept ${o.packet.src}`}`,
        });
      } else if (o.disposition === 'local') {
        hops.push({ kind: 'node', name: node.name, address: dst, reason: 'delivered to a process on the node' });
      } else {
        hops.push({
          kind: 'external',
          name: dst,
          address: dst,
          reason: `leaves ${node.name} by ${o.packet.out ?? 'its uplink'}`,
        });
      }
    }
    return { outcome: i, pod: pod ? `${pod.namespace}/${pod.name}` : null, node: pod?.nodeName ?? null, hops };
  });
  return {
    ok: true,
    value: {
      node: node.name,
      trace: t.trace,
      hops: [client, r.hop],
      destinations,
      rules: rulesText,
      mode: setup.mode.name,
      sideFiles: setup.sideFiles,
      ipvsadm: setup.ipvsadm,
      ipsets: setup.ipsets,
      partial: model.partial ?? null,
    },
  };
}
