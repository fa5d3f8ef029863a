/**
 * Endpoints for one Service port: read from its EndpointSlices / Endpoints when the manifests give them, else
 * predicted the way the endpoint controller would (selector over the pods, named targetPorts resolved per pod),
 * keyed and sorted as kube-proxy does. Split out of build.ts, which owns the rest of the cluster model.
 */
import type { FileDiagnostic } from '../../diagnostics.ts';
import type { EndpointSliceM, ServiceM, ServicePortM } from '../manifest/types.ts';
import type { Loc } from '../manifest/yaml-node.ts';
import { normalizeIP } from './addresses.ts';
import type { EndpointInfo, PodInfo, ServicePortInfo } from './types.ts';

function selects(selector: Readonly<Record<string, string>>, labels: Readonly<Record<string, string>>): boolean {
  const keys = Object.keys(selector);
  return keys.length > 0 && keys.every(k => labels[k] === selector[k]);
}

/** How the endpoint builder reports a diagnostic (the cluster model builder's warn). */
export type Warn = (loc: Loc, code: FileDiagnostic['code'], message: string) => void;

/** One per cluster model build: it keeps the pod index its selectors use. */
export class EndpointBuilder {
  constructor(private readonly warn: Warn) {}

  /** Pods by one label's value, per pod list and label key (built when a selector first uses the key). */
  private readonly podIndex = new WeakMap<PodInfo[], Map<string, Map<string, PodInfo[]>>>();

  /**
   * The pods that can match a selector, in their order: those with its first label. Filtering every pod per
   * Service made 25k Services over 75k pods billions of comparisons.
   */
  private candidates(pods: PodInfo[], selector: Readonly<Record<string, string>>): PodInfo[] {
    let byKey = this.podIndex.get(pods);
    if (!byKey) this.podIndex.set(pods, (byKey = new Map()));
    let first: string | undefined;
    for (const k in selector) {
      first = k;
      break;
    }
    if (first === undefined) return [];
    let byValue = byKey.get(first);
    if (!byValue) {
      byValue = new Map();
      for (const p of pods) {
        const v = p.labels[first];
        if (v === undefined) continue;
        const list = byValue.get(v);
        if (list) list.push(p);
        else byValue.set(v, [p]);
      }
      byKey.set(first, byValue);
    }
    return byValue.get(selector[first]!) ?? [];
  }

  /** A slice's ports by name and protocol, the first of each as `find` would give (built once per slice). */
  private readonly slicePortIndex = new WeakMap<EndpointSliceM, Map<string, EndpointSliceM['ports'][number]>>();

  /**
   * The slice's port for a Service port (same name and protocol), or undefined. Indexed: a Service of P ports
   * over slices of Q ports each was P × Q comparisons.
   */
  private slicePort(s: EndpointSliceM, port: ServicePortM): EndpointSliceM['ports'][number] | undefined {
    let index = this.slicePortIndex.get(s);
    if (!index) {
      index = new Map();
      for (const p of s.ports) {
        const k = `${p.protocol} ${p.name}`;
        if (!index.has(k)) index.set(k, p);
      }
      this.slicePortIndex.set(s, index);
    }
    return index.get(`${port.protocol} ${port.name}`);
  }

  /**
   * How many endpoints `endpointsFor` would consider for this port, before it builds any (an upper bound:
   * addresses that do not parse and duplicates are dropped later): what the model's budget counts.
   */
  countFor(svc: ServiceM, port: ServicePortM, slices: EndpointSliceM[], pods: PodInfo[]): number {
    if (slices.length) {
      let n = 0;
      for (const s of slices) {
        const sp = this.slicePort(s, port);
        if (sp && sp.port !== null) n += s.endpoints.length;
      }
      return n;
    }
    if (!svc.selector) return 0;
    return this.matching(svc, pods).length;
  }

  /** The pods of the Service's namespace its selector matches (memoized per Service and pod list). */
  private matching(svc: ServiceM, pods: PodInfo[]): PodInfo[] {
    const memo = this.matched.get(svc);
    if (memo && memo.pods === pods) return memo.matching;
    const matching = this.candidates(pods, svc.selector!).filter(
      p => p.namespace === svc.namespace && selects(svc.selector!, p.labels),
    );
    this.matched.set(svc, { pods, matching });
    return matching;
  }

