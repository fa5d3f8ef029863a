/**
 * Reads Kubernetes manifests — multi-document files, `kind: List` (kubectl get -o yaml), Helm-rendered
 * output — into the objects packetlens models. Unknown kinds are skipped quietly; a known kind with a
 * malformed field gives a diagnostic at that field and the rest of the object still reads. YAML syntax
 * errors and alias bombs are diagnostics too. Never throws.
 */
import { LineCounter, parseAllDocuments } from 'yaml';
import { type FileDiagnostic, clipWords } from '../../diagnostics.ts';
import { FastYamlGaveUp, fastYamlDocuments } from './fast-yaml.ts';
import { ObjectReaders } from './kinds.ts';
import type { Loc } from './yaml-node.ts';
import { Y, YamlContext } from './yaml-node.ts';
import type { KindClusterM, KubeObject, KubeProxyConfigM } from './types.ts';

export interface ManifestSet {
  readonly objects: KubeObject[];
  readonly diagnostics: FileDiagnostic[];
  /**
   * Set when reading stopped at a limit (`MANIFEST_BUDGET`, `YAML_PACKAGE_MAX_CHARS`): what was read and
   * what was not, in one sentence that every answer built from these objects must carry.
   */
  readonly partial?: string | null;
}

/**
 * The reader's budget, in entries: one per object, plus one per Service port, per endpoint, per container
 * port and per replica a workload asks for — what the cluster model, the synthesized rules and the traces
 * grow with. Counted here because the engine also runs in a browser (no `process.memoryUsage`). Chosen from
 * measurement (docs/bad-inputs.md, Manifests): 100 MB of manifests of any shape measured stays under 1 GB
 * peak in `synth`, `trace --manifests` and the editor's manifests worker, and the bench's 10k Services × 10
 * endpoints (140,001 entries) is read whole.
 */
export const MANIFEST_BUDGET = 160_000;

/**
 * Text the fast reader cannot read goes to the `yaml` package, which holds about 100 bytes per byte of text
 * while parsing (15 MB: 1.7 GB); past this many characters of such a file only its documents that start
 * before it are read.
 */
export const YAML_PACKAGE_MAX_CHARS = 4 * 1024 * 1024;

/** Thrown inside the reader when the budget runs out; caught by `readManifests`. */
class BudgetSpent {}
const BUDGET_SPENT = new BudgetSpent();

/** An object's entries for `MANIFEST_BUDGET`. */
function entries(o: KubeObject): number {
  switch (o.kind) {
    case 'Service':
      return 1 + o.ports.length;
    case 'EndpointSlice':
    case 'Endpoints':
      return 1 + o.endpoints.length + o.ports.length;
    case 'Pod':
      return 1 + o.containerPorts.length;
    case 'Deployment':
    case 'ReplicaSet':
    case 'StatefulSet':
    case 'DaemonSet':
    case 'ReplicationController':
      return 1 + Math.max(0, o.replicas) * (1 + o.containerPorts.length);
    default:
      return 1;
  }
}

/** `kind: List`, or a typed list (`ServiceList`) with `items`: its items are the objects. */
function isList(o: Y): boolean {
  if (!o.isMap()) return false;
  const kind = o.get('kind').str();
  return kind === 'List' || (!!kind?.endsWith('List') && o.get('items').isSeq());
}

class Reader extends ObjectReaders {
  readonly objects: KubeObject[] = [];
  partial: string | null = null;
  /** Entries read so far (`MANIFEST_BUDGET`). */
  private spent = 0;
  constructor(
    private readonly fastYaml = true,
    private readonly budget = MANIFEST_BUDGET,
    private readonly yamlMaxChars = YAML_PACKAGE_MAX_CHARS,
  ) {
    super();
  }

  /** Reading stopped: the diagnostic at `loc`, and the sentence every answer carries. */
  private stop(loc: Loc, why: string): void {
    const line = loc.range.start.line + 1;
    this.partial = `${loc.file}: ${why}; ${this.objects.length} objects were read and the rest, from line ${line}, was not read: the answer is partial`;
    this.report(loc, 'input-too-large', this.partial);
  }

