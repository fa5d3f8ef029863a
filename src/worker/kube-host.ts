/**
 * The manifest side of the engine worker: each cluster's view (src/editor/kube/cluster.ts) — the manifests
 * read, the cluster model, kube-proxy's rules synthesized per node, end-to-end traces — is built and kept
 * here under a key, off the extension host's thread. Reading 10k Services and tracing one of their ports
 * takes seconds; the extension only sends the files' text and receives lens titles, hovers and diagrams.
 */
import { ClusterView } from '../editor/kube/cluster.ts';
import { isKubernetesText } from '../editor/kube/detect.ts';
import { manifestHoverAt } from '../editor/kube/manifest-hover.ts';
import { clusterFamily, manifestSuggestions, nothingToTrace, runManifestTrace } from '../editor/kube/manifest-trace.ts';
import { type NodeDump, nodeDump, nodeDumpFileName, nodePicks } from '../editor/kube/node-rules.ts';
import { noRulesTitle, portLens } from '../editor/kube/service-lens.ts';
import { traceSummary } from '../editor/run-trace.ts';
import { TextLines } from '../editor/text-lines.ts';
import { type FileDiagnostic, dumpNode } from '../engine/api.ts';
import type { ClusterSummary, DumpText, EngineMethods, KubeLensRow, KubeTrace } from '../shared/engine-protocol.ts';

type Params<M extends keyof EngineMethods> = EngineMethods[M]['params'];

interface Held {
  readonly view: ClusterView;
  /** The dump each node's last trace showed (its header and rules), for `kubeDump` with `traced`. */
  readonly traced: Map<string, NodeDump>;
}

export class KubeHost {
  private readonly views = new Map<string, Held>();

  constructor(
    /** The text of a source: pieces appended under `pieceKey` are taken (and forgotten) by the host. */
    private readonly textOf: (source: DumpText, pieceKey: string) => string,
  ) {}

  drop(key: string): void {
    this.views.delete(key);
  }

  load(p: Params<'kubeLoad'>): ClusterSummary {
    this.views.delete(p.key);
    const t0 = performance.now();
    const files = [];
    for (const f of p.files) {
      const text = this.textOf(f.source, `${p.key}\n${f.file}`);
      if (isKubernetesText(text)) files.push({ file: f.file, text });
    }
    files.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
    const view = new ClusterView(p.label, files, p.mode);
    this.views.set(p.key, { view, traced: new Map() });
    const m = view.model;
    return {
      label: view.label,
      mode: view.mode,
      files: files.map(f => f.file),
      services: m.services.length,
      pods: m.pods.length,
      nodes: m.nodes.map(n => ({ name: n.name, ips: [...n.ips] })),
      diagnostics: capPerFile(m.diagnostics, p.maxPerFile),
      diagnosticCount: m.diagnostics.length,
      empty: nothingToTrace(view),
      family: clusterFamily(view),
      readMs: performance.now() - t0,
    };
  }

  private held(key: string): Held {
    const h = this.views.get(key);
    if (!h) throw new Error(`no manifests read for ${key}`);
    return h;
  }

  lenses(p: Params<'kubeLenses'>): KubeLensRow[] {
    const view = this.held(p.key).view;
    const out: KubeLensRow[] = [];
    for (const service of view.servicesIn(p.file)) {
      const none = noRulesTitle(service);
      if (none) {
        for (const port of service.ports) out.push({ line: port.loc.range.start.line, title: none, port: -1 });
        continue;
      }
      for (const sp of view.portsOf(service))
        out.push({ line: sp.loc.range.start.line, title: null, port: view.portIndex(sp) });
    }
    return out;
  }

  portLens(p: Params<'kubePortLens'>) {
    const view = this.held(p.key).view;
    const sp = view.model.servicePorts[p.port];
    return sp ? portLens(view, sp) : null;
  }

  hover(p: Params<'kubeHover'>) {
    const view = this.held(p.key).view;
    // Positions are read in the text the view was made from (it may lag an edit by a moment).
    const text = view.files.find(f => f.file === p.file)?.text;
    return text === undefined ? null : manifestHoverAt(view, p.file, new TextLines(text), p.line, p.character);
  }

  suggest(p: Params<'kubeSuggest'>) {
    return manifestSuggestions(this.held(p.key).view, p.query, p.limit);
  }

  trace(p: Params<'kubeTrace'>): KubeTrace {
    const held = this.held(p.key);
    const t0 = performance.now();
    const r = runManifestTrace(held.view, p.packet, p.node);
    if (!r.ok) return r.chooseNode ? { ok: false, error: r.error, chooseNode: r.chooseNode } : r;
    held.traced.set(r.value.node, r.dump);
    return {
      ok: true,
      node: r.value.node,
      mode: r.value.mode,
      route: r.value.hops.map(h => h.name).join(' → '),
      summary: traceSummary(r.value.trace),
      diagram: r.diagram,
      dumpName: nodeDumpFileName(r.value.node, r.dump.text),
      ms: performance.now() - t0,
    };
  }

  nodePicks(p: Params<'kubeNodePicks'>) {
    return nodePicks(this.held(p.key).view);
  }

  dump(p: Params<'kubeDump'>) {
    const held = this.held(p.key);
    const traced = p.traced ? held.traced.get(p.node) : undefined;
    if (!traced && !held.view.node(p.node)) return null;
    const d = traced ?? nodeDump(held.view, p.node);
    return {
      text: d.text.slice(p.offset, p.offset + p.limit),
      total: d.text.length,
      fileName: nodeDumpFileName(p.node, d.text),
    };
  }

  dumpNode(p: Params<'kubeDumpNode'>) {
    const view = this.held(p.key).view;
    if (view.model.nodes.length === 0) return [];
    return [...(dumpNode(view.set, view.model, p.fileName)?.inferred ?? [])];
  }
}

/** At most `max` diagnostics of each file, in their order. */
function capPerFile(all: readonly FileDiagnostic[], max: number): FileDiagnostic[] {
  const count = new Map<string, number>();
  return all.filter(d => {
    const n = (count.get(d.file) ?? 0) + 1;
    count.set(d.file, n);
    return n <= max;
  });
}
