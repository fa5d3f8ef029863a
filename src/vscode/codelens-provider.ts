/**
 * CodeLens on dumps: above each chain ("referenced by N", "▶ Trace from here") and, after a trace, on
 * every rule it evaluated ("✓ matched · step 4 · 50%", "✗ --dport 443 ≠ 80"). Lenses are created with
 * their ranges only; VS Code resolves the visible ones, so a dump of 100k chains stays cheap.
 */
import * as vscode from 'vscode';
import { type ChainLens, TRACE_FROM_HERE_TITLE, chainLenses, referencesTitle } from '../editor/chain-lens.ts';
import { lensTitle } from '../editor/trace-lens.ts';
import { lineStart, toLocation, toRange } from './convert.ts';
import type { DumpStore } from './dump-store.ts';
import type { TraceSessions } from './trace-sessions.ts';
import { COMMANDS } from './commands.ts';

class ChainCodeLens extends vscode.CodeLens {
  constructor(
    range: vscode.Range,
    readonly lens: ChainLens,
    readonly part: 'refs' | 'trace',
    readonly doc: vscode.TextDocument,
  ) {
    super(range);
  }
}

export class DumpCodeLens implements vscode.CodeLensProvider<vscode.CodeLens> {
  private readonly emitter = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.emitter.event;

  constructor(
    private readonly store: DumpStore,
    private readonly sessions: TraceSessions,
    private readonly enabled: () => { chains: boolean; maxChains: number },
    private readonly log: (message: string) => void,
    /** The document is shown only in diff editors of two dumps: there its CodeLens is the behaviour summary alone. */
    private readonly onlyInDumpDiff: (uri: vscode.Uri) => boolean = () => false,
  ) {}

  refresh(): void {
    this.emitter.fire();
  }

  async provideCodeLenses(doc: vscode.TextDocument, token: vscode.CancellationToken): Promise<vscode.CodeLens[] | undefined> {
    const a = await this.store.get(doc);
    if (token.isCancellationRequested) return undefined;
    const t0 = performance.now();
    const out: vscode.CodeLens[] = [];
    const session = this.sessions.get(doc.uri);
    if (session && session.version === a.version) {
      const n = session.trace.outcomes.length;
      for (const v of session.verdicts.values()) {
        const title = lensTitle(v, n);
        if (title) out.push(new vscode.CodeLens(lineStart(v.line), { title, command: COMMANDS.showFlowDiagram, arguments: [doc.uri] }));
      }
    }
    const traceLenses = out.length;
    const { chains, maxChains } = this.enabled();
    if (chains && !this.onlyInDumpDiff(doc.uri)) {
      const lenses = chainLenses(a.index);
      if (lenses.length <= maxChains) {
        for (const l of lenses) {
          const r = toRange(l.range);
          out.push(new ChainCodeLens(r, l, 'refs', doc), new ChainCodeLens(r, l, 'trace', doc));
        }
      }
    }
    this.log(`CodeLens for ${doc.uri.toString()} v${doc.version}: ${traceLenses} from the trace${session ? ` (trace of v${session.version})` : ''}, ${out.length - traceLenses} on chains, in ${(performance.now() - t0).toFixed(1)} ms`);
    return out;
  }

  resolveCodeLens(lens: vscode.CodeLens): vscode.CodeLens {
    if (!(lens instanceof ChainCodeLens)) return lens;
    const l = lens.lens;
    if (lens.part === 'trace') {
      lens.command = { title: TRACE_FROM_HERE_TITLE, command: COMMANDS.tracePacket, arguments: [{ uri: lens.doc.uri.toString(), table: l.table, chain: l.chain }] };
      return lens;
    }
    const a = this.store.peek(lens.doc);
    const chain = a?.index.chain(l.table, l.chain);
    const title = referencesTitle(l, chain);
    lens.command = l.references.length
      ? {
          title,
          command: 'editor.action.showReferences',
          arguments: [lens.doc.uri, lens.range.start, l.references.map((r) => toLocation(lens.doc.uri, { start: { line: r.line, character: r.nameStart }, end: { line: r.line, character: r.nameEnd } }))],
        }
      : { title, command: '' };
    return lens;
  }

  dispose(): void {
    this.emitter.dispose();
  }
}
