/**
 * The Kubernetes manifests of the workspace, read through `workspace.findFiles` and `workspace.fs` (so it
 * works in virtual workspaces and the web extension), grouped into clusters (editor/kube/detect.ts: a
 * document's folder, widened to parent folders that hold manifests) and sent to the manifests' engine
 * worker, which builds and keeps one view per cluster (src/worker/kube-host.ts): reading 10k Services,
 * synthesizing a node's rules and tracing never run on the extension host's thread. A `ClusterHandle`
 * is the extension's side of one view: its summary, and `ask` for everything else. Open documents count
 * with their unsaved text. Views are dropped when a YAML file changes on disk (a file watcher) or an open
 * manifest is edited (after a quiet moment), and listeners are told so CodeLens and open synthesized
 * dumps follow; work still running for stale manifests (an edit, a closed editor) is cancelled by
 * stopping the worker.
 *
 * Nothing is read until a provider asks about a document that holds Kubernetes objects.
 */
import * as vscode from 'vscode';
import { warn } from './notify.ts';
import { clusterRoot, clusterRoots, dirOf, isKubernetesText, isUnder } from '../editor/kube/detect.ts';
import type { Settings } from '../editor/settings.ts';
import { PromiseCache } from '../editor/promise-cache.ts';
import type { ClusterSummary, ManifestSource, Method, Params, Result } from '../shared/engine-protocol.ts';
import { EngineWorker, PIECE_CHARS, type SpawnWorker, stringPieces } from '../worker/client.ts';
import { MemoryLedger, ViewFailures } from './manifest-memory.ts';
import { YAML_LANGUAGE_ID } from './commands.ts';
import { wholeLines } from './convert.ts';
import { documentPieces } from './dump-store.ts';

const YAML_GLOB = '**/*.{yaml,yml}';
const EXCLUDE = '**/{node_modules,.git}/**';
const YAML_NAME = /\.ya?ml$/i;
/** Edits settle this long before the manifests are read again. */
const QUIET_MS = 400;
/** A document this long is told apart as Kubernetes by its first lines when they suffice (getText is a copy). */
const DETECT_LINES = 400;

type KubeMethod = Extract<Method, `kube${string}`>;

