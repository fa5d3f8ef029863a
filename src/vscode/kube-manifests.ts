/**
 * The manifest features: Service hovers and per-port CodeLens in Kubernetes YAML documents, "Show kube-proxy
 * Rules for Node…", and "Trace Packet…" end to end from the manifests. Glue only: what is shown comes from
 * src/editor/kube; the manifests come from `ManifestWorkspace`.
 */
import * as vscode from 'vscode';
import { error, info, warn } from './notify.ts';
import type { ClusterView } from '../editor/kube/cluster.ts';
import { manifestHoverAt } from '../editor/kube/manifest-hover.ts';
import { clusterFamily, manifestSuggestions, nothingToTrace, runManifestTrace } from '../editor/kube/manifest-trace.ts';
import { nodeDump, nodeDumpFileName, nodePicks } from '../editor/kube/node-rules.ts';
import { noRulesTitle, portLens } from '../editor/kube/service-lens.ts';
import { fieldsToText } from '../editor/packet-fields.ts';
import { pushHistory } from '../editor/packet-suggest.ts';
import { traceSummary } from '../editor/run-trace.ts';
import { TextLines } from '../editor/text-lines.ts';
import type { ServicePortInfo } from '../engine/api.ts';
import type { PacketFields } from '../shared/protocol.ts';
import { COMMANDS, HISTORY_KEY, KUBERNETES_CONTEXT, YAML_LANGUAGE_ID } from './commands.ts';
import { lineStart, toMarkdown, toRange } from './convert.ts';
import type { Cluster, ManifestWorkspace } from './manifest-workspace.ts';
import type { ManifestFeatures, ManifestHost } from './manifest-registry.ts';
import { type PacketSource, askPacket } from './packet-input.ts';
import { VIRTUAL_SCHEME } from './virtual-dumps.ts';

/** What the CodeLens of a Service port passes to `packetlens.traceFromManifests`. */
export interface PortTraceArgument {
  readonly uri: string;
  readonly packet: string | null;
  readonly node: string | null;
}

class PortCodeLens extends vscode.CodeLens {
  constructor(
    range: vscode.Range,
    readonly view: ClusterView,
    readonly port: ServicePortInfo,
    readonly doc: vscode.TextDocument,
  ) {
    super(range);
  }
}

function manifestSource(view: ClusterView): PacketSource {
  return {
    family: clusterFamily(view),
    heading: `Service ports of ${view.label}`,
    delayMs: 60,
    suggest: (q, limit) => manifestSuggestions(view, q, limit),
    describe: s => s.label,
  };
}

function isYamlUri(uri: vscode.Uri): boolean {
  return /\.ya?ml$/i.test(uri.path);
}

export class KubeManifests implements ManifestFeatures {
  private readonly lensEmitter = new vscode.EventEmitter<void>();

  constructor(private readonly workspace: ManifestWorkspace) {}

  register(host: ManifestHost): vscode.Disposable[] {
    const selector: vscode.DocumentSelector = { language: YAML_LANGUAGE_ID };
    host.virtualDumps.setResolver(uri => this.resolveDump(uri));
    const updateContext = (editor: vscode.TextEditor | undefined) =>
      void vscode.commands.executeCommand(
        'setContext',
        KUBERNETES_CONTEXT,
        !!editor && this.workspace.isKubernetes(editor.document),
      );
    updateContext(vscode.window.activeTextEditor);
    return [
      this.lensEmitter,
      vscode.languages.registerHoverProvider(selector, {
        provideHover: (doc, pos, token) => this.provideHover(doc, pos, token),
      }),
      vscode.languages.registerCodeLensProvider(selector, {
        onDidChangeCodeLenses: this.lensEmitter.event,
        provideCodeLenses: (doc, token) => this.provideCodeLenses(host, doc, token),
        resolveCodeLens: (lens, token) => this.resolveCodeLens(lens, token),
      }),
      vscode.commands.registerCommand(COMMANDS.traceFromManifests, (arg: PortTraceArgument) =>
        this.tracePort(host, arg),
      ),
      this.workspace.onDidChange(() => {
        this.lensEmitter.fire();
        // Open synthesized dumps follow their manifests.
        host.virtualDumps.invalidate(
          uri => uri.scheme === VIRTUAL_SCHEME && new URLSearchParams(uri.query).has('root'),
        );
      }),
      vscode.window.onDidChangeActiveTextEditor(updateContext),
      vscode.workspace.onDidChangeTextDocument(e => {
        if (e.document.languageId !== YAML_LANGUAGE_ID || e.contentChanges.length === 0) return;
        this.workspace.edited(e.document);
        if (e.document === vscode.window.activeTextEditor?.document) updateContext(vscode.window.activeTextEditor);
      }),
      vscode.workspace.onDidCloseTextDocument(doc => {
        // Closed without saving: the file on disk counts again.
        if (doc.languageId === YAML_LANGUAGE_ID && doc.isDirty) this.workspace.edited(doc);
      }),
    ];
  }

