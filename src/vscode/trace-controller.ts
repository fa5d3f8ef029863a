/**
 * "Packet Lens: Trace Packet…" and what follows a trace: the packet input, the trace itself, the trace
 * session (CodeLens, decorations), the flow diagram and its re-traces, and re-running the packet when the
 * dump changes. Messages say plainly when there is nothing to trace and what is degraded on big files.
 */
import type { ReachingPacket } from '../editor/trace-from-here.ts';
import * as vscode from 'vscode';
import { error, info, record, warn } from './notify.ts';
import { traceDiagram } from '../editor/diagram.ts';
import { DUMP_DIALOG_FILTERS } from '../editor/dump-files.ts';
import { readFromDiskNote } from '../editor/large-file.ts';
import { fieldsFromText, fieldsToText, EMPTY_FIELDS } from '../editor/packet-fields.ts';
import { checkPacketText, pushHistory } from '../editor/packet-suggest.ts';
import { traceSummary } from '../editor/run-trace.ts';
import { firstStepLine } from '../editor/trace-lens.ts';
import type { NodeRequest, WorkerTrace } from '../shared/engine-protocol.ts';
import type { Settings } from '../editor/settings.ts';
import type { Trace } from '../engine/api.ts';
import type { DiagramModel, PacketFields } from '../shared/protocol.ts';
import { HISTORY_KEY } from './commands.ts';
import { lineStart } from './convert.ts';
import type { DiagramPanel } from './diagram-panel.ts';
import { type DumpSource, activeDumpSource, loadSource, sourceForUri } from './dump-source.ts';
import { type Analysis, type DumpStore, fileName } from './dump-store.ts';
import { askPacket, dumpPacketSource } from './packet-input.ts';
import type { TraceSessions } from './trace-sessions.ts';
import { isCancelled } from '../worker/client.ts';
import type { Busy } from './busy.ts';
import { timing, timingOn } from './timing.ts';

/** How long a trace may run in the engine worker before it is stopped. */
const TRACE_DEADLINE_MS = 10_000;
/** A trace marking more lines than this draws its diagram before the marks (at most DRAWN_WAIT_MS later). */
const BIG_TRACE_LINES = 2000;
const DRAWN_WAIT_MS = 1000;

/** What the command may be given: a file (explorer, editor title), or a dump and a chain (CodeLens). */
export type TraceArgument =
  | vscode.Uri
  | { readonly uri?: string; readonly packet?: string; readonly table?: string; readonly chain?: string }
  | undefined;

export class TraceController {
  panel: DiagramPanel | null = null;

  constructor(
    private readonly store: DumpStore,
    private readonly sessions: TraceSessions,
    private readonly memento: vscode.Memento,
    private readonly settings: () => Settings,
    /** The node context of a dump (its status item's). */
    private readonly nodeFor: (a: Analysis) => Promise<NodeRequest> = () =>
      Promise.resolve({ node: this.settings().node }),
    private readonly busy: Busy | null = null,
  ) {}

  async traceCommand(arg: TraceArgument): Promise<void> {
    let source: DumpSource;
    if (arg instanceof vscode.Uri) source = sourceForUri(arg);
    else if (arg?.uri) source = sourceForUri(vscode.Uri.parse(arg.uri));
    else {
      const found = activeDumpSource();
      if (!found.ok) {
        const pick = await info(found.message, 'Open a Dump…');
        if (pick) {
          const chosen = await vscode.window.showOpenDialog({
            canSelectMany: false,
            openLabel: 'Trace',
            filters: DUMP_DIALOG_FILTERS,
          });
          if (chosen?.[0]) await this.traceCommand(chosen[0]);
        }
        return;
      }
      source = found.source;
    }
    const settings = this.settings();
    const loaded = await loadSource(this.store, source, settings.limits.maxFileSizeMB);
    if (!loaded.ok) {
      void warn(loaded.message);
      return;
    }
    const a = loaded.analysis;
    const empty = a.summary.empty;
    if (empty) {
      void warn(empty);
      return;
    }
    if (a.source === 'disk') void info(readFromDiskNote(fileName(a.uri), a.bytes));
    const history = this.memento.get<string[]>(HISTORY_KEY, []);
    let initial = (arg && !(arg instanceof vscode.Uri) ? arg.packet : undefined) ?? '';
    let reaching: ReachingPacket[] | null = null;
    const chain = arg && !(arg instanceof vscode.Uri) && arg.table && arg.chain ? arg.chain : null;
    if (!initial && chain && arg && !(arg instanceof vscode.Uri) && arg.table) {
      // Traced in the dump's worker on this node: only packets that do reach the chain are offered.
      const node = await this.nodeFor(a);
      reaching = await a.ask('packetsReaching', { table: arg.table, chain, ...node }).catch(() => []);
      initial = reaching[0]?.packet ?? '';
    }
    if (!initial && !reaching) initial = this.sessions.get(a.uri)?.packet ?? history[0] ?? '';
    const title = chain
      ? reaching && !reaching.length
        ? `No packet found that reaches ${chain}: type one`
        : `Trace a packet that reaches ${chain}`
      : `Trace a packet through ${fileName(a.uri)}`;
    // The diagram's panel opens beside the dump while the packet is typed: its webview loads meanwhile, so
    // the trace is drawn as soon as it is answered. Cancelled, it closes again.
    const panelOpened =
      settings.openDiagram &&
      (this.panel?.openFor(`Type a packet to trace through ${fileName(a.uri)}.`, false) ?? false);
    const packet = await askPacket(
      dumpPacketSource(a, chain && reaching ? { chain, reaching } : null),
      title,
      initial,
      history,
    );
    if (!packet) {
      if (panelOpened) this.panel?.closeUnused();
      return;
    }
    timing(() => `trace of ${packet} accepted at ${Date.now()}`);
    // The history is saved while the packet is traced (a round trip to the workbench's storage the trace
    // need not wait for).
    const saved = this.memento.update(HISTORY_KEY, pushHistory(history, packet));
    // The diagram opens beside the dump without taking the focus: the dump's CodeLens and highlights
    // update at once and the keyboard stays in the editor.
    await this.run(a, packet, false);
    await saved;
  }

