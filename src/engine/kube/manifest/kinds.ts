/**
 * The per-kind object readers of `read.ts`: one Kubernetes object (a YAML map) to the model object of
 * `types.ts`. A malformed field gives a diagnostic at that field and the rest of the object still reads.
 * `Reader` (read.ts) extends this class: it decides which kinds are read and keeps the budget.
 */
import { type DiagnosticCode, type FileDiagnostic, type Severity, clipWords } from '../../diagnostics.ts';
import type { Loc, Y } from './yaml-node.ts';
import type {
  ContainerPortM,
  EndpointM,
  EndpointSliceM,
  IPAddressPoolM,
  KubeObject,
  L2AdvertisementM,
  NodeM,
  PodM,
  Protocol,
  ServiceM,
  ServicePortM,
  WorkloadM,
} from './types.ts';

/** A toleration of the control-plane taint (`node-role.kubernetes.io/…`, or `operator: Exists` without a key). */
function tolerateControlPlane(tolerations: readonly Y[]): boolean {
  return tolerations.some(
    t =>
      (t.get('key').str() ?? '').startsWith('node-role.kubernetes.io/') ||
      (t.get('operator').str() === 'Exists' && !t.get('key').present),
  );
}

export class ObjectReaders {
  readonly diagnostics: FileDiagnostic[] = [];

  report(loc: Loc, code: DiagnosticCode, message: string, severity: Severity = 'error'): void {
    this.diagnostics.push({ file: loc.file, code, severity, message: clipWords(message), range: loc.range });
  }

  protected meta(o: Y): { namespace: string; name: string } {
    const m = o.get('metadata');
    const name = m.get('name').str();
    if (!name) this.report(o.loc, 'missing-field', `${o.get('kind').str() ?? 'object'} without metadata.name`);
    return { namespace: m.get('namespace').str() ?? 'default', name: name ?? '(unnamed)' };
  }

  protected int(y: Y, what: string, min: number, max: number): number | null {
    if (!y.present) return null;
    const n = y.num();
    if (n === null || !Number.isInteger(n) || n < min || n > max) {
      this.report(
        y.loc,
        'bad-field',
        `${what} must be an integer from ${min} to ${max}, not ${JSON.stringify(y.scalar() ?? null)}`,
      );
      return null;
    }
    return n;
  }

  protected protocol(y: Y): Protocol {
    if (!y.present) return 'TCP';
    const p = y.str();
    if (p === 'TCP' || p === 'UDP' || p === 'SCTP') return p;
    this.report(y.loc, 'bad-field', `protocol must be TCP, UDP or SCTP, not ${JSON.stringify(y.scalar() ?? null)}`);
    return 'TCP';
  }

  protected enumField<T extends string>(y: Y, allowed: readonly T[], def: T, what: string): T {
    if (!y.present) return def;
    const v = y.str();
    if (v !== null && (allowed as readonly string[]).includes(v)) return v as T;
    this.report(y.loc, 'bad-field', `${what} must be ${allowed.join(', ')}, not ${JSON.stringify(y.scalar() ?? null)}`);
    return def;
  }

  protected stringList(y: Y, what: string): string[] {
    if (!y.present) return [];
    if (!y.isSeq()) {
      this.report(y.loc, 'bad-field', `${what} must be a list`);
      return [];
    }
    return y.strings();
  }

