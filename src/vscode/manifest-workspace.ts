/**
 * The Kubernetes manifests of the workspace, read through `workspace.findFiles` and `workspace.fs` (so it
 * works in virtual workspaces and the web extension), grouped into clusters (editor/kube/detect.ts: a
 * document's folder, widened to parent folders that hold manifests) and turned into one `ClusterView` per
 * cluster on demand. Open documents count with their unsaved text. Views are dropped when a YAML file
 * changes on disk (a file watcher) or an open manifest is edited (after a quiet moment), and listeners
 * are told so CodeLens and open synthesized dumps follow.
 *
 * Nothing is read until a provider asks about a document that holds Kubernetes objects.
 */
import * as vscode from 'vscode';
import { warn } from './notify.ts';
import { ClusterView, type ManifestFile } from '../editor/kube/cluster.ts';
import { clusterRoot, clusterRoots, dirOf, isKubernetesText, isUnder } from '../editor/kube/detect.ts';
import type { Settings } from '../editor/settings.ts';
import { PromiseCache } from '../editor/promise-cache.ts';
import { YAML_LANGUAGE_ID } from './commands.ts';

const YAML_GLOB = '**/*.{yaml,yml}';
const EXCLUDE = '**/{node_modules,.git}/**';
const YAML_NAME = /\.ya?ml$/i;
/** Edits settle this long before the manifests are read again. */
const QUIET_MS = 400;

export interface Cluster {
  /** The cluster folder (or, outside a workspace, the document itself). */
  readonly root: vscode.Uri;
  readonly label: string;
}

export class ManifestWorkspace implements vscode.Disposable {
  /** The workspace's YAML files (one search until a file is created or deleted). */
  private readonly list = new PromiseCache<'yaml', vscode.Uri[]>();
  /** Texts of files not open in an editor, until they change on disk. */
  private readonly disk = new PromiseCache<string, string | null>();
  /** Each cluster's view and each manifest's cluster, until something changes. */
  private readonly views = new PromiseCache<string, ClusterView>();
  private readonly roots = new PromiseCache<string, Cluster>();
  private readonly classified = new Map<string, { version: number; kube: boolean }>();
  private readonly emitter = new vscode.EventEmitter<void>();
  /** Fires when views were dropped: CodeLens, hovers and synthesized dumps should be made again. */
  readonly onDidChange = this.emitter.event;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private watching = false;
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(
    private readonly settings: () => Settings,
    private readonly log: (message: string) => void,
    /** Each view built: its cluster root, the files read and the view (for the Problems panel). */
    private readonly built: (root: string, files: readonly string[], view: ClusterView) => void = () => {},
  ) {}

  /** Whether the document is YAML holding Kubernetes objects (a text test, cached per version). */
  isKubernetes(doc: vscode.TextDocument): boolean {
    if (doc.languageId !== YAML_LANGUAGE_ID) return false;
    const key = doc.uri.toString();
    const c = this.classified.get(key);
    if (c && c.version === doc.version) return c.kube;
    const kube = isKubernetesText(doc.getText());
    this.classified.set(key, { version: doc.version, kube });
    return kube;
  }

  /** A manifest document was edited: read the manifests again once typing pauses. */
  edited(doc: vscode.TextDocument): void {
    const was = this.classified.get(doc.uri.toString())?.kube ?? false;
    if (was || this.isKubernetes(doc)) this.invalidate(QUIET_MS);
  }

  /** Settings that change the views (kube-proxy mode, scope) changed. */
  reconfigured(): void {
    this.invalidate(0);
  }

  /** The cluster the document belongs to, and its view. */
  async viewFor(doc: vscode.TextDocument): Promise<ClusterView> {
    return this.view(await this.clusterOf(doc.uri), doc);
  }

  /** The cluster a manifest file belongs to (cached until something changes). */
  clusterOf(uri: vscode.Uri): Promise<Cluster> {
    return this.roots.get(uri.toString(), () => this.findCluster(uri));
  }

  /** The cluster whose root is `root` (a folder or, outside a workspace, a file). */
  clusterAt(root: vscode.Uri): Cluster {
    return { root, label: labelOf(root) };
  }

