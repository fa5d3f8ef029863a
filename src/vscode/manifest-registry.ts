/**
 * The extension point for Kubernetes manifests. A `ManifestFeatures` (kube-manifests.ts) supplies the YAML
 * providers (Service hovers, CodeLens per Service port), "Show kube-proxy Rules for Node…" (the synthesized
 * dump through `VirtualDumps`, so every dump feature applies to it) and end-to-end traces from manifests.
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

/** The manifest features the composition root installs (kube-manifests.ts), with the host they serve. */
export class ManifestRegistry implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[];

  /** Registers the features' providers; they live until the extension is deactivated. */
  constructor(
    private readonly host: ManifestHost,
    private readonly features: ManifestFeatures,
  ) {
    this.disposables = features.register(host);
  }

  showKubeProxyRules(): Promise<void> {
    return this.features.showKubeProxyRules(this.host);
  }

  handlesTrace(arg: unknown): boolean {
    return this.features.handlesTrace(arg);
  }

  traceCommand(arg: unknown): Promise<void> {
    return this.features.traceCommand(this.host, arg);
  }

  retrace(uri: vscode.Uri, fields: PacketFields | string): Promise<void> {
    return this.features.retrace(this.host, uri, fields);
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