  private async provideHover(
    doc: vscode.TextDocument,
    pos: vscode.Position,
    token: vscode.CancellationToken,
  ): Promise<vscode.Hover | undefined> {
    if (!this.workspace.isKubernetes(doc)) return undefined;
    const view = await this.workspace.viewFor(doc);
    if (token.isCancellationRequested) return undefined;
    const key = doc.uri.toString();
    // Positions are read in the text the view was made from (it may lag an edit by a moment).
    const text = view.files.find(f => f.file === key)?.text ?? doc.getText();
    const h = manifestHoverAt(view, key, new TextLines(text), pos.line, pos.character);
    return h ? new vscode.Hover(toMarkdown(h.markdown), toRange(h.range)) : undefined;
  }

  private async provideCodeLenses(
    host: ManifestHost,
    doc: vscode.TextDocument,
    token: vscode.CancellationToken,
  ): Promise<vscode.CodeLens[]> {
    if (!host.settings().serviceLenses || !this.workspace.isKubernetes(doc)) return [];
    const view = await this.workspace.viewFor(doc);
    if (token.isCancellationRequested) return [];
    const out: vscode.CodeLens[] = [];
    for (const service of view.servicesIn(doc.uri.toString())) {
      const none = noRulesTitle(service);
      if (none) {
        for (const p of service.ports)
          out.push(new vscode.CodeLens(lineStart(p.loc.range.start.line), { title: none, command: '' }));
        continue;
      }
      for (const sp of view.portsOf(service))
        out.push(new PortCodeLens(lineStart(sp.loc.range.start.line), view, sp, doc));
    }
    return out;
  }

  private async resolveCodeLens(lens: vscode.CodeLens, token: vscode.CancellationToken): Promise<vscode.CodeLens> {
    if (!(lens instanceof PortCodeLens)) return lens;
    // Each port is an end-to-end trace (tens of ms on big clusters): let hovers and other requests in between.
    await new Promise(resolve => setTimeout(resolve, 0));
    if (token.isCancellationRequested) return lens;
    const l = portLens(lens.view, lens.port);
    const arg: PortTraceArgument = { uri: lens.doc.uri.toString(), packet: l.packet, node: l.node };
    lens.command = { title: l.title, tooltip: l.tooltip, command: COMMANDS.traceFromManifests, arguments: [arg] };
    return lens;
  }

  /** The CodeLens of a Service port: trace its packet end to end at once. */
  private async tracePort(host: ManifestHost, arg: PortTraceArgument | undefined): Promise<void> {
    if (!arg?.uri) return;
    const uri = vscode.Uri.parse(arg.uri);
    const doc = await vscode.workspace.openTextDocument(uri);
    const cluster = await this.workspace.clusterOf(uri);
    const view = await this.workspace.view(cluster, doc);
    if (!arg.packet) {
      void warn(
        nothingToTrace(view) ?? `Packet Lens: nothing to trace for this port in the manifests of ${view.label}.`,
      );
      return;
    }
    if (this.run(host, cluster, view, arg.packet, arg.node))
      await host.memento.update(HISTORY_KEY, pushHistory(host.memento.get<string[]>(HISTORY_KEY, []), arg.packet));
  }

