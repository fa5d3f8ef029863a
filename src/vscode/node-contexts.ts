/**
 * The node context of each dump (src/editor/node-context.ts decides; this file gathers its sources): the
 * user's choices per file or folder in workspace state, the resource-scoped settings, the node's own files
 * beside the dump or named by `packetlens.node.contextFiles` (read through `workspace.fs`, so virtual
 * workspaces and the web build too; recognised and read by the dump's engine worker), the Node object of
 * the manifests beside the dump, and what the dump implies (asked of its engine worker).
 */
import * as vscode from 'vscode';
import type { InferredAddress } from '../engine/api.ts';
import {
  type NodeChoice,
  type NodeContext,
  type NodeLayer,
  type NodeSuggestion,
  choiceFor,
  choiceLayer,
  inferredLayer,
  nodeSuggestions,
  resolveNodeContext,
  settingsLayer,
} from '../editor/node-context.ts';
import { type NodeFileText, type NodeFilesSummary, filesLayer, nodeFileCandidates } from '../editor/node-files.ts';
import type { NodeRequest } from '../shared/engine-protocol.ts';
import { type Analysis, fileName } from './dump-store.ts';
import { VIRTUAL_SCHEME } from './virtual-dumps.ts';
import type { ManifestWorkspace } from './manifest-workspace.ts';
import { currentSettings } from './settings.ts';

const CHOICES_KEY = 'packetlens.nodeChoices';

/** What the files say about a dump's node. */
export interface NodeHints {
  readonly fromManifests: readonly InferredAddress[];
  readonly fromDump: readonly InferredAddress[];
  readonly clusterNodes: readonly NodeSuggestion[];
  /** The node's own files found for the dump (only those the worker recognised), and what they say. */
  readonly files: { readonly files: NodeFileText[]; readonly where: string; readonly summary: NodeFilesSummary } | null;
}

const NO_HINTS: NodeHints = { fromManifests: [], fromDump: [], clusterNodes: [], files: null };

/** Files that may be the node's, and where they were looked for. */
interface FoundFiles {
  readonly files: NodeFileText[];
  readonly where: string;
}