  private async findCluster(uri: vscode.Uri): Promise<Cluster> {
    this.watch();
    const folder = vscode.workspace.getWorkspaceFolder(uri);
    if (!folder || uri.scheme === 'untitled') return { root: uri, label: labelOf(uri) };
    if (this.settings().manifestScope === 'workspace') return { root: folder.uri, label: folder.name };
    const top = folder.uri.path;
    const files = (await this.files()).filter(f => f.scheme === uri.scheme && isUnder(f.path, top));
    // Only the folders on the way up matter: read the YAML files directly in them.
    const ancestors = new Set<string>();
    for (let d = dirOf(uri.path); isUnder(d, top); d = dirOf(d)) {
      ancestors.add(d);
      if (d === top || d === '') break;
    }
    const kubeDirs = new Set<string>();
    await Promise.all(
      files
        .filter(f => ancestors.has(dirOf(f.path)))
        .map(async f => {
          const text = await this.text(f);
          if (text !== null && isKubernetesText(text)) kubeDirs.add(dirOf(f.path));
        }),
    );
    const rootPath = clusterRoot(uri.path, kubeDirs, top);
    const root = uri.with({ path: rootPath || '/', query: '', fragment: '' });
    return { root, label: labelOf(root) };
  }

  /** Every cluster folder of the workspace (reads every YAML file to find them), and those of open manifests. */
  async clusters(): Promise<Cluster[]> {
    this.watch();
    const out = new Map<string, Cluster>();
    const files = await this.files();
    const kube: vscode.Uri[] = [];
    await Promise.all(
      files.map(async f => {
        const text = await this.text(f);
        if (text !== null && isKubernetesText(text)) kube.push(f);
      }),
    );
    for (const folder of vscode.workspace.workspaceFolders ?? []) {
      const mine = kube.filter(f => f.scheme === folder.uri.scheme && isUnder(f.path, folder.uri.path));
      if (!mine.length) continue;
      const roots =
        this.settings().manifestScope === 'workspace'
          ? [folder.uri.path]
          : clusterRoots(
              mine.map(f => f.path),
              folder.uri.path,
            );
      for (const r of roots) {
        const root = folder.uri.with({ path: r || '/' });
        out.set(root.toString(), { root, label: labelOf(root) });
      }
    }
    for (const doc of vscode.workspace.textDocuments) {
      if (!this.isKubernetes(doc) || vscode.workspace.getWorkspaceFolder(doc.uri)) continue;
      out.set(doc.uri.toString(), { root: doc.uri, label: labelOf(doc.uri) });
    }
    return [...out.values()].sort((a, b) => a.label.localeCompare(b.label));
  }

  /** The view of a cluster, read once until something changes. */
  view(cluster: Cluster, doc?: vscode.TextDocument): Promise<ClusterView> {
    return this.views.get(cluster.root.toString(), () => this.build(cluster, doc));
  }