  /**
   * Traces `packet` through a dump without asking (a comparison's class, traced on one side) and opens the
   * flow diagram for it.
   */
  async traceWith(uri: vscode.Uri, packet: string): Promise<void> {
    const loaded = await loadSource(this.store, sourceForUri(uri), this.settings().limits.maxFileSizeMB);
    if (!loaded.ok) {
      void warn(loaded.message);
      return;
    }
    const check = checkPacketText(packet, loaded.analysis.summary.tableCount ? loaded.analysis.summary.family : null);
    if (!check.ok) {
      void error(`Packet Lens: ${check.error}`);
      return;
    }
    if (await this.run(loaded.analysis, packet, false, true))
      await this.memento.update(HISTORY_KEY, pushHistory(this.memento.get<string[]>(HISTORY_KEY, []), packet));
  }

  /**
   * Traces `packet` through the analysed dump (in its engine worker) and shows it everywhere; returns false
   * on a bad packet, or when the dump changed meanwhile (the new version's parse re-runs the packet).
   */
  async run(a: Analysis, packet: string, focusDiagram: boolean, openDiagram = false): Promise<boolean> {
    const settings = this.settings();
    for (const p of settings.problems) void warn(`Packet Lens settings: ${p}`);
    let r: WorkerTrace;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let timedOut = false;
    const t0 = timingOn() ? Date.now() : 0;
    let t1 = 0;
    const showDiagram = openDiagram || settings.openDiagram || this.panel?.visibleFor;
    const opened =
      showDiagram && (this.panel?.openFor(`Tracing ${packet} through ${fileName(a.uri)}…`, focusDiagram) ?? false);
    try {
      const node = await this.nodeFor(a);
      if (t0) t1 = Date.now();
      const asked = a.ask('trace', { packet, ...node });
      // A trace the engine does not finish in time (a hostile dump) stops its worker: the editor answers.
      timer = setTimeout(() => {
        timedOut = true;
        this.store.abandon(a, 'the trace ran past its deadline');
      }, TRACE_DEADLINE_MS);
      const stop = () => this.store.abandon(a, 'the trace was stopped from the status bar');
      r = await (this.busy ? this.busy.run(`tracing ${packet}…`, asked, stop) : asked);
    } catch (e) {
      if (timedOut)
        r = {
          ok: false,
          error: `the trace of ${packet} through ${fileName(a.uri)} did not finish within ${TRACE_DEADLINE_MS / 1000} s and was stopped. Look at the file's problems (View: Problems): a jump loop or many random branches can make the paths explode.`,
        };
      else if (isCancelled(e)) {
        // The dump changed, closed or the work was stopped: the panel opened for this trace says so.
        if (opened) this.panel?.error(`The trace of ${packet} stopped: ${e.message}.`);
        return false;
      } else r = { ok: false, error: `the trace failed: ${e instanceof Error ? e.message : String(e)}` };
    } finally {
      clearTimeout(timer);
    }
    if (!r.ok) {
      record(`trace of ${packet} through ${fileName(a.uri)} failed: ${r.error}`);
      void error(r.error);
      this.panel?.error(r.error);
      return false;
    }
    const t2 = t0 ? Date.now() : 0;
    let drawn: Promise<void> | null = null;
    if (showDiagram && this.panel) {
      const model = diagramOf(r.trace, fileName(a.uri), packet);
      // A trace through a big dump marks thousands of lines: the browser's thread, which the webview
      // shares, spends hundreds of milliseconds on those marks, so they follow the drawn diagram.
      drawn = r.verdicts.length > BIG_TRACE_LINES ? this.panel.drawn(packet, DRAWN_WAIT_MS) : null;
      this.panel.show(model, a.uri, focusDiagram, 'dump');
    }
    timing(() => {
      const now = Date.now();
      return `trace of ${packet} started at ${t0}: diagram posted at ${now} (the node ${t1 - t0} ms, the worker ${t2 - t1} ms of which the engine ${r.ms.toFixed(0)} ms, ${r.verdicts.length} rule verdicts; the diagram built and posted ${now - t2} ms)`;
    });
    // After the panel is shown: VS Code drops a CodeLens refresh that arrives while focus moves away
    // from the editor, so the session (which refreshes CodeLens and highlights) is set last.
    if (drawn) await drawn;
    this.sessions.set(a.uri, packet, r.trace, a.version, r.verdicts);
    this.revealFirstStep(a.uri, r.trace);
    vscode.window.setStatusBarMessage(`Packet Lens: ${traceSummary(r.trace)} (${r.ms.toFixed(1)} ms)`, 8000);
    record(
      `traced ${packet} through ${fileName(a.uri)} v${a.version} in ${r.ms.toFixed(1)} ms: ${traceSummary(r.trace)}`,
    );
    return true;
  }

