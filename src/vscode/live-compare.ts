/**
 * Packet Lens: Compare with Live Trace… — a capture from the node (pasted from the clipboard, a file, or an
 * open editor holding one) held against the active dump's prediction in the dump's engine worker
 * (src/editor/live-compare.ts over the engine's live/align). The predicted path is shown as a trace is
 * (CodeLens, highlights), the rule where the kernel's path parts from it is marked and revealed, and a
 * notification says what happened and why; the full report goes to the log.
 */
import * as vscode from 'vscode';
import type { LiveView } from '../editor/live-compare.ts';
import type { NodeRequest } from '../shared/engine-protocol.ts';
import { lineStart } from './convert.ts';
import { activeDumpSource, loadSource, sourceForUri } from './dump-source.ts';
import { type Analysis, type DumpStore, fileName } from './dump-store.ts';
import { info, record, warn } from './notify.ts';
import { askPacket, dumpPacketSource } from './packet-input.ts';
import type { TraceSessions } from './trace-sessions.ts';
import type { Busy } from './busy.ts';
import { isCancelled } from '../worker/client.ts';

/** Words a capture's first lines carry (a cheap look, no parse: the worker reads it). */
const LOOKS_LIKE_CAPTURE = /(^|\s)(TRACE: |PACKET: \d+ [0-9a-f]+ )|^\s*trace id [0-9a-f]+ /m;

interface CaptureItem extends vscode.QuickPickItem {
  readonly take: () => Promise<{ name: string; text: string } | null>;
}

export class LiveCompare implements vscode.Disposable {
  private readonly decoration = vscode.window.createTextEditorDecorationType({
    isWholeLine: true,
    borderWidth: '1px 0 1px 0',
    borderStyle: 'solid',
    borderColor: new vscode.ThemeColor('editorWarning.foreground'),
    overviewRulerColor: new vscode.ThemeColor('editorWarning.foreground'),
    overviewRulerLane: vscode.OverviewRulerLane.Right,
  });
  /** The mark of the last comparison: the dump, its version, the line and the words beside it. */
  private mark: { uri: string; version: number; line: number; text: string } | null = null;

  constructor(
    private readonly store: DumpStore,
    private readonly sessions: TraceSessions,
    private readonly nodeFor: (a: Analysis) => Promise<NodeRequest>,
    private readonly maxFileSizeMB: () => number,
    private readonly busy: Busy | null = null,
  ) {}

  async command(arg?: unknown): Promise<void> {
    const found = arg instanceof vscode.Uri ? { ok: true as const, source: sourceForUri(arg) } : activeDumpSource();
    if (!found.ok) {
      void info(`${found.message} Then run Compare with Live Trace… on it.`);
      return;
    }
    const loaded = await loadSource(this.store, found.source, this.maxFileSizeMB());
    if (!loaded.ok) {
      void warn(loaded.message);
      return;
    }
    const a = loaded.analysis;
    if (a.summary.empty) {
      void warn(a.summary.empty);
      return;
    }
    const capture = await this.pickCapture(a.uri);
    if (!capture) return;
    let packet = this.sessions.get(a.uri)?.packet ?? null;
    const fromCapture = await a.ask('capturePacket', { capture: capture.text });
    if (!fromCapture.format) {
      void warn(
        `${capture.name} is not a live trace: ${fromCapture.note ?? 'no capture lines'}. Capture one with xtables-monitor --trace, nft monitor trace, or dmesg after a -j TRACE rule.`,
      );
      return;
    }
    if (!packet) {
      packet =
        (await askPacket(
          dumpPacketSource(a),
          `The packet ${capture.name} traced${fromCapture.note ? ` (${fromCapture.note})` : ''}: trace it through ${fileName(a.uri)} and compare`,
          fromCapture.packet ?? '',
          [],
        )) ?? null;
      if (!packet) return;
    }
    await this.compare(a, packet, capture);
  }

