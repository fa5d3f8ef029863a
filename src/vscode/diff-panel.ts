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
}

export class DiffPanel extends PanelHost implements vscode.WebviewPanelSerializer {
  constructor(
    extensionUri: vscode.Uri,
    private readonly handlers: DiffPanelHandlers,
  ) {
    super(extensionUri, DIFF_VIEW_TYPE, 'Packet Behaviour');
  }

  show(model: DiffViewModel, state: DiffPanelState): void {
    this.ensure(true).title = `Packet Behaviour: ${model.oldLabel} → ${model.newLabel}`;
    this.post({ type: 'diff', model, state });
  }

  busy(message: string): void {
    this.ensure(true);
    this.post({ type: 'busy', message });
  }

  async deserializeWebviewPanel(panel: vscode.WebviewPanel, state: unknown): Promise<void> {
    this.adopt(panel);
    if (isDiffPanelState(state)) this.handlers.restore(state);
    else this.error('Run "Packet Lens: Compare Packet Behaviour" to compare two dumps here.');
  }

  protected onMessage(m: Exclude<WebviewToExtension, { type: 'ready' }>): void {
    if (m.type === 'traceClass') this.handlers.trace(m.side, m.change);
    else if (m.type === 'revealRule') this.handlers.reveal(m.side, m.line);
  }
}
