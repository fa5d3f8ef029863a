/**
 * The node context of each dump (src/editor/node-context.ts decides; this file gathers its sources): the
 * user's choices per file or folder in workspace state, the resource-scoped settings, the Node object of
 * the manifests beside the dump, and what the dump implies (asked of its engine worker).
 */
import * as vscode from 'vscode';
import { type InferredAddress, dumpNode } from '../engine/api.ts';
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
import { type Analysis, fileName } from './dump-store.ts';
import type { ManifestWorkspace } from './manifest-workspace.ts';
import { currentSettings } from './settings.ts';

const CHOICES_KEY = 'packetlens.nodeChoices';

/** What the files say about a dump's node. */
export interface NodeHints {
  readonly fromManifests: readonly InferredAddress[];
  readonly fromDump: readonly InferredAddress[];
  readonly clusterNodes: readonly NodeSuggestion[];
}

const NO_HINTS: NodeHints = { fromManifests: [], fromDump: [], clusterNodes: [] };

export class NodeContexts implements vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<void>();
  /** Fires when a choice changed: the status item and open traces follow. */
  readonly onDidChange = this.emitter.event;
  private readonly hints = new WeakMap<Analysis, Promise<NodeHints>>();

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
    const [fromWorker, fromManifests] = await Promise.all([
      a.ask('nodeHints', {}).catch(() => ({ inferred: [], clusterNodes: [] })),
      this.manifestNode(a.uri),
    ]);
    return {
      fromManifests,
      fromDump: fromWorker.inferred,
      clusterNodes: fromWorker.clusterNodes.map(n => ({
        address: n.address,
        from: n.from,
        why: 'an API server endpoint of default/kubernetes: a node of this cluster, perhaps this one',
      })),
    };
  }

  /** The Node object of the manifests beside the dump whose name is in the dump's file name (or the only one). */
  private async manifestNode(uri: vscode.Uri): Promise<readonly InferredAddress[]> {
    if (uri.scheme === 'untitled' || !vscode.workspace.getWorkspaceFolder(uri)) return [];
    const view = await this.manifests.view(await this.manifests.clusterOf(uri));
    if (view.model.nodes.length === 0) return [];
    return dumpNode(view.set, view.model, fileName(uri))?.inferred ?? [];
  }

  /** For a Kubernetes manifest: its cluster's nodes (name and addresses), or null for other documents. */
  async manifestNodes(doc: vscode.TextDocument): Promise<{ name: string; ips: readonly string[] }[] | null> {
    if (!this.manifests.isKubernetes(doc)) return null;
    const view = await this.manifests.viewFor(doc);
    return view.model.nodes.map(n => ({ name: n.name, ips: n.ips }));
  }

  /** The layers for a file, most explicit first (node-context.ts says how they combine). */
  layers(uri: vscode.Uri, hints: NodeHints): NodeLayer[] {
    const chosen = this.choiceOf(uri);
    return [
      ...(chosen ? [choiceLayer(chosen.choice, scopeLabel(chosen.key, uri))] : []),
      settingsLayer(currentSettings(uri).node),
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

  dispose(): void {
    this.emitter.dispose();
  }
}

/** `this file` or `seed-003/` for the tooltip and messages. */
export function scopeLabel(key: string, uri: vscode.Uri): string {
  if (key === uri.toString()) return 'this file';
  const trimmed = key.endsWith('/') ? key.slice(0, -1) : key;
  return `${decodeURIComponent(trimmed.slice(trimmed.lastIndexOf('/') + 1))}/`;
}