  readText(whole: string, file: string): void {
    if (this.fastYaml && this.readFast(whole, file)) return;
    const lines = new LineCounter();
    const cut = whole.length > this.yamlMaxChars ? documentStartBefore(whole, this.yamlMaxChars) : whole.length;
    const text = cut < whole.length ? whole.slice(0, cut) : whole;
    this.readWithYaml(text, file, lines);
    if (cut < whole.length) {
      const at = lineAt(whole, cut);
      this.stop(
        { file, range: { start: { line: at, character: 0 }, end: { line: at, character: 0 } } },
        `this file is YAML the fast reader does not read (anchors, tags, multi-line scalars…) and larger than the limit of ${this.yamlMaxChars / 1048576} MB for such files`,
      );
      throw BUDGET_SPENT;
    }
  }

  private readWithYaml(text: string, file: string, lines: LineCounter): void {
    let docs;
    try {
      docs = parseAllDocuments(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: false, strict: false });
    } catch (e) {
      this.diagnostics.push({
        file,
        code: 'yaml-syntax',
        severity: 'error',
        message: clipWords(`${file}: cannot read YAML: ${(e as Error).message}`),
        range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
      });
      return;
    }
    const list = Array.isArray(docs) ? docs : [];
    for (const doc of list) {
      const ctx = new YamlContext(file, lines, doc);
      for (const err of doc.errors) {
        this.diagnostics.push({
          file,
          code: 'yaml-syntax',
          severity: 'error',
          message: clipWords(`YAML: ${err.message.split('\n')[0]}`),
          range: ctx.range(err.pos[0], err.pos[1]),
        });
      }
      if (doc.errors.length) continue;
      const root = new Y((doc.contents as never) ?? null, ctx, '');
      const before = this.objects.length;
      this.readObject(root, 0);
      if (ctx.exhausted) this.reportLimit(ctx, root.loc, this.objects.length - before);
    }
  }

  /**
   * Plain manifests (nearly all) through the fast reader: same values and ranges as `yaml`, several times
   * faster. Returns false, having read nothing, when the text leaves its subset.
   */
  private readFast(text: string, file: string): boolean {
    const lines = new LineCounter();
    const newContext = () => new YamlContext(file, lines, null, Infinity);
    // Without aliases every node is read a bounded number of times, so the work follows the text's size:
    // no node budget (a List of 100k Services is read whole).
    let ctx = newContext();
    let docObjects = this.objects.length;
    let docDiagnostics = this.diagnostics.length;
    // A List's items are read as the fast reader reaches them, before the document's `kind` is known (kubectl
    // writes it after the items): kept only if the document is a List.
    const docs = fastYamlDocuments(text, item => this.readObject(new Y(item, ctx, ''), 1));
    if (!docs) return false;
    lines.addNewLine(0); // as yaml's parser does
    for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) lines.addNewLine(i + 1);
    const objects = this.objects.length;
    const diagnostics = this.diagnostics.length;
    try {
      // One document at a time: its nodes are garbage before the next is built.
      for (const doc of docs) {
        const root = new Y(doc, ctx, '');
        if (!isList(root)) {
          this.objects.length = docObjects;
          this.diagnostics.length = docDiagnostics;
        }
        this.readObject(root, 0);
        ctx = newContext();
        docObjects = this.objects.length;
        docDiagnostics = this.diagnostics.length;
      }
    } catch (e) {
      if (!(e instanceof FastYamlGaveUp)) throw e;
      // A later document left the subset: forget this file's objects and read it with yaml.
      this.objects.length = objects;
      this.diagnostics.length = diagnostics;
      return false;
    }
    return true;
  }

  /**
   * The node budget stopped a document. Most reads made through aliases: an alias bomb. Otherwise the
   * document is simply large, and the user must know the answer covers only the objects before the line named.
   */
  private reportLimit(ctx: YamlContext, loc: Loc, read: number): void {
    if (ctx.aliasVisits * 2 > ctx.visits) {
      this.report(
        loc,
        'yaml-alias-limit',
        `${ctx.file}: this document expands aliases beyond ${ctx.budget} nodes (an alias bomb?); the rest of it was not read`,
      );
      return;
    }
    const line = ctx.range(ctx.furthest, ctx.furthest).start.line + 1;
    this.report(
      loc,
      'input-too-large',
      `${ctx.file}: this document is larger than the reader's limit of ${ctx.budget} node reads per document; ${read} objects were read and the rest, from line ${line}, was not read: the answer is partial`,
    );
  }

  private readObject(o: Y, depth: number): void {
    if (!o.isMap()) return;
    const kind = o.get('kind').str();
    const apiVersion = o.get('apiVersion').str() ?? '';
    if (isList(o)) {
      if (depth < 3) for (const item of o.get('items').items()) this.readObject(item, depth + 1);
      return;
    }
    // An object the budget stopped half-way is dropped with its diagnostics: its unread fields would read as
    // missing, and the answer would be wrong rather than partial.
    const objects = this.objects.length;
    const diagnostics = this.diagnostics.length;
    this.readKind(o, kind, apiVersion);
    if (o.ctx.exhausted) {
      this.objects.length = objects;
      this.diagnostics.length = diagnostics;
      return;
    }
    let spent = 0;
    for (let i = objects; i < this.objects.length; i++) spent += entries(this.objects[i]!);
    if (this.spent + spent > this.budget) {
      // The object that does not fit is dropped whole, as above, and reading stops here.
      this.objects.length = objects;
      this.diagnostics.length = diagnostics;
      this.stop(
        o.loc,
        `the manifests hold more than the reader's budget of ${this.budget} entries (an entry is an object, a Service port, an endpoint, a container port or a replica)`,
      );
      throw BUDGET_SPENT;
    }
    this.spent += spent;
  }

  private readKind(o: Y, kind: string | null, apiVersion: string): void {
    switch (kind) {
      case 'Service':
        if (apiVersion === 'v1' || apiVersion === '') this.objects.push(this.service(o));
        return;
      case 'EndpointSlice':
        this.objects.push(this.endpointSlice(o));
        return;
      case 'Endpoints':
        this.objects.push(...this.endpoints(o));
        return;
      case 'Pod':
        this.objects.push(this.pod(o));
        return;
      case 'Deployment':
      case 'ReplicaSet':
      case 'StatefulSet':
      case 'DaemonSet':
      case 'ReplicationController':
        this.objects.push(this.workload(o, kind));
        return;
      case 'Node':
        this.objects.push(this.node(o));
        return;
      case 'Cluster':
        if (apiVersion.startsWith('kind.x-k8s.io')) this.kindCluster(o);
        return;
      case 'KubeProxyConfiguration':
        this.objects.push(this.kubeProxyConfig(o));
        return;
      case 'ServiceCIDR':
        // networking.k8s.io/v1 (GA in 1.33): the ranges ClusterIPs come from; nftables mode drops the rest.
        if (apiVersion.startsWith('networking.k8s.io'))
          this.objects.push({
            kind: 'ServiceCIDR',
            name: this.meta(o).name,
            cidrs: o.get('spec').get('cidrs').strings(),
            loc: o.loc,
          });
        return;
      case 'ConfigMap': {
        // kube-system/kube-proxy carries the KubeProxyConfiguration as a string.
        const conf = o.get('data').get('config.conf');
        const meta = o.get('metadata');
        if (meta.get('name').str() === 'kube-proxy' && conf.str())
          this.readText(conf.str()!, `${o.ctx.file} (ConfigMap kube-proxy config.conf)`);
        return;
      }
      case 'IPAddressPool':
        if (apiVersion.startsWith('metallb.io')) this.objects.push(this.pool(o));
        return;
      case 'L2Advertisement':
      case 'BGPAdvertisement':
        if (apiVersion.startsWith('metallb.io')) {
          const ad = this.advertisement(o, kind);
          if (kind === 'BGPAdvertisement')
            this.report(
              ad.loc,
              'not-modelled',
              `BGPAdvertisement ${ad.name}: MetalLB BGP mode is read but not modelled (which node receives the traffic depends on the routers' ECMP)`,
              'info',
            );
          this.objects.push(ad);
        }
        return;
      default:
        return;
    }
  }

  private kindCluster(o: Y): void {
    const nodes = o
      .get('nodes')
      .items()
      .map(n => ({
        role: (n.get('role').str() === 'control-plane' ? 'control-plane' : 'worker') as 'control-plane' | 'worker',
        labels: n.get('labels').stringMap(),
      }));
    const net = o.get('networking');
    const cluster: KindClusterM = {
      kind: 'Cluster',
      name: o.get('name').str(),
      nodes: nodes.length ? nodes : [{ role: 'control-plane', labels: {} }],
      podSubnet: net.get('podSubnet').str(),
      serviceSubnet: net.get('serviceSubnet').str(),
      kubeProxyMode: net.get('kubeProxyMode').str(),
      loc: o.loc,
    };
    this.objects.push(cluster);
    // kubeadmConfigPatches are YAML documents in strings; a KubeProxyConfiguration among them configures kube-proxy.
    const patches = [
      ...o.get('kubeadmConfigPatches').items(),
      ...o
        .get('nodes')
        .items()
        .flatMap(n => n.get('kubeadmConfigPatches').items()),
    ];
    for (const p of patches) if (p.str()) this.readText(p.str()!, `${o.ctx.file} (kubeadmConfigPatches)`);
  }

  private kubeProxyConfig(o: Y): KubeProxyConfigM {
    const ipt = o.get('iptables');
    const mode = o.get('mode').str();
    return {
      kind: 'KubeProxyConfiguration',
      mode:
        mode === 'ipvs' || mode === 'nftables' || mode === 'iptables'
          ? mode
          : mode === '' || mode === null
            ? null
            : (this.report(
                o.get('mode').loc,
                'bad-field',
                `kube-proxy mode must be iptables, ipvs or nftables, not '${mode}'`,
              ),
              null),
      clusterCIDR: o.get('clusterCIDR').str() || null,
      masqueradeAll: ipt.get('masqueradeAll').bool(),
      masqueradeBit: ipt.get('masqueradeBit').num(),
      localhostNodePorts: ipt.get('localhostNodePorts').bool(),
      nodePortAddresses: o.get('nodePortAddresses').present ? o.get('nodePortAddresses').strings() : null,
      ipvsScheduler: o.get('ipvs').get('scheduler').str() || null,
      nftables: {
        masqueradeAll: o.get('nftables').get('masqueradeAll').bool(),
        masqueradeBit: o.get('nftables').get('masqueradeBit').num(),
      },
      loc: o.loc,
    };
  }
}