  /** Asks the worker, shows the predicted path, marks where they part and says it. */
  private async compare(a: Analysis, packet: string, capture: { name: string; text: string }): Promise<void> {
    let r;
    try {
      const asked = a.ask('liveCompare', {
        packet,
        capture: capture.text,
        captureName: capture.name,
        ...(await this.nodeFor(a)),
      });
      r = await (this.busy
        ? this.busy.run(`comparing ${capture.name} with ${packet}…`, asked, () =>
            this.store.abandon(a, 'the comparison was stopped from the status bar'),
          )
        : asked);
    } catch (e) {
      if (isCancelled(e)) return;
      void warn(
        `Packet Lens: the comparison with ${capture.name} failed: ${e instanceof Error ? e.message : String(e)}`,
      );
      return;
    }
    if (!r.ok) {
      void warn(r.error);
      return;
    }
    this.sessions.set(a.uri, packet, r.trace, a.version, r.verdicts);
    const view: LiveView = r.view;
    record(
      `compared ${capture.name} with ${packet} through ${fileName(a.uri)} v${a.version}:\n${view.details.join('\n')}`,
    );
    this.mark =
      view.line !== null && view.mark
        ? { uri: a.uri.toString(), version: a.version, line: view.line, text: view.mark }
        : null;
    this.refresh();
    if (view.line !== null) await this.reveal(a.uri, view.line);
    const buttons = view.line !== null ? ['Show Rule', 'Show Report'] : ['Show Report'];
    const picked =
      view.severity === 'info' ? await info(view.message, ...buttons) : await warn(view.message, ...buttons);
    if (picked === 'Show Rule' && view.line !== null) await this.reveal(a.uri, view.line);
    else if (picked === 'Show Report') await vscode.commands.executeCommand('packetlens.showLog');
  }

  private async reveal(uri: vscode.Uri, line: number): Promise<void> {
    const range = lineStart(line);
    const editor =
      vscode.window.visibleTextEditors.find(e => e.document.uri.toString() === uri.toString()) ??
      (await vscode.window.showTextDocument(uri, { preserveFocus: true }).then(
        e => e,
        () => undefined,
      ));
    if (!editor) return;
    editor.selection = new vscode.Selection(range.start, range.start);
    editor.revealRange(range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  }

  /** The capture: from the clipboard, a file, or an open editor that holds one. */
  private async pickCapture(dump: vscode.Uri): Promise<{ name: string; text: string } | null> {
    const items: CaptureItem[] = [];
    for (const doc of vscode.workspace.textDocuments) {
      if (doc.uri.toString() === dump.toString() || doc.uri.scheme === 'output') continue;
      const head = Array.from({ length: Math.min(doc.lineCount, 40) }, (_, i) => doc.lineAt(i).text).join('\n');
      if (!LOOKS_LIKE_CAPTURE.test(head)) continue;
      items.push({
        label: `$(file-text) ${fileName(doc.uri)}`,
        description: 'open editor',
        detail: head
          .split('\n')
          .find(l => l.trim())
          ?.slice(0, 120),
        take: () => Promise.resolve({ name: fileName(doc.uri), text: doc.getText() }),
      });
    }
    items.push(
      {
        label: '$(clippy) Paste from the clipboard',
        description: 'xtables-monitor --trace, nft monitor trace, or TRACE: lines from dmesg',
        take: async () => {
          const text = await vscode.env.clipboard.readText();
          if (!text.trim()) {
            void info(
              'Packet Lens: the clipboard is empty: copy the capture (xtables-monitor --trace, nft monitor trace, dmesg | grep TRACE:) first.',
            );
            return null;
          }
          return { name: 'the clipboard', text };
        },
      },
      {
        label: '$(folder-opened) Open a capture file…',
        take: async () => {
          const chosen = await vscode.window.showOpenDialog({ canSelectMany: false, openLabel: 'Compare' });
          if (!chosen?.[0]) return null;
          const bytes = await vscode.workspace.fs.readFile(chosen[0]);
          return { name: fileName(chosen[0]), text: new TextDecoder('utf-8').decode(bytes) };
        },
      },
    );
    const pick = await vscode.window.showQuickPick(items, {
      title: `Packet Lens: compare ${fileName(dump)} with a live trace`,
      placeHolder: 'Where is the capture?',
    });
    return pick ? pick.take() : null;
  }

  /** Re-applies the mark in the editors showing its dump (at the version compared). */
  refresh(): void {
    for (const editor of vscode.window.visibleTextEditors) {
      const m = this.mark;
      const here = m && editor.document.uri.toString() === m.uri && editor.document.version === m.version;
      editor.setDecorations(
        this.decoration,
        here
          ? [
              {
                range: lineStart(m.line),
                renderOptions: {
                  after: { contentText: `  ${m.text}`, color: new vscode.ThemeColor('editorWarning.foreground') },
                },
              },
            ]
          : [],
      );
    }
  }

  /** Clear Trace clears the mark too. */
  clear(uri?: vscode.Uri): void {
    if (!uri || this.mark?.uri === uri.toString()) this.mark = null;
    this.refresh();
  }

  dispose(): void {
    this.decoration.dispose();
  }
}
