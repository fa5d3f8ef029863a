/**
 * Read-only virtual documents holding dumps that exist only in memory (kube-proxy's rules synthesized for
 * a node from manifests). Their names end in `.rules`, so they get the iptables-save language and every
 * dump feature (outline, hovers, CodeLens, diagnostics, tracing). A document VS Code asks for again after a
 * reload, or after its manifests changed, is made again by the resolver its URI's query names.
 */
import * as vscode from 'vscode';

export const VIRTUAL_SCHEME = 'packetlens-dump';

export type VirtualResolver = (uri: vscode.Uri) => Promise<string | null>;

export class VirtualDumps implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly texts = new Map<string, string>();
  private readonly emitter = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.emitter.event;
  private resolver: VirtualResolver | null = null;

  /** Makes documents that are not in memory (a reload, a change of their source). */
  setResolver(resolver: VirtualResolver): void {
    this.resolver = resolver;
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const key = uri.toString();
    const known = this.texts.get(key);
    if (known !== undefined) return known;
    const made = this.resolver ? await this.resolver(uri) : null;
    if (made === null) return '';
    this.texts.set(key, made);
    return made;
  }

  /** `packetlens-dump:/<path>.rules?<query>` (or `.nft` when the path says so), path segments made safe. */
  uriFor(path: string, query = ''): vscode.Uri {
    const safe = path
      .split('/')
      .filter(Boolean)
      .map(s => s.replace(/[^A-Za-z0-9._-]+/g, '-'))
      .join('/');
    return vscode.Uri.from({
      scheme: VIRTUAL_SCHEME,
      path: `/${safe.endsWith('.rules') || safe.endsWith('.nft') ? safe : `${safe}.rules`}`,
      query,
    });
  }

  /** Sets the text of `uri` without showing it (an open document updates). */
  set(uri: vscode.Uri, text: string): void {
    const key = uri.toString();
    if (this.texts.get(key) === text) return;
    this.texts.set(key, text);
    this.emitter.fire(uri);
  }

  /** Forgets the texts `which` selects: open ones are made again by the resolver. */
  invalidate(which: (uri: vscode.Uri) => boolean): void {
    for (const key of [...this.texts.keys()]) {
      const uri = vscode.Uri.parse(key);
      if (!which(uri)) continue;
      this.texts.delete(key);
      this.emitter.fire(uri);
    }
  }

  async show(uri: vscode.Uri, text: string): Promise<vscode.TextEditor> {
    this.set(uri, text);
    const doc = await vscode.workspace.openTextDocument(uri);
    return vscode.window.showTextDocument(doc, { preview: false });
  }

  /** Shows `text` as the read-only document `packetlens-dump:/<name>.rules`. */
  async open(name: string, text: string): Promise<vscode.TextEditor> {
    return this.show(this.uriFor(name.replace(/\//g, '-')), text);
  }

  dispose(): void {
    this.texts.clear();
    this.emitter.dispose();
  }
}
