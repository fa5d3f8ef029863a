/**
 * The flow-diagram panel: one webview panel, reused for every trace, restored after a window reload by a
 * serializer (the webview keeps its UI state with `setState`; the trace is recomputed). Messages from the
 * webview are checked with the protocol's guards before anything acts on them.
 */
import * as vscode from 'vscode';
import { type DiagramModel, type ExtensionToWebview, type PacketFields, type TraceOrigin, isPanelState, isWebviewToExtension } from '../shared/protocol.ts';
import { VIEW_TYPE } from './commands.ts';
import { panelHtml, webviewRoot } from './panel-html.ts';

/** What the panel's messages do; `origin` says whether the drawn trace ran through a dump or from manifests. */
export interface PanelHandlers {
  reveal(uri: vscode.Uri, line: number): void;
  retrace(uri: vscode.Uri, fields: PacketFields, origin: TraceOrigin): void;
  restore(uri: vscode.Uri, packet: string, origin: TraceOrigin): void;
  openSettings(): void;
}

export class DiagramPanel implements vscode.Disposable, vscode.WebviewPanelSerializer {
  private panel: vscode.WebviewPanel | null = null;
  private uri: vscode.Uri | null = null;
  private origin: TraceOrigin = 'dump';
  /** The last message, sent again when the webview (re)loads and says it is ready. */
  private last: ExtensionToWebview | null = null;
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly handlers: PanelHandlers,
  ) {}

  get visibleFor(): vscode.Uri | null {
    return this.panel ? this.uri : null;
  }

  /** Draws a trace; `uri` is the dump its rule lines are in (for a trace from manifests: the node's synthesized rules). */
  show(model: DiagramModel, uri: vscode.Uri, focus: boolean, origin: TraceOrigin): void {
    if (!this.panel) {
      const panel = vscode.window.createWebviewPanel(VIEW_TYPE, 'Packet Flow', { viewColumn: vscode.ViewColumn.Beside, preserveFocus: !focus }, this.options());
      this.attach(panel);
    } else if (!this.panel.visible) this.panel.reveal(undefined, !focus);
    this.uri = uri;
    this.origin = origin;
    this.panel!.title = `Packet Flow: ${model.title}`;
    this.post({ type: 'model', model, uri: uri.toString(), origin });
  }

  error(message: string): void {
    this.post({ type: 'error', message });
  }

  async deserializeWebviewPanel(panel: vscode.WebviewPanel, state: unknown): Promise<void> {
    panel.webview.options = this.options();
    this.attach(panel);
    if (isPanelState(state)) {
      this.uri = vscode.Uri.parse(state.uri);
      this.origin = state.origin ?? 'dump';
      this.handlers.restore(this.uri, state.packet, this.origin);
    } else this.post({ type: 'error', message: 'Run "Packet Lens: Trace Packet…" to draw a trace here.' });
  }

  private options(): vscode.WebviewPanelOptions & vscode.WebviewOptions {
    return { enableScripts: true, localResourceRoots: [webviewRoot(this.extensionUri)], retainContextWhenHidden: false };
  }

  private attach(panel: vscode.WebviewPanel): void {
    this.panel?.dispose();
    this.panel = panel;
    panel.iconPath = vscode.Uri.joinPath(this.extensionUri, 'dist', 'icons', 'matched.svg');
    panel.webview.html = panelHtml(panel.webview, this.extensionUri);
    this.subscriptions.push(
      panel.onDidDispose(() => {
        if (this.panel === panel) {
          this.panel = null;
          this.uri = null;
          this.last = null;
        }
      }),
      panel.webview.onDidReceiveMessage((m: unknown) => {
        if (!isWebviewToExtension(m)) return;
        if (m.type === 'ready') {
          if (this.last) void panel.webview.postMessage(this.last);
          return;
        }
        if (!this.uri) return;
        if (m.type === 'reveal') this.handlers.reveal(this.uri, m.line);
        else if (m.type === 'retrace') this.handlers.retrace(this.uri, m.fields, this.origin);
        else if (m.type === 'openSettings') this.handlers.openSettings();
      }),
    );
  }

  private post(message: ExtensionToWebview): void {
    this.last = message;
    void this.panel?.webview.postMessage(message);
  }

  dispose(): void {
    this.panel?.dispose();
    for (const s of this.subscriptions) s.dispose();
  }
}
