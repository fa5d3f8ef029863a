/**
 * CodeLens on dumps: above each chain ("referenced by N", "▶ Trace from here") and, after a trace, on
 * every rule it evaluated ("✓ matched · step 4 · 50%", "✗ --dport 443 ≠ 80"). Lenses are created with
 * their ranges only; VS Code resolves the visible ones. On a dump with many chains only the chains near
 * what the editors show get a lens (and the lenses follow scrolling): VS Code copies every lens a
 * provider returns on the extension host's thread, and 100k chains' lenses took it most of a second.
 */
import * as vscode from 'vscode';
import { TRACE_FROM_HERE_TITLE } from '../editor/chain-lens.ts';
import { lensTitle } from '../editor/trace-lens.ts';
import type { ChainLensRow } from '../shared/engine-protocol.ts';
import { lineStart, toLocation } from './convert.ts';
import type { Analysis, DumpStore } from './dump-store.ts';
import type { TraceSessions } from './trace-sessions.ts';
import { COMMANDS } from './commands.ts';
import { timing, timingOn } from './timing.ts';

class ChainCodeLens extends vscode.CodeLens {
  constructor(
    range: vscode.Range,
    readonly lens: ChainLensRow,
    readonly part: 'refs' | 'trace',
    readonly doc: vscode.TextDocument,
    readonly analysis: Analysis,
  ) {
    super(range);
  }
}

/** Dumps with at most this many chains get every chain's lens; bigger ones the visible part's. */
const ALL_LENSES = 3000;
/** Lines above and below the visible ones whose chains get lenses on a big dump. */
const WINDOW_MARGIN = 400;

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

  /** The lines each big dump's lenses were last given for. */
  private readonly windows = new Map<string, { fromLine: number; toLine: number }>();
  private scrollTimer: ReturnType<typeof setTimeout> | null = null;

  refresh(): void {
    this.emitter.fire();
  }

  /** The lines the editors showing `doc` display, with a margin either side. */
  private windowFor(doc: vscode.TextDocument): { fromLine: number; toLine: number } {
    const ranges = vscode.window.visibleTextEditors.filter(e => e.document === doc).flatMap(e => e.visibleRanges);
    const from = ranges.length ? Math.min(...ranges.map(r => r.start.line)) : 0;
    const to = ranges.length ? Math.max(...ranges.map(r => r.end.line)) : 0;
    const w = { fromLine: Math.max(0, from - WINDOW_MARGIN), toLine: to + WINDOW_MARGIN };
    this.windows.set(doc.uri.toString(), w);
    return w;
  }

  /** An editor scrolled: when it shows lines outside its dump's lens window, the lenses follow (debounced). */
  scrolled(e: vscode.TextEditorVisibleRangesChangeEvent): void {
    const w = this.windows.get(e.textEditor.document.uri.toString());
    if (!w || e.visibleRanges.every(r => r.start.line >= w.fromLine && r.end.line <= w.toLine)) return;
    if (this.scrollTimer) clearTimeout(this.scrollTimer);
    this.scrollTimer = setTimeout(() => {
      this.scrollTimer = null;
      this.emitter.fire();
    }, 150);
  }

  async provideCodeLenses(
    doc: vscode.TextDocument,
    token: vscode.CancellationToken,
  ): Promise<vscode.CodeLens[] | undefined> {
    const asked = timingOn() ? Date.now() : 0;
    let parsed = 0;
    let a: Analysis;
    let rows: readonly ChainLensRow[] | null = null;
    const { chains, maxChains } = this.enabled();
    const wantChains = chains && !this.onlyInDumpDiff(doc.uri);
    try {
      a = await this.store.get(doc);
      if (timingOn()) parsed = Date.now();
      if (token.isCancellationRequested) return undefined;
      if (wantChains && a.summary.chainCount <= maxChains) {
        const window =
          a.summary.chainCount <= ALL_LENSES ? { fromLine: 0, toLine: Number.MAX_SAFE_INTEGER } : this.windowFor(doc);
        rows = (await a.ask('chainLenses', { ...window, max: ALL_LENSES })).items;
      }
    } catch {
      return undefined; // the document changed or closed meanwhile
    }
    if (token.isCancellationRequested) return undefined;
    const t0 = performance.now();
    const out: vscode.CodeLens[] = [];
    const session = this.sessions.get(doc.uri);
    if (session && session.version === a.version) {
      // First, above the file: the trace describes a file the kernel would refuse.
      const errors = session.trace.fileErrors;
      if (errors)
        out.push(
          new vscode.CodeLens(lineStart(0), {
            title: `$(warning) ${errors.message}`,
            tooltip: errors.message,
            command: COMMANDS.showFlowDiagram,
            arguments: [doc.uri],
          }),
        );
      const n = session.trace.outcomes.length;
      // A trace through a big dump evaluates thousands of rules: their lenses near the visible lines only.
      const w = session.verdicts.size <= ALL_LENSES ? null : this.windowFor(doc);
      for (const v of session.verdicts.values()) {
        if (w && (v.line < w.fromLine || v.line > w.toLine)) continue;
        const title = lensTitle(v, n);
        if (title)
          out.push(
            new vscode.CodeLens(lineStart(v.line), { title, command: COMMANDS.showFlowDiagram, arguments: [doc.uri] }),
          );
      }
    }
    const traceLenses = out.length;
    if (rows) {
      for (const l of rows) {
        const r = lineStart(l.line);
        out.push(new ChainCodeLens(r, l, 'refs', doc, a), new ChainCodeLens(r, l, 'trace', doc, a));
      }
    }
    timing(() => {
      const now = Date.now();
      return `CodeLens of ${doc.uri.path.slice(doc.uri.path.lastIndexOf('/') + 1)} v${doc.version} asked at ${asked}: ${out.length} lenses after ${now - asked} ms (the parse ${parsed - asked} ms, the chains' rows ${now - parsed} ms)`;
    });
    this.log(
      `CodeLens for ${doc.uri.toString()} v${doc.version}: ${traceLenses} from the trace${session ? ` (trace of v${session.version})` : ''}, ${out.length - traceLenses} on chains, in ${(performance.now() - t0).toFixed(1)} ms`,
    );
    return out;
  }

  async resolveCodeLens(lens: vscode.CodeLens): Promise<vscode.CodeLens> {
    if (!(lens instanceof ChainCodeLens)) return lens;
    const l = lens.lens;
    if (lens.part === 'trace') {
      lens.command = {
        title: TRACE_FROM_HERE_TITLE,
        command: COMMANDS.tracePacket,
        arguments: [{ uri: lens.doc.uri.toString(), table: l.table, chain: l.chain }],
      };
      return lens;
    }
    let refs: vscode.Location[] = [];
    if (l.references > 0) {
      try {
        refs = (await lens.analysis.ask('chainReferences', { table: l.table, chain: l.chain })).map(r =>
          toLocation(lens.doc.uri, r),
        );
      } catch {
        // A newer version replaced this parse: the title stands, the click lists nothing.
      }
    }
    lens.command = refs.length
      ? { title: l.title, command: 'editor.action.showReferences', arguments: [lens.doc.uri, lens.range.start, refs] }
      : { title: l.title, command: '' };
    return lens;
  }

  dispose(): void {
    if (this.scrollTimer) clearTimeout(this.scrollTimer);
    this.emitter.dispose();
  }
}
