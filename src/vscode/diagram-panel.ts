/**
 * The flow-diagram panel: one webview panel, reused for every trace, restored after a window reload by a
 * serializer (the webview keeps its UI state with `setState`; the trace is recomputed). Messages from the
 * webview are checked with the protocol's guards before anything acts on them.
 */
import * as vscode from 'vscode';
import {
  type DiagramModel,
  type PacketFields,
  type TraceOrigin,
  type WebviewToExtension,
  isPanelState,
} from '../shared/protocol.ts';
import { VIEW_TYPE } from './commands.ts';
import { PanelHost } from './panel-host.ts';

/** What the panel's messages do; `origin` says whether the drawn trace ran through a dump or from manifests. */
export interface PanelHandlers {
  reveal(uri: vscode.Uri, line: number): void;
  retrace(uri: vscode.Uri, fields: PacketFields, origin: TraceOrigin): void;
  restore(uri: vscode.Uri, packet: string, origin: TraceOrigin): void;
  openSettings(): void;
}

export class DiagramPanel extends PanelHost implements vscode.WebviewPanelSerializer {
  private uri: vscode.Uri | null = null;
  /** Who waits for the webview to say it drew a packet's diagram. */
  private drawnWaiters: { packet: string; resolve(): void }[] = [];
  private origin: TraceOrigin = 'dump';

  constructor(
    extensionUri: vscode.Uri,
    private readonly handlers: PanelHandlers,
  ) {
    super(extensionUri, VIEW_TYPE, 'Packet Flow');
  }

  get visibleFor(): vscode.Uri | null {
    return this.panel ? this.uri : null;
  }

  /**
   * Opens the panel with `message` before a trace's answer, when it shows no trace yet: creating a webview
   * and loading its script takes the browser hundreds of milliseconds, which then overlap the user typing
   * the packet and the trace. Returns whether the panel shows `message` (then the caller's answer follows).
   */
  openFor(message: string, focus: boolean): boolean {
    if (this.panel && this.uri) return false;
    this.ensure(focus);
    this.post({ type: 'busy', message });
    return true;
  }

  /** Closes the panel if it shows no trace (it was opened for a packet that was not given). */
  closeUnused(): void {
    if (this.panel && !this.uri) this.panel.dispose();
  }

  /** Draws a trace; `uri` is the dump its rule lines are in (for a trace from manifests: the node's synthesized rules). */
  show(model: DiagramModel, uri: vscode.Uri, focus: boolean, origin: TraceOrigin): void {
    const panel = this.ensure(focus);
    this.uri = uri;
    this.origin = origin;
    panel.title = `Packet Flow: ${model.title}`;
    this.post({ type: 'model', model, uri: uri.toString(), origin });
  }

  /**
   * Resolves when the webview says it drew `packet`'s diagram, or after `ms` (a hidden webview draws
   * nothing), or when the panel closes.
   */
  drawn(packet: string, ms: number): Promise<void> {
    return new Promise(resolve => {
      const w = { packet, resolve: () => done() };
      const timer = setTimeout(() => done(), ms);
      const done = () => {
        clearTimeout(timer);
        this.drawnWaiters = this.drawnWaiters.filter(x => x !== w);
        resolve();
      };
      this.drawnWaiters.push(w);
    });
  }

  async deserializeWebviewPanel(panel: vscode.WebviewPanel, state: unknown): Promise<void> {
    this.adopt(panel);
    if (isPanelState(state)) {
      this.uri = vscode.Uri.parse(state.uri);
      this.origin = state.origin ?? 'dump';
      this.handlers.restore(this.uri, state.packet, this.origin);
    } else this.error('Run "Packet Lens: Trace Packet…" to draw a trace here.');
  }

  protected override onClosed(): void {
    this.uri = null;
    for (const w of this.drawnWaiters.slice()) w.resolve();
  }

  protected onMessage(m: Exclude<WebviewToExtension, { type: 'ready' }>): void {
    if (m.type === 'drawn') {
      for (const w of this.drawnWaiters.filter(x => x.packet === m.packet)) w.resolve();
      return;
    }
    if (!this.uri) return;
    if (m.type === 'reveal') this.handlers.reveal(this.uri, m.line);
    else if (m.type === 'retrace') this.handlers.retrace(this.uri, m.fields, this.origin);
    else if (m.type === 'openSettings') this.handlers.openSettings();
    else if (m.type === 'export') void this.saveExport(m.format, m.data);
  }

  /** Saves the graph the webview exported (it has no file system), next to the dump by default. */
  private async saveExport(format: 'svg' | 'png', data: string): Promise<void> {
    const uri = this.uri;
    const defaultUri =
      uri && uri.scheme === 'file'
        ? uri.with({ path: `${uri.path.replace(/\.[^./]*$/, '')}-flow.${format}` })
        : undefined;
    const target = await vscode.window.showSaveDialog({
      defaultUri,
      filters: format === 'svg' ? { 'SVG image': ['svg'] } : { 'PNG image': ['png'] },
      title: `Packet Lens: Export the flow graph as ${format.toUpperCase()}`,
    });
    if (!target) return;
    const bytes = format === 'svg' ? new TextEncoder().encode(data) : base64Bytes(data);
    await vscode.workspace.fs.writeFile(target, bytes);
  }
}

/** Base64 to bytes without Node's Buffer (the web extension has none). */
function base64Bytes(b64: string): Uint8Array {
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}
