/**
 * The Problems panel for Kubernetes manifests: what reading the manifests and building the cluster model
 * found (a Service with `port: "eighty"`, a YAML error, an alias bomb), published per file each time a
 * cluster's view is built, like a dump's diagnostics. A file that no longer has problems is cleared.
 */
import * as vscode from 'vscode';
import type { FileDiagnostic } from '../engine/api.ts';
import { toDiagnostic } from './convert.ts';

export class ManifestDiagnostics implements vscode.Disposable {
  private readonly collection = vscode.languages.createDiagnosticCollection('packetlens-manifests');
  /** The files each cluster (by root) published problems for. */
  private readonly published = new Map<string, Set<string>>();

  constructor(private readonly maxPerFile: () => number) {}

  /** A cluster's view was built from `files` (URI strings) and found `diagnostics`. */
  publish(cluster: string, files: readonly string[], diagnostics: readonly FileDiagnostic[]): void {
    const byFile = new Map<string, FileDiagnostic[]>();
    for (const d of diagnostics) {
      let list = byFile.get(d.file);
      if (!list) byFile.set(d.file, (list = []));
      list.push(d);
    }
    const before = this.published.get(cluster) ?? new Set<string>();
    const now = new Set<string>();
    const max = this.maxPerFile();
    for (const file of new Set([...before, ...files, ...byFile.keys()])) {
      let uri: vscode.Uri;
      try {
        uri = vscode.Uri.parse(file, true);
      } catch {
        continue; // not a URI: nothing to show it on
      }
      const list = byFile.get(file) ?? [];
      if (list.length) now.add(file);
      this.collection.set(
        uri,
        list.slice(0, max).map(d => toDiagnostic(uri, { ...d, unnecessary: false, related: [] })),
      );
    }
    this.published.set(cluster, now);
  }

  /** A manifest document was closed with no cluster left to speak for it. */
  clear(): void {
    this.collection.clear();
    this.published.clear();
  }

  dispose(): void {
    this.collection.dispose();
  }
}