export class NodeContexts implements vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<void>();
  /** Fires when a choice changed: the status item and open traces follow. */
  readonly onDidChange = this.emitter.event;
  private hints = new WeakMap<Analysis, Promise<NodeHints>>();
  /** Files read per folder (or per setting), until a file there changes. */
  private readonly found = new Map<string, Promise<FoundFiles | null>>();
  private readonly watchers = new Map<string, vscode.Disposable>();

  constructor(
    private readonly memento: vscode.Memento,
    private readonly manifests: ManifestWorkspace,
    private readonly log: (message: string) => void,
  ) {}

  choices(): Readonly<Record<string, NodeChoice>> {
    return this.memento.get<Record<string, NodeChoice>>(CHOICES_KEY, {});
  }

  /** The choice in force for `uri` and the file or folder it was made for. */
  choiceOf(uri: vscode.Uri): { key: string; choice: NodeChoice } | null {
    return choiceFor(uri.toString(), this.choices());
  }

  /** Stores a choice for a file or folder (`key`); `null` forgets it. */
  async choose(key: string, choice: NodeChoice | null): Promise<void> {
    const all = { ...this.choices() };
    if (choice) all[key] = choice;
    else delete all[key];
    await this.memento.update(CHOICES_KEY, all);
    this.log(`node context for ${key}: ${choice ? JSON.stringify(choice) : 'forgotten'}`);
    this.emitter.fire();
  }

  /** What the dump and the manifests beside it say about its node (once per parse). */
  hintsFor(a: Analysis): Promise<NodeHints> {
    let h = this.hints.get(a);
    if (!h) {
      h = this.readHints(a).catch((e: unknown) => {
        this.log(`reading node hints for ${a.uri.toString()} failed: ${String(e)}`);
        return NO_HINTS;
      });
      this.hints.set(a, h);
    }
    return h;
  }

  private async readHints(a: Analysis): Promise<NodeHints> {
    const [fromWorker, fromManifests, files] = await Promise.all([
      a.ask('nodeHints', {}).catch(() => ({ inferred: [], clusterNodes: [] })),
      this.manifestNode(a.uri),
      this.nodeFiles(a),
    ]);
    return {
      files,
      fromManifests,
      fromDump: fromWorker.inferred,
      clusterNodes: fromWorker.clusterNodes.map(n => ({
        address: n.address,
        from: n.from,
        why: 'an API server endpoint of default/kubernetes: a node of this cluster, perhaps this one',
      })),
    };
  }

  /** The node's own files for a dump, as its worker read them (null when there are none). */
  private async nodeFiles(a: Analysis): Promise<NodeHints['files']> {
    const found = await this.findFiles(a.uri);
    if (!found?.files.length) return null;
    const summary = await a.ask('nodeFiles', { files: found.files });
    if (!summary) return null;
    const used = new Set(summary.used.map(u => u.file));
    this.log(
      `node files for ${fileName(a.uri)} (${found.where}): ${summary.used.map(u => `${u.file} (${u.kind})`).join(', ')}${summary.notes.length ? `; ${summary.notes.map(n => n.message).join('; ')}` : ''}`,
    );
    return { files: found.files.filter(f => used.has(f.file)), where: found.where, summary };
  }

  /** The files that may be the dump's node's: those the setting names, else those beside the dump. */
  private findFiles(uri: vscode.Uri): Promise<FoundFiles | null> {
    const paths = currentSettings(uri).nodeContextFiles;
    if (!paths.length && (uri.scheme === 'untitled' || uri.scheme === VIRTUAL_SCHEME)) return Promise.resolve(null);
    const base = vscode.workspace.getWorkspaceFolder(uri)?.uri ?? vscode.Uri.joinPath(uri, '..');
    const targets = paths.length
      ? paths.map(p =>
          /^[a-z][a-z0-9+.-]*:/i.test(p) && !/^[a-z]:[\\/]/i.test(p)
            ? vscode.Uri.parse(p)
            : p.startsWith('/')
              ? base.with({ path: p })
              : vscode.Uri.joinPath(base, p),
        )
      : [vscode.Uri.joinPath(uri, '..')];
    const key = `${uri.toString()}|${targets.map(t => t.toString()).join('|')}`;
    let hit = this.found.get(key);
    if (!hit) {
      const where = paths.length ? 'named by packetlens.node.contextFiles' : `beside ${fileName(uri)}`;
      hit = this.readTargets(targets, paths.length ? null : uri, where).catch((e: unknown) => {
        this.log(`reading node files for ${uri.toString()} failed: ${String(e)}`);
        return null;
      });
      this.found.set(key, hit);
    }
    return hit;
  }

  private async readTargets(targets: vscode.Uri[], dump: vscode.Uri | null, where: string): Promise<FoundFiles> {
    const files: NodeFileText[] = [];
    for (const target of targets) {
      let stat: vscode.FileStat;
      try {
        stat = await vscode.workspace.fs.stat(target);
      } catch {
        if (!dump) this.log(`packetlens.node.contextFiles: ${target.toString()} cannot be read`);
        continue;
      }
      const isDir = (stat.type & vscode.FileType.Directory) !== 0;
      const folder = isDir ? target : vscode.Uri.joinPath(target, '..');
      this.watch(folder);
      let names: string[];
      if (isDir) {
        const entries = await vscode.workspace.fs.readDirectory(folder);
        const sized = await Promise.all(
          entries.map(async ([name, type]) => {
            const isFile = (type & vscode.FileType.File) !== 0;
            const size = isFile
              ? await vscode.workspace.fs.stat(vscode.Uri.joinPath(folder, name)).then(
                  s => s.size,
                  () => Infinity,
                )
              : 0;
            return { name, isFile, size };
          }),
        );
        names = nodeFileCandidates(
          sized,
          dump && dump.toString().startsWith(folder.toString()) ? fileName(dump) : null,
        );
      } else names = [target.path.slice(target.path.lastIndexOf('/') + 1)];
      for (const name of names) {
        const u = vscode.Uri.joinPath(folder, name);
        try {
          const bytes = await vscode.workspace.fs.readFile(u);
          files.push({ file: vscode.workspace.asRelativePath(u, false), text: new TextDecoder('utf-8').decode(bytes) });
        } catch (e) {
          this.log(`reading ${u.toString()} failed: ${String(e)}`);
        }
      }
    }
    return { files, where };
  }

  /** Files changing in a folder the node's files were read from: read them again, re-run open traces. */
  private watch(folder: vscode.Uri): void {
    const key = folder.toString();
    if (this.watchers.has(key)) return;
    const w = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(folder, '*'));
    const changed = () => this.filesChanged(`a file in ${key} changed`);
    w.onDidChange(changed);
    w.onDidCreate(changed);
    w.onDidDelete(changed);
    this.watchers.set(key, w);
  }

  /** Forgets the files read and what they said: the status item and open traces follow. */
  filesChanged(why: string): void {
    this.log(`node files: ${why}: reading them again`);
    this.found.clear();
    this.hints = new WeakMap();
    this.emitter.fire();
  }

  /** The Node object of the manifests beside the dump whose name is in the dump's file name (or the only one). */
  private async manifestNode(uri: vscode.Uri): Promise<readonly InferredAddress[]> {
    if (uri.scheme === 'untitled' || !vscode.workspace.getWorkspaceFolder(uri)) return [];
    const view = await this.manifests.view(await this.manifests.clusterOf(uri));
    if (view.summary.nodes.length === 0) return [];
    return view.ask('kubeDumpNode', { fileName: fileName(uri) });
  }

  /** For a Kubernetes manifest: its cluster's nodes (name and addresses), or null for other documents. */
  async manifestNodes(doc: vscode.TextDocument): Promise<{ name: string; ips: readonly string[] }[] | null> {
    if (!this.manifests.isKubernetes(doc)) return null;
    const view = await this.manifests.viewFor(doc);
    return view.summary.nodes.map(n => ({ name: n.name, ips: n.ips }));
  }

  /** The layers for a file, most explicit first (node-context.ts says how they combine). */
  layers(uri: vscode.Uri, hints: NodeHints): NodeLayer[] {
    const chosen = this.choiceOf(uri);
    return [
      ...(chosen ? [choiceLayer(chosen.choice, scopeLabel(chosen.key, uri))] : []),
      settingsLayer(currentSettings(uri).node),
      ...(hints.files ? [filesLayer(hints.files.summary, hints.files.files, hints.files.where)] : []),
      inferredLayer(hints.fromManifests, hints.fromDump),
    ];
  }

  async contextFor(a: Analysis): Promise<NodeContext> {
    return resolveNodeContext(this.layers(a.uri, await this.hintsFor(a)));
  }

  /** The addresses worth offering in the quick pick. */
  async suggestions(a: Analysis): Promise<NodeSuggestion[]> {
    const h = await this.hintsFor(a);
    return nodeSuggestions(h.fromManifests, h.fromDump, h.clusterNodes);
  }

  /** What a trace or a comparison of the dump sends its worker: the node and the node's files. */
  async requestFor(a: Analysis): Promise<NodeRequest> {
    const ctx = await this.contextFor(a);
    return ctx.nodeFiles.length ? { node: ctx.node, nodeFiles: ctx.nodeFiles } : { node: ctx.node };
  }

  dispose(): void {
    this.emitter.dispose();
    for (const w of this.watchers.values()) w.dispose();
    this.watchers.clear();
  }
}

/** `this file` or `seed-003/` for the tooltip and messages. */
export function scopeLabel(key: string, uri: vscode.Uri): string {
  if (key === uri.toString()) return 'this file';
  const trimmed = key.endsWith('/') ? key.slice(0, -1) : key;
  return `${decodeURIComponent(trimmed.slice(trimmed.lastIndexOf('/') + 1))}/`;
}
