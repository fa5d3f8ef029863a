/**
 * What the flow-diagram panel and the behaviour-comparison panel share: one webview panel at a time, the
 * strict-CSP HTML shell, the protocol's guard on every message from the webview, and the last message kept
 * so a webview that (re)loads and says it is ready gets it again.
 */
import * as vscode from 'vscode';
import { type ExtensionToWebview, type WebviewToExtension, isWebviewToExtension } from '../shared/protocol.ts';
import { panelHtml, webviewRoot } from './panel-html.ts';

export abstract class PanelHost implements vscode.Disposable {
  protected panel: vscode.WebviewPanel | null = null;
  private last: ExtensionToWebview | null = null;
  /** The listeners of the current panel only: released when it closes or is replaced. */
  private listeners: vscode.Disposable[] = [];

  constructor(
    protected readonly extensionUri: vscode.Uri,
    private readonly viewType: string,
    private readonly initialTitle: string,
  ) {}

  error(message: string): void {
    this.post({ type: 'error', message });
  }

  /** Handles a checked message other than `ready`. */
  protected abstract onMessage(message: Exclude<WebviewToExtension, { type: 'ready' }>): void;

  /** Called when the user closes the panel. */
  protected onClosed(): void {}

  /** Opens the panel beside the editor, or reveals it if it is hidden. */
  protected ensure(focus: boolean): vscode.WebviewPanel {
    if (!this.panel) return this.create(vscode.ViewColumn.Beside, focus);
    if (!this.panel.visible) this.panel.reveal(undefined, !focus);
    return this.panel;
  }

  private opening: Promise<vscode.WebviewPanel> | null = null;

  /**
   * Opens the panel in a new editor group below the active one (a diff editor keeps its full width), or
   * reveals it where it already is. Concurrent calls share one new group.
   */
  protected ensureBelow(focus: boolean): Promise<vscode.WebviewPanel> {
    if (this.panel) return Promise.resolve(this.ensure(focus));
    this.opening ??= Promise.resolve(vscode.commands.executeCommand('workbench.action.newGroupBelow'))
      .then(
        () => this.panel ?? this.create(vscode.ViewColumn.Active, focus),
        () => this.panel ?? this.create(vscode.ViewColumn.Beside, focus),
      )
      .finally(() => (this.opening = null));
    return this.opening;
  }

  private create(column: vscode.ViewColumn, focus: boolean): vscode.WebviewPanel {
    const panel = vscode.window.createWebviewPanel(
      this.viewType,
      this.initialTitle,
      { viewColumn: column, preserveFocus: !focus },
      this.options(),
    );
    this.attach(panel);
    return panel;
  }

  /** Adopts a panel VS Code restored after a reload. */
  protected adopt(panel: vscode.WebviewPanel): void {
    panel.webview.options = this.options();
    this.attach(panel);
  }

  protected post(message: ExtensionToWebview): void {
    this.last = message;
    void this.panel?.webview.postMessage(message);
  }

  private options(): vscode.WebviewPanelOptions & vscode.WebviewOptions {
    return {
      enableScripts: true,
      localResourceRoots: [webviewRoot(this.extensionUri)],
      retainContextWhenHidden: false,
    };
  }

  private attach(panel: vscode.WebviewPanel): void {
    this.panel?.dispose();
    this.release();
    this.panel = panel;
    panel.iconPath = vscode.Uri.joinPath(this.extensionUri, 'dist', 'icons', 'matched.svg');
    panel.webview.html = panelHtml(panel.webview, this.extensionUri);
    this.listeners = [
      panel.onDidDispose(() => {
        if (this.panel !== panel) return;
        this.release();
        this.panel = null;
        this.last = null;
        this.onClosed();
      }),
      panel.webview.onDidReceiveMessage((m: unknown) => {
        if (!isWebviewToExtension(m)) return;
        if (m.type === 'ready') {
          if (this.last) void panel.webview.postMessage(this.last);
        } else this.onMessage(m);
      }),
    ];
  }

  private release(): void {
    for (const l of this.listeners) l.dispose();
    this.listeners = [];
  }

  dispose(): void {
    this.panel?.dispose();
    this.release();
  }
}