  protected service(o: Y): ServiceM {
    const { namespace, name } = this.meta(o);
    const spec = o.get('spec');
    const fieldLocs: Record<string, Loc> = {};
    for (const f of [
      'type',
      'selector',
      'externalTrafficPolicy',
      'internalTrafficPolicy',
      'sessionAffinity',
      'clusterIP',
      'ports',
      'loadBalancerSourceRanges',
      'externalIPs',
    ]) {
      const k = spec.keyLoc(f);
      if (k) fieldLocs[f] = k;
    }
    const type = this.enumField(
      spec.get('type'),
      ['ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName'] as const,
      'ClusterIP',
      'spec.type',
    );
    const ports: ServicePortM[] = [];
    const portsY = spec.get('ports');
    if (portsY.present && !portsY.isSeq()) this.report(portsY.loc, 'bad-field', 'spec.ports must be a list');
    for (const p of portsY.items()) {
      const port = this.int(p.get('port'), 'port', 1, 65535);
      if (port === null) {
        if (!p.get('port').present)
          this.report(p.loc, 'missing-field', `Service ${namespace}/${name}: a port needs 'port'`);
        continue;
      }
      const tp = p.get('targetPort');
      let targetPort: number | string | null = null;
      if (tp.present) {
        const n = tp.num();
        if (n !== null) targetPort = this.int(tp, 'targetPort', 1, 65535);
        else if (tp.str()) targetPort = tp.str();
        else this.report(tp.loc, 'bad-field', 'targetPort must be a port number or a container port name');
      }
      ports.push({
        name: p.get('name').str() ?? '',
        protocol: this.protocol(p.get('protocol')),
        port,
        targetPort,
        nodePort: this.int(p.get('nodePort'), 'nodePort', 1, 65535),
        appProtocol: p.get('appProtocol').str(),
        loc: p.loc,
      });
    }
    const clusterIP = spec.get('clusterIP').str();
    if (ports.length === 0 && type !== 'ExternalName' && clusterIP !== 'None') {
      this.report(
        fieldLocs.ports ?? o.loc,
        'service-without-ports',
        `Service ${namespace}/${name} has no ports: kube-proxy writes no rules for it`,
        'warning',
      );
    }
    const ingress = o
      .get('status')
      .get('loadBalancer')
      .get('ingress')
      .items()
      .map(i => ({ ip: i.get('ip').str() ?? '', ipMode: i.get('ipMode').str() }))
      .filter(i => i.ip);
    const selectorY = spec.get('selector');
    return {
      kind: 'Service',
      namespace,
      name,
      type,
      clusterIP,
      clusterIPs: this.stringList(spec.get('clusterIPs'), 'spec.clusterIPs'),
      ports,
      externalIPs: this.stringList(spec.get('externalIPs'), 'spec.externalIPs'),
      loadBalancerIP: spec.get('loadBalancerIP').str(),
      lbIngress: ingress,
      loadBalancerSourceRanges: this.stringList(spec.get('loadBalancerSourceRanges'), 'spec.loadBalancerSourceRanges'),
      externalTrafficPolicy: this.enumField(
        spec.get('externalTrafficPolicy'),
        ['Cluster', 'Local'] as const,
        'Cluster',
        'spec.externalTrafficPolicy',
      ),
      internalTrafficPolicy: this.enumField(
        spec.get('internalTrafficPolicy'),
        ['Cluster', 'Local'] as const,
        'Cluster',
        'spec.internalTrafficPolicy',
      ),
      healthCheckNodePort: this.int(spec.get('healthCheckNodePort'), 'healthCheckNodePort', 1, 65535),
      sessionAffinity: this.enumField(
        spec.get('sessionAffinity'),
        ['None', 'ClientIP'] as const,
        'None',
        'spec.sessionAffinity',
      ),
      affinityTimeoutSeconds:
        this.int(spec.get('sessionAffinityConfig').get('clientIP').get('timeoutSeconds'), 'timeoutSeconds', 1, 86400) ??
        10800,
      ipFamilies: this.stringList(spec.get('ipFamilies'), 'spec.ipFamilies'),
      ipFamilyPolicy: spec.get('ipFamilyPolicy').str(),
      selector: selectorY.present ? selectorY.stringMap() : null,
      externalName: spec.get('externalName').str(),
      allocateLoadBalancerNodePorts: spec.get('allocateLoadBalancerNodePorts').bool() ?? true,
      loadBalancerClass: spec.get('loadBalancerClass').str(),
      annotations: o.get('metadata').get('annotations').stringMap(),
      loc: o.loc,
      fieldLocs,
    };
  }

  protected slicePorts(y: Y): EndpointSliceM['ports'] {
    return y.items().map(p => ({
      name: p.get('name').str() ?? '',
      port: this.int(p.get('port'), 'port', 1, 65535),
      protocol: this.protocol(p.get('protocol')),
    }));
  }

  protected endpointSlice(o: Y): EndpointSliceM {
    const { namespace, name } = this.meta(o);
    const endpoints: EndpointM[] = o
      .get('endpoints')
      .items()
      .map(e => {
        const c = e.get('conditions');
        // discovery/v1: a nil `ready` means ready; nil `serving` follows `ready`; nil `terminating` is false.
        const ready = c.get('ready').bool() ?? true;
        return {
          addresses: e.get('addresses').strings(),
          ready,
          serving: c.get('serving').bool() ?? ready,
          terminating: c.get('terminating').bool() ?? false,
          nodeName: e.get('nodeName').str(),
          zone: e.get('zone').str(),
          targetPod: e.get('targetRef').get('kind').str() === 'Pod' ? e.get('targetRef').get('name').str() : null,
        };
      });
    const at = o.get('addressType').str();
    return {
      kind: 'EndpointSlice',
      namespace,
      name,
      serviceName: o.get('metadata').get('labels').get('kubernetes.io/service-name').str(),
      addressType: at === 'IPv6' ? 'IPv6' : at === 'FQDN' ? 'FQDN' : 'IPv4',
      endpoints,
      ports: this.slicePorts(o.get('ports')),
      loc: o.loc,
    };
  }

  /**
   * core/v1 Endpoints, read as one EndpointSlice per subset, as the EndpointSlice mirroring controller
   * writes them: a subset's ports go with that subset's addresses only (the subsets of one Service may
   * name the same port with different numbers). An Endpoints without subsets is one empty slice.
   */
  protected endpoints(o: Y): KubeObject[] {
    const { namespace, name } = this.meta(o);
    const out: KubeObject[] = [];
    const subsets = o.get('subsets').items();
    for (const s of subsets.length ? subsets : [null]) {
      const endpoints: EndpointM[] = [];
      const ports: EndpointSliceM['ports'] = s ? this.slicePorts(s.get('ports')) : [];
      out.push({
        kind: 'Endpoints',
        namespace,
        name,
        serviceName: name,
        addressType: 'IPv4',
        endpoints,
        ports,
        loc: o.loc,
      });
      if (!s) continue;
      for (const [list, ready] of [
        [s.get('addresses'), true],
        [s.get('notReadyAddresses'), false],
      ] as const) {
        for (const a of list.items()) {
          const ip = a.get('ip').str();
          if (ip)
            endpoints.push({
              addresses: [ip],
              ready,
              serving: ready,
              terminating: false,
              nodeName: a.get('nodeName').str(),
              zone: null,
              targetPod: a.get('targetRef').get('name').str(),
            });
        }
      }
    }
    return out;
  }

