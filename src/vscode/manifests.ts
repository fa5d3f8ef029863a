/**
 * The extension point for Kubernetes manifests. The manifest model (src/engine/kube) is being written;
 * when it lands, it supplies a `ManifestFeatures` here: YAML providers (Service hovers, CodeLens per
 * Service port) and "Show kube-proxy Rules for Node…", which opens the synthesized dump through
 * `VirtualDumps` so every dump feature applies to it. Until then the command says so.
 */
import * as vscode from 'vscode';
import type { Settings } from '../editor/settings.ts';
import type { VirtualDumps } from './virtual-dumps.ts';

export interface ManifestHost {
  readonly virtualDumps: VirtualDumps;
  readonly settings: () => Settings;
  /** Traces a packet through a dump (a file or a virtual document), as the Trace Packet command does. */
  trace(uri: vscode.Uri, packet?: string): Promise<void>;
}

export interface ManifestFeatures {
  /** Registers the YAML providers; every returned disposable is disposed with the extension. */
  register(host: ManifestHost): vscode.Disposable[];
  /** "Packet Lens: Show kube-proxy Rules for Node…". */
  showKubeProxyRules(host: ManifestHost): Promise<void>;
}

export const MANIFEST_SUPPORT_PENDING =
  'Packet Lens: kube-proxy rules from Kubernetes manifests are coming with the manifest model (Service hovers and CodeLens in YAML, "Show kube-proxy Rules for Node…"). Today you can trace packets through a node\'s iptables-save dump: open it and run "Packet Lens: Trace Packet…".';

export class ManifestRegistry implements vscode.Disposable {
  private features: ManifestFeatures | null = null;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly host: ManifestHost) {}

  /** Installs the manifest features (once); their providers live until the extension is deactivated. */
  provide(features: ManifestFeatures): void {
    if (this.features) throw new Error('manifest features are already registered');
    this.features = features;
    this.disposables.push(...features.register(this.host));
  }

  async showKubeProxyRules(): Promise<void> {
    if (!this.features) {
      void vscode.window.showInformationMessage(MANIFEST_SUPPORT_PENDING);
      return;
    }
    await this.features.showKubeProxyRules(this.host);
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
