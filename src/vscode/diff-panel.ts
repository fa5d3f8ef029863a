/**
 * The behaviour-comparison panel: one webview panel for the report of the last comparison, built on the
 * flow diagram's infrastructure (the same webview bundle, HTML shell and strict CSP, the same protocol),
 * restored after a reload by a serializer that compares the two dumps again. Messages from the webview are
 * checked with the protocol's guards before anything acts on them.
 */
import * as vscode from 'vscode';
import { type DiffPanelState, type DiffViewModel, type ExtensionToWebview, isDiffPanelState, isWebviewToExtension } from '../shared/protocol.ts';
import { DIFF_VIEW_TYPE } from './commands.ts';
import { panelHtml, webviewRoot } from './panel-html.ts';

export interface DiffPanelHandlers {
  /** Trace change `change`'s packet on one side. */
  trace(side: 'old' | 'new', change: number): void;
  reveal(side: 'old' | 'new', line: number): void;
  /** A panel restored after a reload: compare its two dumps again. */
  restore(state: DiffPanelState): void;
}

export class DiffPanel implements vscode.Disposable, vscode.WebviewPanelSerializer {
  private panel: vscode.WebviewPanel | null = null;
  private last: ExtensionToWebview | null = null;
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly handlers: DiffPanelHandlers,
  ) {}

  show(model: DiffViewModel, state: DiffPanelState): void {
    this.ensure();
    this.panel!.title = `Packet Behaviour: ${model.oldLabel} → ${model.newLabel}`;
    this.post({ type: 'diff', model, state });
  }

  busy(message: string): void {
    this.ensure();
    this.post({ type: 'busy', message });
  }

  error(message: string): void {
    this.post({ type: 'error', message });
  }

  async deserializeWebviewPanel(panel: vscode.WebviewPanel, state: unknown): Promise<void> {
    panel.webview.options = this.options();
    this.attach(panel);
    if (isDiffPanelState(state)) this.handlers.restore(state);
    else this.post({ type: 'error', message: 'Run "Packet Lens: Compare Packet Behaviour" to compare two dumps here.' });
  }

  private ensure(): void {
    if (!this.panel) this.attach(vscode.window.createWebviewPanel(DIFF_VIEW_TYPE, 'Packet Behaviour', { viewColumn: vscode.ViewColumn.Beside, preserveFocus: false }, this.options()));
    else if (!this.panel.visible) this.panel.reveal();
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
          this.last = null;
        }
      }),
      panel.webview.onDidReceiveMessage((m: unknown) => {
        if (!isWebviewToExtension(m)) return;
        if (m.type === 'ready') {
          if (this.last) void panel.webview.postMessage(this.last);
        } else if (m.type === 'traceClass') this.handlers.trace(m.side, m.change);
        else if (m.type === 'revealRule') this.handlers.reveal(m.side, m.line);
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