  protected containerPorts(spec: Y): ContainerPortM[] {
    const out: ContainerPortM[] = [];
    for (const c of [...spec.get('containers').items(), ...spec.get('initContainers').items()]) {
      for (const p of c.get('ports').items()) {
        const port = this.int(p.get('containerPort'), 'containerPort', 1, 65535);
        if (port !== null)
          out.push({ name: p.get('name').str(), containerPort: port, protocol: this.protocol(p.get('protocol')) });
      }
    }
    return out;
  }

  protected pod(o: Y): PodM {
    const { namespace, name } = this.meta(o);
    const spec = o.get('spec');
    const status = o.get('status');
    const ips = status
      .get('podIPs')
      .items()
      .map(i => i.get('ip').str())
      .filter((s): s is string => !!s);
    const single = status.get('podIP').str();
    if (single && !ips.includes(single)) ips.unshift(single);
    const readyCond = status
      .get('conditions')
      .items()
      .find(c => c.get('type').str() === 'Ready');
    return {
      kind: 'Pod',
      namespace,
      name,
      labels: o.get('metadata').get('labels').stringMap(),
      nodeName: spec.get('nodeName').str(),
      podIPs: ips,
      containerPorts: this.containerPorts(spec),
      ready: readyCond ? readyCond.get('status').str() === 'True' : null,
      terminating: o.get('metadata').get('deletionTimestamp').present,
      hostNetwork: spec.get('hostNetwork').bool() ?? false,
      owner: null,
      nodeSelector: spec.get('nodeSelector').stringMap(),
      tolerateControlPlane: tolerateControlPlane(spec.get('tolerations').items()),
      loc: o.loc,
    };
  }

  protected workload(o: Y, kind: WorkloadM['kind']): WorkloadM {
    const { namespace, name } = this.meta(o);
    const spec = o.get('spec');
    const tpl = spec.get('template');
    const podSpec = tpl.get('spec');
    return {
      kind,
      namespace,
      name,
      replicas: kind === 'DaemonSet' ? -1 : (this.int(spec.get('replicas'), 'replicas', 0, 100000) ?? 1),
      labels: tpl.get('metadata').get('labels').stringMap(),
      nodeName: podSpec.get('nodeName').str(),
      nodeSelector: podSpec.get('nodeSelector').stringMap(),
      containerPorts: this.containerPorts(podSpec),
      hostNetwork: podSpec.get('hostNetwork').bool() ?? false,
      tolerateControlPlane: tolerateControlPlane(podSpec.get('tolerations').items()),
      loc: o.loc,
    };
  }

  protected node(o: Y): NodeM {
    const { name } = this.meta(o);
    const addrs = o.get('status').get('addresses').items();
    const of = (t: string) =>
      addrs
        .filter(a => a.get('type').str() === t)
        .map(a => a.get('address').str())
        .filter((s): s is string => !!s);
    const spec = o.get('spec');
    const cidrs = spec.get('podCIDRs').strings();
    const one = spec.get('podCIDR').str();
    if (one && !cidrs.includes(one)) cidrs.unshift(one);
    const labels = o.get('metadata').get('labels').stringMap();
    return {
      kind: 'Node',
      name,
      internalIPs: of('InternalIP'),
      externalIPs: of('ExternalIP'),
      podCIDRs: cidrs,
      labels,
      controlPlane: 'node-role.kubernetes.io/control-plane' in labels || 'node-role.kubernetes.io/master' in labels,
      loc: o.loc,
    };
  }
  protected pool(o: Y): IPAddressPoolM {
    const { namespace, name } = this.meta(o);
    const spec = o.get('spec');
    return {
      kind: 'IPAddressPool',
      namespace,
      name,
      addresses: this.stringList(spec.get('addresses'), 'spec.addresses'),
      autoAssign: spec.get('autoAssign').bool() ?? true,
      avoidBuggyIPs: spec.get('avoidBuggyIPs').bool() ?? false,
      loc: o.loc,
    };
  }

  protected advertisement(o: Y, kind: 'L2Advertisement' | 'BGPAdvertisement'): L2AdvertisementM {
    const { namespace, name } = this.meta(o);
    const spec = o.get('spec');
    return {
      kind,
      namespace,
      name,
      ipAddressPools: spec.get('ipAddressPools').strings(),
      nodeSelectors: spec
        .get('nodeSelectors')
        .items()
        .map(s => s.get('matchLabels').stringMap()),
      loc: o.loc,
    };
  }
}