  handlesTrace(arg: unknown): boolean {
    if (arg instanceof vscode.Uri) return isYamlUri(arg);
    if (arg && typeof arg === 'object' && typeof (arg as { uri?: unknown }).uri === 'string')
      return isYamlUri(vscode.Uri.parse((arg as { uri: string }).uri));
    const editor = vscode.window.activeTextEditor;
    return !arg && !!editor && this.workspace.isKubernetes(editor.document);
  }

  async traceCommand(host: ManifestHost, arg: unknown): Promise<void> {
    const uri =
      arg instanceof vscode.Uri
        ? arg
        : arg && typeof arg === 'object' && typeof (arg as { uri?: unknown }).uri === 'string'
          ? vscode.Uri.parse((arg as { uri: string }).uri)
          : vscode.window.activeTextEditor?.document.uri;
    if (!uri) return;
    const doc = await vscode.workspace.openTextDocument(uri);
    if (!this.workspace.isKubernetes(doc)) {
      void info(
        `Packet Lens: ${vscode.workspace.asRelativePath(uri)} holds no Kubernetes objects (apiVersion and kind). Open a manifest with Services, or an iptables-save dump.`,
      );
      return;
    }
    const cluster = await this.workspace.clusterOf(uri);
    const view = await this.workspace.view(cluster, doc);
    const empty = nothingToTrace(view);
    if (empty) {
      void warn(`Packet Lens: ${empty}`);
      return;
    }
    const history = host.memento.get<string[]>(HISTORY_KEY, []);
    const given =
      arg && typeof arg === 'object' && typeof (arg as { packet?: unknown }).packet === 'string'
        ? (arg as { packet: string }).packet
        : null;
    const initial = given ?? manifestSuggestions(view, '', 1)[0]?.text ?? '';
    const packet = await askPacket(
      manifestSource(view),
      `Trace a packet end to end through the manifests of ${view.label}`,
      initial,
      history,
    );
    if (!packet) return;
    if (this.run(host, cluster, view, packet, null))
      await host.memento.update(HISTORY_KEY, pushHistory(history, packet));
  }

  async retrace(host: ManifestHost, uri: vscode.Uri, fields: PacketFields | string): Promise<void> {
    const q = new URLSearchParams(uri.query);
    const root = q.get('root');
    if (!root) {
      host.panelError(
        'This trace came from manifests that are no longer known: run "Packet Lens: Trace Packet…" on a manifest.',
      );
      return;
    }
    const cluster = this.workspace.clusterAt(vscode.Uri.parse(root));
    const view = await this.workspace.view(cluster);
    const packet = typeof fields === 'string' ? fields : fieldsToText(fields);
    // The receiving node follows the packet; the node of the last trace stands in when the manifests cannot say.
    const first = runManifestTrace(view, packet, null);
    const node = !first.ok && first.chooseNode ? q.get('node') : null;
    if (this.run(host, cluster, view, packet, node) && typeof fields !== 'string')
      await host.memento.update(HISTORY_KEY, pushHistory(host.memento.get<string[]>(HISTORY_KEY, []), packet));
  }

  /** Traces end to end and shows the diagram; the node's rules become a virtual dump its lines point into. */
  private run(host: ManifestHost, cluster: Cluster, view: ClusterView, packet: string, node: string | null): boolean {
    const t0 = performance.now();
    const r = runManifestTrace(view, packet, node);
    if (!r.ok && r.chooseNode?.length && node === null) {
      // The manifests cannot say which node receives the packet: ask, instead of failing.
      void vscode.window
        .showQuickPick(
          r.chooseNode.map(n => ({ label: n })),
          { title: `Packet Lens: which node receives ${packet}?`, placeHolder: r.error },
        )
        .then(pick => pick && this.run(host, cluster, view, packet, pick.label));
      return false;
    }
    if (!r.ok) {
      host.log(`trace of ${packet} from the manifests of ${view.label} failed: ${r.error}`);
      void error(`Packet Lens: ${r.error}`);
      host.panelError(r.error);
      return false;
    }
    const uri = this.dumpUri(host, cluster, nodeDumpFileName(r.value.node, r.dump.text));
    host.virtualDumps.set(uri, r.dump.text);
    host.showDiagram(r.diagram, uri, 'manifests');
    const route = r.value.hops.map(h => h.name).join(' → ');
    vscode.window.setStatusBarMessage(
      `Packet Lens: ${route}: ${traceSummary(r.value.trace)} (${(performance.now() - t0).toFixed(1)} ms)`,
      8000,
    );
    host.log(
      `traced ${packet} from the manifests of ${view.label} on ${r.value.node} (${r.value.mode} mode) in ${(performance.now() - t0).toFixed(1)} ms`,
    );
    return true;
  }