  private async build(cluster: Cluster, doc: vscode.TextDocument | undefined): Promise<ClusterView> {
    const t0 = performance.now();
    const s = this.settings();
    const rootIsFile = YAML_NAME.test(cluster.root.path) || cluster.root.scheme === 'untitled';
    let members: vscode.Uri[];
    if (rootIsFile) members = [cluster.root];
    else
      members = (await this.files()).filter(
        f => f.scheme === cluster.root.scheme && isUnder(f.path, cluster.root.path),
      );
    let skipped = 0;
    if (members.length > s.limits.maxManifestFiles) {
      skipped = members.length - s.limits.maxManifestFiles;
      members = members.slice(0, s.limits.maxManifestFiles);
    }
    if (doc && !members.some(m => m.toString() === doc.uri.toString())) members.push(doc.uri);
    const files: ManifestFile[] = [];
    const texts = await Promise.all(members.map(m => this.text(m)));
    members.forEach((m, i) => {
      const text = texts[i];
      if (text !== null && text !== undefined && isKubernetesText(text)) files.push({ file: m.toString(), text });
    });
    files.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
    const view = new ClusterView(cluster.label, files, s.kubeProxy.mode);
    const m = view.model;
    this.log(
      `manifests of ${cluster.label}: ${files.length} Kubernetes file${files.length === 1 ? '' : 's'}${skipped ? ` (${skipped} more not read: packetlens.limits.maxManifestFiles)` : ''}, ${m.services.length} Services, ${m.nodes.length} nodes, ${m.pods.length} pods, ${view.mode} mode, read in ${(performance.now() - t0).toFixed(0)} ms`,
    );
    // Each problem, so the log tells what the Problems panel shows and when it was found.
    for (const d of m.diagnostics.slice(0, 50))
      this.log(`manifest problem (${cluster.label}): ${d.file}:${d.range.start.line + 1}: ${d.severity}: ${d.message}`);
    if (m.diagnostics.length > 50) this.log(`… and ${m.diagnostics.length - 50} more manifest problems`);
    this.built(
      cluster.root.toString(),
      members.map(u => u.toString()),
      view,
    );
    if (skipped)
      void warn(
        `Packet Lens: ${cluster.label} has more than ${s.limits.maxManifestFiles} YAML files; only the first ${s.limits.maxManifestFiles} are read (packetlens.limits.maxManifestFiles).`,
      );
    return view;
  }

  /** An open document's current text, else the file's text from disk (cached until it changes). */
  private text(uri: vscode.Uri): Promise<string | null> {
    const key = uri.toString();
    const open = vscode.workspace.textDocuments.find(d => d.uri.toString() === key);
    if (open) return Promise.resolve(open.getText());
    return this.disk.get(key, () => this.readDisk(uri));
  }

  private async readDisk(uri: vscode.Uri): Promise<string | null> {
    try {
      const stat = await vscode.workspace.fs.stat(uri);
      if (stat.size > this.settings().limits.maxFileSizeMB * 1048576) return null;
      return new TextDecoder('utf-8').decode(await vscode.workspace.fs.readFile(uri));
    } catch (e) {
      this.log(`cannot read ${uri.toString()}: ${e instanceof Error ? e.message : String(e)}`);
      return null;
    }
  }

  private files(): Promise<vscode.Uri[]> {
    return this.list.get('yaml', () => {
      const t0 = performance.now();
      return Promise.resolve(vscode.workspace.findFiles(YAML_GLOB, EXCLUDE)).then(uris => {
        this.log(`found ${uris.length} YAML files in the workspace in ${(performance.now() - t0).toFixed(0)} ms`);
        return uris.sort((a, b) => (a.toString() < b.toString() ? -1 : 1));
      });
    });
  }

  /** Starts watching YAML files, the first time manifests are needed. */
  private watch(): void {
    if (this.watching) return;
    this.watching = true;
    const watcher = vscode.workspace.createFileSystemWatcher(YAML_GLOB);
    const changed = (uri: vscode.Uri, listChanged: boolean) => {
      this.disk.delete(uri.toString());
      if (listChanged) this.list.clear();
      this.invalidate(QUIET_MS);
    };
    this.subscriptions.push(
      watcher,
      watcher.onDidCreate(u => changed(u, true)),
      watcher.onDidDelete(u => changed(u, true)),
      watcher.onDidChange(u => changed(u, false)),
      vscode.workspace.onDidChangeWorkspaceFolders(() => {
        this.list.clear();
        this.invalidate(0);
      }),
    );
  }

  private invalidate(delay: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.views.clear();
      this.roots.clear();
      this.emitter.fire();
    }, delay);
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    for (const s of this.subscriptions) s.dispose();
    this.views.clear();
    this.disk.clear();
    this.emitter.dispose();
  }
}

function labelOf(uri: vscode.Uri): string {
  const rel = vscode.workspace.asRelativePath(uri, false);
  if (rel && rel !== uri.toString() && rel !== uri.fsPath) return rel;
  const folder = vscode.workspace.getWorkspaceFolder(uri);
  if (folder && folder.uri.toString() === uri.toString()) return folder.name;
  return uri.path.slice(uri.path.lastIndexOf('/') + 1) || uri.toString();
}
