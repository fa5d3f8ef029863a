/**
 * The last trace of each dump: its packet, the trace value and what it says about each line. CodeLens,
 * decorations and the diagram read it; a new version of the document re-runs the same packet.
 */
import * as vscode from 'vscode';
import type { Trace } from '../engine/api.ts';
import { type LineVerdict, type TraceMarks, traceLineVerdicts, traceMarks } from '../editor/trace-lens.ts';

export interface TraceSession {
  readonly uri: vscode.Uri;
  readonly packet: string;
  readonly trace: Trace;
  /** The document version traced (-1: read from disk). */
  readonly version: number;
  readonly verdicts: ReadonlyMap<number, LineVerdict>;
  readonly marks: TraceMarks;
}

export class TraceSessions implements vscode.Disposable {
  private readonly sessions = new Map<string, TraceSession>();
  private readonly emitter = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.emitter.event;

  /** `lineVerdicts`: computed where the trace ran (the engine worker), else from `trace`'s misses here. */
  set(
    uri: vscode.Uri,
    packet: string,
    trace: Trace,
    version: number,
    lineVerdicts?: readonly LineVerdict[],
  ): TraceSession {
    const verdicts = lineVerdicts ? new Map(lineVerdicts.map(v => [v.line, v])) : traceLineVerdicts(trace);
    const session: TraceSession = { uri, packet, trace, version, verdicts, marks: traceMarks(verdicts) };
    this.sessions.set(uri.toString(), session);
    void vscode.commands.executeCommand('setContext', 'packetlens.hasTrace', true);
    this.emitter.fire(uri);
    return session;
  }

  get(uri: vscode.Uri): TraceSession | undefined {
    return this.sessions.get(uri.toString());
  }

  clear(uri?: vscode.Uri): void {
    const uris = uri ? [uri] : [...this.sessions.values()].map(s => s.uri);
    for (const u of uris) {
      if (this.sessions.delete(u.toString())) this.emitter.fire(u);
    }
    if (this.sessions.size === 0) void vscode.commands.executeCommand('setContext', 'packetlens.hasTrace', false);
  }

  dispose(): void {
    this.sessions.clear();
    this.emitter.dispose();
  }
}