  private dumpUri(host: ManifestHost, cluster: Cluster, fileName: string): vscode.Uri {
    const node = fileName.replace(/\.(rules|nft)$/, '');
    const query = new URLSearchParams({ root: cluster.root.toString(), node }).toString();
    return host.virtualDumps.uriFor(`kube-proxy/${cluster.label}/${fileName}`, query);
  }

  /** A synthesized dump VS Code asks for again (after a reload, or after its manifests changed). */
  private async resolveDump(uri: vscode.Uri): Promise<string | null> {
    const q = new URLSearchParams(uri.query);
    const root = q.get('root');
    const node = q.get('node');
    if (!root || !node) return null;
    const view = await this.workspace.view(this.workspace.clusterAt(vscode.Uri.parse(root)));
    if (!view.node(node))
      return `# The manifests of ${view.label} no longer define node ${node.replace(/\n/g, ' ')}.\n`;
    return nodeDump(view, node).text;
  }

  /** The cluster to show rules for: the active manifest's, an open synthesized dump's, or one picked from the workspace. */
  private async pickCluster(): Promise<Cluster | null> {
    const editor = vscode.window.activeTextEditor;
    if (editor && this.workspace.isKubernetes(editor.document)) return this.workspace.clusterOf(editor.document.uri);
    const root =
      editor?.document.uri.scheme === VIRTUAL_SCHEME
        ? new URLSearchParams(editor.document.uri.query).get('root')
        : null;
    if (root) return this.workspace.clusterAt(vscode.Uri.parse(root));
    const clusters = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: 'Packet Lens: looking for Kubernetes manifests…' },
      () => this.workspace.clusters(),
    );
    if (clusters.length === 0) {
      void info(
        'Packet Lens: no Kubernetes manifests in this workspace (YAML files with apiVersion and kind). Open a folder with Services, Pods and Nodes, or a kind Cluster config.',
      );
      return null;
    }
    if (clusters.length === 1) return clusters[0]!;
    const pick = await vscode.window.showQuickPick(
      clusters.map(c => ({ label: c.label, description: c.root.toString(), cluster: c })),
      {
        title: 'Show kube-proxy Rules: which cluster?',
        placeHolder: 'The manifests of one folder (and its subfolders) describe one cluster',
      },
    );
    return pick?.cluster ?? null;
  }

  async showKubeProxyRules(host: ManifestHost): Promise<void> {
    const cluster = await this.pickCluster();
    if (!cluster) return;
    const view = await this.workspace.view(cluster);
    if (view.model.nodes.length === 0) {
      void warn(
        `Packet Lens: the manifests of ${view.label} define no nodes, so there is no node to write kube-proxy's rules for. Add Node objects (kubectl get nodes -o yaml) or a kind Cluster config.`,
      );
      return;
    }
    const picks = nodePicks(view).map(p => ({
      label: p.label,
      description: p.description,
      detail: p.detail,
      node: p.node,
    }));
    const pick = await vscode.window.showQuickPick(picks, {
      title: `Show kube-proxy Rules for Node · ${view.label} (${view.mode} mode)`,
      placeHolder: 'The node whose kube-proxy rules to synthesize',
      matchOnDescription: true,
      matchOnDetail: true,
    });
    if (!pick) return;
    const t0 = performance.now();
    const dump = nodeDump(view, pick.node);
    await host.virtualDumps.show(this.dumpUri(host, cluster, nodeDumpFileName(pick.node, dump.text)), dump.text);
    host.log(
      `kube-proxy rules of ${pick.node} (${view.label}, ${view.mode} mode): ${dump.text.length} characters in ${(performance.now() - t0).toFixed(1)} ms`,
    );
  }
}