/** Reads manifest files given as `{file, text}` (the caller does the I/O). */
export function readManifests(
  files: readonly { file: string; text: string }[],
  /**
   * `fastYaml: false` reads everything through the `yaml` package (tests compare the two); `budget` and
   * `yamlMaxChars` replace `MANIFEST_BUDGET` and `YAML_PACKAGE_MAX_CHARS` (tests).
   */
  options: { fastYaml?: boolean; budget?: number; yamlMaxChars?: number } = {},
): ManifestSet {
  const r = new Reader(options.fastYaml ?? true, options.budget, options.yamlMaxChars);
  try {
    for (const f of files) r.readText(f.text, f.file);
  } catch (e) {
    // The budget ran out: later files are not read either (the diagnostic says so).
    if (e !== BUDGET_SPENT) throw e;
  }
  return { objects: r.objects, diagnostics: r.diagnostics, partial: r.partial };
}

/**
 * The start of the last document that begins before `limit`: a `---` line (a document marker is always one
 * at column 0, YAML 1.2 §9.1, so it cannot be inside a scalar). 0 when the first document runs past the limit.
 */
function documentStartBefore(text: string, limit: number): number {
  let at = text.lastIndexOf('\n---', limit);
  while (at >= 0) {
    const c = text[at + 4];
    if (c === undefined || c === '\n' || c === ' ' || c === '\r' || c === '\t') return at + 1;
    at = text.lastIndexOf('\n---', at - 1);
  }
  return 0;
}

/** The 0-based line of an offset. */
function lineAt(text: string, offset: number): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) n++;
  return n;
}
