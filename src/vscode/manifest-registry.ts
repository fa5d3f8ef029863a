/**
 * The extension point for Kubernetes manifests. A `ManifestFeatures` (kube-manifests.ts) supplies the YAML
 * providers (Service hovers, CodeLens per Service port), "Show kube-proxy Rules for Node…" (the synthesized
 * dump through `VirtualDumps`, so every dump feature applies to it) and end-to-end traces from manifests;
 * until one is provided, the command says what is missing.
 */
import * as vscode from 'vscode';
import type { Settings } from '../editor/settings.ts';
import type { DiagramModel, PacketFields, TraceOrigin } from '../shared/protocol.ts';
import type { VirtualDumps } from './virtual-dumps.ts';

export interface ManifestHost {
  readonly virtualDumps: VirtualDumps;
  readonly settings: () => Settings;
  /** Where the packet history lives (shared with traces through dumps). */
  readonly memento: vscode.Memento;
  /** Traces a packet through a dump (a file or a virtual document), as the Trace Packet command does. */
  trace(uri: vscode.Uri, packet?: string): Promise<void>;
  /** Draws a trace in the flow-diagram panel; `uri` is the dump its rule lines are in. */
  showDiagram(model: DiagramModel, uri: vscode.Uri, origin: TraceOrigin): void;
  /** Shows a message in the flow-diagram panel, if it is open. */
  panelError(message: string): void;
  log(message: string): void;
}

export interface ManifestFeatures {
  /** Registers the YAML providers; every returned disposable is disposed with the extension. */
  register(host: ManifestHost): vscode.Disposable[];
  /** "Packet Lens: Show kube-proxy Rules for Node…". */
  showKubeProxyRules(host: ManifestHost): Promise<void>;
  /** Whether "Trace Packet…" given this argument (or none, on the active editor) traces manifests. */
  handlesTrace(arg: unknown): boolean;
  /** "Packet Lens: Trace Packet…" on manifests: end to end, client → node → pod. */
  traceCommand(host: ManifestHost, arg: unknown): Promise<void>;
  /** The diagram panel's packet form (or a restored panel) on an end-to-end trace. */
  retrace(host: ManifestHost, uri: vscode.Uri, fields: PacketFields | string): Promise<void>;
}

export const MANIFEST_SUPPORT_PENDING =
  'Packet Lens: kube-proxy rules from Kubernetes manifests are not available in this build. Trace packets through a node\'s iptables-save dump instead: open it and run "Packet Lens: Trace Packet…".';

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

  handlesTrace(arg: unknown): boolean {
    return this.features?.handlesTrace(arg) ?? false;
  }

  async traceCommand(arg: unknown): Promise<void> {
    await this.features?.traceCommand(this.host, arg);
  }

  async retrace(uri: vscode.Uri, fields: PacketFields | string): Promise<void> {
    if (this.features) await this.features.retrace(this.host, uri, fields);
    else this.host.panelError(MANIFEST_SUPPORT_PENDING);
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