/** The extension's side of one cluster's view, which the manifests' worker holds. */
export interface ClusterHandle {
  readonly root: vscode.Uri;
  readonly label: string;
  readonly summary: ClusterSummary;
  /** Asks the worker holding the view; fails with `Cancelled` once the manifests changed. */
  ask<M extends KubeMethod>(method: M, params: Omit<Params<M>, 'key'>): Promise<Result<M>>;
}

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
  private readonly views = new PromiseCache<string, ClusterHandle>();
  private readonly roots = new PromiseCache<string, Cluster>();
  private readonly classified = new Map<string, { version: number; kube: boolean }>();
  private readonly emitter = new vscode.EventEmitter<void>();
  /** Fires when views were dropped: CodeLens, hovers and synthesized dumps should be made again. */
  readonly onDidChange = this.emitter.event;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private watching = false;
  private readonly subscriptions: vscode.Disposable[] = [];
  /** The worker holding the views (one for every cluster), started when the first view is built. */
  private worker: EngineWorker | null = null;
  /** Keys of the views the worker holds. */
  private readonly held = new Set<string>();
  private nextKey = 1;
  /** Clusters the worker died on (out of memory): not read again until the manifests or the limit change. */
  private readonly failures = new ViewFailures();
  /** What each held view costs and when it was last asked: the views to drop when the worker is full. */
  private readonly ledger = new MemoryLedger();

  constructor(
    private readonly settings: () => Settings,
    private readonly log: (message: string) => void,
    /** Starts the manifests' engine worker (spawn-node.ts / spawn-web.ts). */
    private readonly spawn: SpawnWorker,
    /** Each view built: its cluster root, the files read and the view's summary (for the Problems panel). */
    private readonly built: (root: string, files: readonly string[], summary: ClusterSummary) => void = () => {},
    /** Shows that the manifests are read (the status bar's spinner) until the returned function is called. */
    private readonly progress: (label: string, cancel: () => void) => () => void = () => () => {},
  ) {}

  /** Whether the document is YAML holding Kubernetes objects (a text test, cached per version). */
  isKubernetes(doc: vscode.TextDocument): boolean {
    if (doc.languageId !== YAML_LANGUAGE_ID) return false;
    const key = doc.uri.toString();
    const c = this.classified.get(key);
    if (c && c.version === doc.version) return c.kube;
    // The first lines of a big manifest usually say (copying 8 MB of text to test it holds the thread).
    const head = doc.lineCount > DETECT_LINES ? doc.getText(wholeLines(0, DETECT_LINES)) : null;
    const kube = (head !== null && isKubernetesText(head)) || isKubernetesText(doc.getText());
    this.classified.set(key, { version: doc.version, kube });
    return kube;
  }

  /**
   * A manifest document was edited: work still running for the old text is stopped at once, and the
   * manifests are read again once typing pauses.
   */
  edited(doc: vscode.TextDocument): void {
    const was = this.classified.get(doc.uri.toString())?.kube ?? false;
    if (!was && !this.isKubernetes(doc)) return;
    if (this.worker?.busy) this.stopWorker(`${vscode.workspace.asRelativePath(doc.uri)} changed`);
    this.invalidate(QUIET_MS);
  }

  /**
   * A document was closed: with no Kubernetes manifest left open, the worker and the views it holds go
   * (whatever it was still doing is cancelled); the next request reads the manifests again.
   */
  closed(doc: vscode.TextDocument): void {
    if (doc.languageId !== YAML_LANGUAGE_ID) return;
    this.classified.delete(doc.uri.toString());
    if (!this.worker) return;
    const open = vscode.workspace.textDocuments.some(d => d !== doc && !d.isClosed && this.isKubernetes(d));
    if (!open) this.stopWorker('no Kubernetes manifest is open');
  }

  /** Settings that change the views (kube-proxy mode, scope) changed. */
  reconfigured(): void {
    this.invalidate(0);
  }

  /** The cluster the document belongs to, and its view. */
  async viewFor(doc: vscode.TextDocument): Promise<ClusterHandle> {
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
          if (await this.holdsKubernetes(f)) kubeDirs.add(dirOf(f.path));
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
        if (await this.holdsKubernetes(f)) kube.push(f);
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

  /**
   * The view of a cluster, read once until something changes; for a cluster the worker could not hold
   * (it ran out of memory on it), the reason, until the manifests or the limit change.
   */
  view(cluster: Cluster, doc?: vscode.TextDocument): Promise<ClusterHandle> {
    const failed = this.failures.failed(cluster.root.toString());
    if (failed) return Promise.reject(failed);
    return this.views.get(cluster.root.toString(), () => this.build(cluster, doc));
  }

  /** The manifests' worker, started on first need; it tells `died` when it dies unasked (out of memory). */
  private workerNow(): EngineWorker {
    if (this.worker) return this.worker;
    const worker: EngineWorker = new EngineWorker(this.spawn, err => this.died(worker, err));
    return (this.worker = worker);
  }

  /**
   * The worker died unasked (out of memory): every view it held is gone. The clusters it was reading, or
   * died on twice, are marked failed and the user told once, naming the cluster and the limit (ViewFailures);
   * the others are read again in a fresh worker when next asked for (listeners are told to ask again).
   */
  private died(worker: EngineWorker, err: Error): void {
    if (this.worker !== worker) return;
    this.worker = null;
    this.held.clear();
    this.views.clear();
    this.ledger.clear();
    for (const f of this.failures.died(err)) {
      this.log(f.message);
      void warn(f.message);
    }
    this.emitter.fire();
  }

  /** Stops the worker (its requests fail with `Cancelled`) and forgets the views it held. */
  private stopWorker(reason: string): void {
    this.worker?.terminate(reason);
    this.worker = null;
    this.held.clear();
    this.views.clear();
    this.ledger.clear();
  }

  private async build(cluster: Cluster, doc: vscode.TextDocument | undefined): Promise<ClusterHandle> {
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
    const texts = await Promise.all(members.map(m => this.source(m)));
    const worker = this.workerNow();
    const key = `cluster-${this.nextKey++}`;
    const root = cluster.root.toString();
    const heapBefore = await this.heapOf(worker);
    const files: ManifestSource[] = [];
    let inline = 0;
    for (let i = 0; i < members.length; i++) {
      const file = members[i]!.toString();
      const t = texts[i];
      if (t === null || t === undefined) continue;
      if (typeof t !== 'string') {
        // An open document: its text in pieces of whole lines, one task each.
        for (const piece of t) await this.append(worker, `${key}\n${file}`, piece);
        files.push({ file, source: { appended: true } });
      } else if (inline + t.length <= PIECE_CHARS) {
        inline += t.length;
        files.push({ file, source: { text: t } });
      } else {
        for (const piece of stringPieces(t)) await this.append(worker, `${key}\n${file}`, piece);
        files.push({ file, source: { appended: true } });
      }
    }
    const end = this.progress(`reading the manifests of ${cluster.label} (${files.length} files)…`, () =>
      this.stopWorker(`reading the manifests of ${cluster.label} was stopped`),
    );
    let summary: ClusterSummary;
    try {
      summary = await this.failures.track(
        root,
        cluster.label,
        true,
        worker.request('kubeLoad', {
          key,
          label: cluster.label,
          mode: s.kubeProxy.mode,
          files,
          maxPerFile: s.limits.maxDiagnostics,
        }),
      );
    } finally {
      end();
    }
    this.held.add(key);
    this.ledger.held(key, root, Math.max(0, (await this.heapOf(worker)) - heapBefore));
    await this.keepWithinBudget(worker, key);
    this.log(
      `manifests of ${cluster.label}: ${summary.files.length} Kubernetes file${summary.files.length === 1 ? '' : 's'}${skipped ? ` (${skipped} more not read: packetlens.limits.maxManifestFiles)` : ''}, ${summary.services} Services, ${summary.nodes.length} nodes, ${summary.pods} pods, ${summary.mode} mode, read in ${summary.readMs.toFixed(0)} ms by the worker (${(performance.now() - t0).toFixed(0)} ms in all)`,
    );
    // Each problem, so the log tells what the Problems panel shows and when it was found.
    for (const d of summary.diagnostics.slice(0, 50))
      this.log(`manifest problem (${cluster.label}): ${d.file}:${d.range.start.line + 1}: ${d.severity}: ${d.message}`);
    if (summary.diagnosticCount > 50) this.log(`… and ${summary.diagnosticCount - 50} more manifest problems`);
    this.built(
      cluster.root.toString(),
      members.map(u => u.toString()),
      summary,
    );
    if (skipped)
      void warn(
        `Packet Lens: ${cluster.label} has more than ${s.limits.maxManifestFiles} YAML files; only the first ${s.limits.maxManifestFiles} are read (packetlens.limits.maxManifestFiles).`,
      );
    return {
      root: cluster.root,
      label: cluster.label,
      summary,
      ask: (method, params) => {
        this.ledger.used(key);
        return this.failures.track(root, cluster.label, false, worker.request(method, { ...params, key } as never));
      },
    };
  }

  /** The worker's heap (bytes), 0 when it cannot say. */
  private async heapOf(worker: EngineWorker): Promise<number> {
    return worker.request('memory', {}).then(
      m => m.heapUsed,
      () => 0,
    );
  }

  /**
   * One worker holds every cluster's view: past half its heap limit (the rest is room for the traces and
   * rules synthesized from the view in use), the views used least recently other than `keep` are dropped
   * (read again when next asked for), so opening one more cluster does not end all of them.
   */
  private async keepWithinBudget(worker: EngineWorker, keep: string): Promise<void> {
    const budget = (this.settings().limits.engineMemoryMB * 1048576) / 2;
    const dropped = this.ledger.toDrop(await this.heapOf(worker), budget, keep);
    for (const { key, root } of dropped) {
      worker.request('drop', { key }).catch(() => {});
      this.held.delete(key);
      this.views.delete(root);
      this.log(
        `dropped the manifests' view of ${root} to keep the manifests' worker within ${(budget / 1048576).toFixed(0)} MB (half of packetlens.limits.engineMemoryMB); it is read again when needed`,
      );
    }
    if (dropped.length) this.emitter.fire();
  }

  /** Sends one piece of a file's text, then lets other tasks in (a piece is about a millisecond to copy). */
  private async append(worker: EngineWorker, key: string, text: string): Promise<void> {
    worker.request('append', { key, text }).catch(() => {});
    await new Promise(r => setTimeout(r, 0));
  }

  /** An open document's text in pieces (read when sent), else the file's text from disk. */
  private source(uri: vscode.Uri): Promise<string | null | Iterable<string>> {
    const key = uri.toString();
    const open = vscode.workspace.textDocuments.find(d => d.uri.toString() === key);
    if (open) return Promise.resolve(open.lineCount > DETECT_LINES ? documentPieces(open) : open.getText());
    return this.disk.get(key, () => this.readDisk(uri));
  }

  /** Whether a file holds Kubernetes objects: an open document's current text, else the file's on disk. */
  private async holdsKubernetes(uri: vscode.Uri): Promise<boolean> {
    const key = uri.toString();
    const open = vscode.workspace.textDocuments.find(d => d.uri.toString() === key);
    if (open) return open.languageId === YAML_LANGUAGE_ID ? this.isKubernetes(open) : isKubernetesText(open.getText());
    const text = await this.disk.get(key, () => this.readDisk(uri));
    return text !== null && isKubernetesText(text);
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
      this.failures.clear();
      this.ledger.clear();
      if (this.worker?.busy) this.stopWorker('the manifests changed');
      for (const key of this.held) this.worker?.request('drop', { key }).catch(() => {});
      this.held.clear();
      this.emitter.fire();
    }, delay);
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    for (const s of this.subscriptions) s.dispose();
    this.stopWorker('the extension stopped');
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
