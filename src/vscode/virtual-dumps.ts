/**
 * Read-only virtual documents holding dumps that exist only in memory (kube-proxy's rules synthesized for
 * a node from manifests). Their names end in `.rules`, so they get the iptables-save language and every
 * dump feature (outline, hovers, CodeLens, diagnostics, tracing).
 */
import * as vscode from 'vscode';

export const VIRTUAL_SCHEME = 'packetlens-dump';

export class VirtualDumps implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly texts = new Map<string, string>();
  private readonly emitter = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.emitter.event;

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? '';
  }

  /** Shows `text` as the read-only document `packetlens-dump:/<name>.rules`. */
  async open(name: string, text: string): Promise<vscode.TextEditor> {
    const safe = name.replace(/[^A-Za-z0-9._-]+/g, '-');
    const uri = vscode.Uri.from({ scheme: VIRTUAL_SCHEME, path: `/${safe.endsWith('.rules') ? safe : `${safe}.rules`}` });
    this.texts.set(uri.toString(), text);
    this.emitter.fire(uri);
    const doc = await vscode.workspace.openTextDocument(uri);
    return vscode.window.showTextDocument(doc, { preview: false });
  }

  dispose(): void {
    this.texts.clear();
    this.emitter.dispose();
  }
}
