/**
 * The manifest features: Service hovers and per-port CodeLens in Kubernetes YAML documents, "Show kube-proxy
 * Rules for Node…", and "Trace Packet…" end to end from the manifests. Glue only: what is shown comes from
 * src/editor/kube, run by the manifests' engine worker (src/worker/kube-host.ts) through the cluster's
 * `ClusterHandle` from `ManifestWorkspace`; nothing here reads a manifest or traces a packet.
 */
import * as vscode from 'vscode';
import { error, info, warn } from './notify.ts';
import { fieldsToText } from '../editor/packet-fields.ts';
import { pushHistory } from '../editor/packet-suggest.ts';
import { PIECE_CHARS, isCancelled } from '../worker/client.ts';
import type { PacketFields } from '../shared/protocol.ts';
import { COMMANDS, HISTORY_KEY, KUBERNETES_CONTEXT, YAML_LANGUAGE_ID } from './commands.ts';
import { lineStart, toMarkdown, toRange } from './convert.ts';
import type { Cluster, ClusterHandle, ManifestWorkspace } from './manifest-workspace.ts';
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
    readonly view: ClusterHandle,
    readonly port: number,
    readonly doc: vscode.TextDocument,
  ) {
    super(range);
  }
}

function manifestSource(view: ClusterHandle): PacketSource {
  return {
    family: view.summary.family,
    heading: `Service ports of ${view.label}`,
    delayMs: 60,
    suggest: (query, limit) => view.ask('kubeSuggest', { query, limit }).catch(() => []),
    describe: s => s.label,
  };
}

/** Whatever a request answers, or `fallback` when the manifests changed meanwhile (the request was cancelled). */
async function unlessCancelled<T>(work: Promise<T>, fallback: T): Promise<T> {
  try {
    return await work;
  } catch (e) {
    if (isCancelled(e)) return fallback;
    throw e;
  }
}