  /** The panel's packet form: re-trace the same dump. */
  async retrace(uri: vscode.Uri, fields: PacketFields): Promise<void> {
    const packet = fieldsToText(fields);
    const a = await this.analysisFor(uri);
    if (!a) return;
    const check = checkPacketText(packet, a.summary.family);
    if (!check.ok) {
      this.panel?.error(check.error);
      return;
    }
    if (await this.run(a, packet, false))
      await this.memento.update(HISTORY_KEY, pushHistory(this.memento.get<string[]>(HISTORY_KEY, []), packet));
  }

  /** A panel restored after reload: trace its packet again. */
  async restore(uri: vscode.Uri, packet: string): Promise<void> {
    const a = await this.analysisFor(uri);
    if (a) await this.run(a, packet, false);
  }

  async showDiagram(uri?: vscode.Uri): Promise<void> {
    const target = uri ?? vscode.window.activeTextEditor?.document.uri;
    const s = target ? this.sessions.get(target) : undefined;
    if (!s) {
      void info('No trace to draw: run "Packet Lens: Trace Packet…" first.');
      return;
    }
    this.panel?.show(diagramOf(s.trace, fileName(s.uri), s.packet), s.uri, true, 'dump');
  }

  /** A dump was parsed again after an edit: re-run its packet so CodeLens and highlights follow. */
  analyzed(a: Analysis): void {
    const s = this.sessions.get(a.uri);
    if (s && s.version !== a.version && a.source === 'document') void this.run(a, s.packet, false);
  }

  /**
   * After a trace the dump shows where the packet starts: step 1 of the most probable outcome, in every
   * editor showing the dump, without taking the focus (a trace started from a chain's CodeLens deep in
   * the file would otherwise leave the reader at step 8 with steps 1–7 out of sight).
   */
  private revealFirstStep(uri: vscode.Uri, trace: Trace): void {
    const line = firstStepLine(trace);
    if (line === null) return;
    const range = lineStart(line);
    for (const editor of vscode.window.visibleTextEditors) {
      if (editor.document.uri.toString() !== uri.toString()) continue;
      editor.selection = new vscode.Selection(range.start, range.start);
      editor.revealRange(range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    }
  }

  async reveal(uri: vscode.Uri, line: number): Promise<void> {
    const range = lineStart(line);
    const doc = vscode.workspace.textDocuments.find(d => d.uri.toString() === uri.toString());
    if (doc) {
      const column =
        vscode.window.visibleTextEditors.find(e => e.document === doc)?.viewColumn ?? vscode.ViewColumn.One;
      const editor = await vscode.window.showTextDocument(doc, {
        viewColumn: column,
        selection: range,
        preserveFocus: false,
      });
      editor.revealRange(range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    } else {
      // Not handed to extensions (or closed): let the workbench open it at the line.
      await vscode.commands.executeCommand('vscode.open', uri, { selection: range, viewColumn: vscode.ViewColumn.One });
    }
  }

  private async analysisFor(uri: vscode.Uri): Promise<Analysis | null> {
    const loaded = await loadSource(this.store, sourceForUri(uri), this.settings().limits.maxFileSizeMB);
    if (!loaded.ok) {
      this.panel?.error(loaded.message);
      return null;
    }
    return loaded.analysis;
  }
}

/** The flow diagram of a trace, headed by what the engine says about the file's errors, if it has any. */
function diagramOf(trace: Trace, file: string, packet: string): DiagramModel {
  const model = traceDiagram(trace, file, packet, fieldsFromText(packet) ?? EMPTY_FIELDS);
  return trace.fileErrors ? { ...model, fileErrors: trace.fileErrors.message } : model;
}
