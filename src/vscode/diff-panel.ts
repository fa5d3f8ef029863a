/**
 * The behaviour-comparison panel: one webview panel for the report of the last comparison, built on the
 * flow diagram's infrastructure (the same webview bundle, HTML shell and strict CSP, the same protocol),
 * restored after a reload by a serializer that compares the two dumps again. Messages from the webview are
 * checked with the protocol's guards before anything acts on them.
 */
import * as vscode from 'vscode';
import {
  type DiffPanelState,
  type DiffViewModel,
  type WebviewToExtension,
  isDiffPanelState,
} from '../shared/protocol.ts';
import { DIFF_VIEW_TYPE } from './commands.ts';
import { PanelHost } from './panel-host.ts';

export interface DiffPanelHandlers {
  /** Trace change `change`'s packet on one side. */
  trace(side: 'old' | 'new', change: number): void;
  reveal(side: 'old' | 'new', line: number): void;
  /** A panel restored after a reload: compare its two dumps again. */
  restore(state: DiffPanelState): void;
  /** "Copy as Markdown": the report as the CLI's `--markdown`, on the clipboard. */
  copyMarkdown(): void;
}

export class DiffPanel extends PanelHost implements vscode.WebviewPanelSerializer {
  constructor(
    extensionUri: vscode.Uri,
    private readonly handlers: DiffPanelHandlers,
  ) {
    super(extensionUri, DIFF_VIEW_TYPE, 'Packet Behaviour');
  }

  /**
   * Shows the report. `below`: the comparison came from a diff editor, so the panel opens in an editor group
   * of its own below it instead of beside it, where it would halve the diff's two sides.
   */
  show(model: DiffViewModel, state: DiffPanelState, below = false): void {
    this.post({ type: 'diff', model, state });
    void this.place(below).then(p => (p.title = `Packet Behaviour: ${model.oldLabel} → ${model.newLabel}`));
  }

  busy(message: string, below = false): void {
    this.post({ type: 'busy', message });
    void this.place(below);
  }

  private place(below: boolean): Promise<vscode.WebviewPanel> {
    return below ? this.ensureBelow(true) : Promise.resolve(this.ensure(true));
  }

  async deserializeWebviewPanel(panel: vscode.WebviewPanel, state: unknown): Promise<void> {
    this.adopt(panel);
    if (isDiffPanelState(state)) this.handlers.restore(state);
    else this.error('Run "Packet Lens: Compare Packet Behaviour" to compare two dumps here.');
  }

  protected onMessage(m: Exclude<WebviewToExtension, { type: 'ready' }>): void {
    if (m.type === 'traceClass') this.handlers.trace(m.side, m.change);
    else if (m.type === 'revealRule') this.handlers.reveal(m.side, m.line);
    else if (m.type === 'copyMarkdown') this.handlers.copyMarkdown();
  }
}