/** The rules of a node as the worker synthesized them, read a piece per task (a big cluster's are 45 MB). */
async function readNodeDump(
  view: ClusterHandle,
  node: string,
  traced: boolean,
): Promise<{ text: string; fileName: string } | null> {
  const pieces: string[] = [];
  let fileName = '';
  for (let offset = 0; ;) {
    const r = await view.ask('kubeDump', { node, traced, offset, limit: PIECE_CHARS });
    if (!r) return null;
    fileName = r.fileName;
    pieces.push(r.text);
    offset += r.text.length;
    if (offset >= r.total || r.text.length === 0) break;
    await new Promise(resolve => setTimeout(resolve, 0));
  }
  return { text: pieces.join(''), fileName };
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
        this.workspace.closed(doc);
      }),
    ];
  }

  private async provideHover(
    doc: vscode.TextDocument,
    pos: vscode.Position,
    token: vscode.CancellationToken,
  ): Promise<vscode.Hover | undefined> {
    if (!this.workspace.isKubernetes(doc)) return undefined;
    const h = await unlessCancelled(
      this.workspace
        .viewFor(doc)
        .then(view =>
          token.isCancellationRequested
            ? null
            : view.ask('kubeHover', { file: doc.uri.toString(), line: pos.line, character: pos.character }),
        ),
      null,
    );
    return h && !token.isCancellationRequested ? new vscode.Hover(toMarkdown(h.markdown), toRange(h.range)) : undefined;
  }

  private async provideCodeLenses(
    host: ManifestHost,
    doc: vscode.TextDocument,
    token: vscode.CancellationToken,
  ): Promise<vscode.CodeLens[]> {
    if (!host.settings().serviceLenses || !this.workspace.isKubernetes(doc)) return [];
    return unlessCancelled(
      (async () => {
        const view = await this.workspace.viewFor(doc);
        if (token.isCancellationRequested) return [];
        const rows = await view.ask('kubeLenses', { file: doc.uri.toString() });
        return rows.map(r =>
          r.title !== null
            ? new vscode.CodeLens(lineStart(r.line), { title: r.title, command: '' })
            : new PortCodeLens(lineStart(r.line), view, r.port, doc),
        );
      })(),
      [],
    );
  }

  private async resolveCodeLens(lens: vscode.CodeLens, token: vscode.CancellationToken): Promise<vscode.CodeLens> {
    if (!(lens instanceof PortCodeLens) || token.isCancellationRequested) return lens;
    // Each port is an end-to-end trace, in the worker (the view's first one synthesizes the node's rules).
    const l = await unlessCancelled(lens.view.ask('kubePortLens', { port: lens.port }), null);
    if (!l) return lens;
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
      void warn(view.summary.empty ?? `Packet Lens: nothing to trace for this port in the manifests of ${view.label}.`);
      return;
    }
    if (await this.run(host, cluster, view, arg.packet, arg.node))
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
    const empty = view.summary.empty;
    if (empty) {
      void warn(`Packet Lens: ${empty}`);
      return;
    }
    const history = host.memento.get<string[]>(HISTORY_KEY, []);
    const given =
      arg && typeof arg === 'object' && typeof (arg as { packet?: unknown }).packet === 'string'
        ? (arg as { packet: string }).packet
        : null;
    const initial = given ?? (await view.ask('kubeSuggest', { query: '', limit: 1 }))[0]?.text ?? '';
    const packet = await askPacket(
      manifestSource(view),
      `Trace a packet end to end through the manifests of ${view.label}`,
      initial,
      history,
    );
    if (!packet) return;
    if (await this.run(host, cluster, view, packet, null))
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
    const first = await view.ask('kubeTrace', { packet, node: null });
    const node = !first.ok && first.chooseNode ? q.get('node') : null;
    if ((await this.run(host, cluster, view, packet, node)) && typeof fields !== 'string')
      await host.memento.update(HISTORY_KEY, pushHistory(host.memento.get<string[]>(HISTORY_KEY, []), packet));
  }

  /** Traces end to end and shows the diagram; the node's rules become a virtual dump its lines point into. */
  private async run(
    host: ManifestHost,
    cluster: Cluster,
    view: ClusterHandle,
    packet: string,
    node: string | null,
  ): Promise<boolean> {
    const t0 = performance.now();
    const r = await view.ask('kubeTrace', { packet, node });
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
    const uri = this.dumpUri(host, cluster, r.dumpName);
    // The diagram first; the node's rules (which its lines point into) follow in pieces.
    host.showDiagram(r.diagram, uri, 'manifests');
    vscode.window.setStatusBarMessage(
      `Packet Lens: ${r.route}: ${r.summary} (${(performance.now() - t0).toFixed(1)} ms)`,
      8000,
    );
    host.log(
      `traced ${packet} from the manifests of ${view.label} on ${r.node} (${r.mode} mode) in ${(performance.now() - t0).toFixed(1)} ms (${r.ms.toFixed(1)} ms in the worker)`,
    );
    const dump = await unlessCancelled(readNodeDump(view, r.node, true), null);
    if (dump) host.virtualDumps.set(uri, dump.text);
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
    const dump = await readNodeDump(view, node, false);
    return dump?.text ?? `# The manifests of ${view.label} no longer define node ${node.replace(/\n/g, ' ')}.\n`;
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
    if (view.summary.nodes.length === 0) {
      void warn(
        `Packet Lens: the manifests of ${view.label} define no nodes, so there is no node to write kube-proxy's rules for. Add Node objects (kubectl get nodes -o yaml) or a kind Cluster config.`,
      );
      return;
    }
    const picks = (await view.ask('kubeNodePicks', {})).map(p => ({
      label: p.label,
      description: p.description,
      detail: p.detail,
      node: p.node,
    }));
    const pick = await vscode.window.showQuickPick(picks, {
      title: `Show kube-proxy Rules for Node · ${view.label} (${view.summary.mode} mode)`,
      placeHolder: 'The node whose kube-proxy rules to synthesize',
      matchOnDescription: true,
      matchOnDetail: true,
    });
    if (!pick) return;
    const t0 = performance.now();
    const dump = await readNodeDump(view, pick.node, false);
    if (!dump) return;
    await host.virtualDumps.show(this.dumpUri(host, cluster, dump.fileName), dump.text);
    host.log(
      `kube-proxy rules of ${pick.node} (${view.label}, ${view.summary.mode} mode): ${dump.text.length} characters in ${(performance.now() - t0).toFixed(1)} ms`,
    );
  }
}