  private readonly matched = new WeakMap<ServiceM, { pods: PodInfo[]; matching: PodInfo[] }>();

  endpointsFor(
    svc: ServiceM,
    port: ServicePortM,
    slices: EndpointSliceM[],
    pods: PodInfo[],
  ): { endpoints: EndpointInfo[]; source: ServicePortInfo['endpointSource'] } {
    if (slices.length) {
      const eps: EndpointInfo[] = [];
      for (const s of slices) {
        const sp = this.slicePort(s, port);
        if (!sp || sp.port === null) continue;
        for (const e of s.endpoints) {
          // kube-proxy uses an endpoint's first address (endpointslicecache.go, addEndpoints).
          const ip = e.addresses[0] ? normalizeIP(e.addresses[0]) : null;
          if (!ip) continue;
          eps.push({
            ip,
            port: sp.port,
            nodeName: e.nodeName,
            ready: e.ready,
            serving: e.serving,
            terminating: e.terminating,
            podName: e.targetPod,
            predicted: false,
          });
        }
      }
      return {
        endpoints: dedupeSort(eps),
        source: slices.some(s => (s as { kind: string }).kind === 'EndpointSlice') ? 'EndpointSlice' : 'Endpoints',
      };
    }
    if (!svc.selector) return { endpoints: [], source: 'none' };
    const matching = this.matching(svc, pods);
    if (matching.length === 0) {
      this.warn(
        svc.fieldLocs.selector ?? svc.loc,
        'selector-matches-nothing',
        `Service ${svc.namespace}/${svc.name}: selector ${Object.entries(svc.selector)
          .map(([k, v]) => `${k}=${v}`)
          .join(',')} matches no pod in these manifests, so it has no endpoints`,
      );
      return { endpoints: [], source: 'selector' };
    }
    const eps: EndpointInfo[] = [];
    for (const p of matching) {
      if (!p.ip) continue;
      let target: number | null;
      if (port.targetPort === null) target = port.port;
      else if (typeof port.targetPort === 'number') target = port.targetPort;
      else {
        // The endpoint controller resolves a named targetPort per pod (FindPort in pkg/api/v1/pod).
        const cp = p.containerPorts.find(c => c.name === port.targetPort && c.protocol === port.protocol);
        target = cp ? cp.containerPort : null;
        if (target === null) {
          this.warn(
            port.loc,
            'named-port-unresolved',
            `Service ${svc.namespace}/${svc.name}: targetPort '${port.targetPort}' is not a ${port.protocol} container port of pod ${p.name}; the pod is left out of the endpoints`,
          );
          continue;
        }
      }
      eps.push({
        ip: p.ip,
        port: target,
        nodeName: p.nodeName,
        ready: p.ready && !p.terminating,
        serving: p.ready,
        terminating: p.terminating,
        podName: p.name,
        predicted: true,
      });
    }
    return { endpoints: dedupeSort(eps), source: 'selector' };
  }
}

/** kube-proxy keys endpoints by `ip:port` and sorts them by that string (endpointsMapFromEndpointInfo). */
function dedupeSort(eps: EndpointInfo[]): EndpointInfo[] {
  const keys = eps.map(endpointString);
  // A stable sort by key puts the first of equal keys first: keep it, drop the rest.
  const order = keys.map((_, i) => i).sort((a, b) => (keys[a]! < keys[b]! ? -1 : keys[a]! > keys[b]! ? 1 : a - b));
  const out: EndpointInfo[] = [];
  for (let k = 0; k < order.length; k++)
    if (k === 0 || keys[order[k]!] !== keys[order[k - 1]!]) out.push(eps[order[k]!]!);
  return out;
}

export function endpointString(e: { ip: string; port: number }): string {
  return e.ip.includes(':') ? `[${e.ip}]:${e.port}` : `${e.ip}:${e.port}`;
}
