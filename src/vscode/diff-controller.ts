/**
 * "Packet Lens: Compare Packet Behaviour": what changes for packets between two dumps — the two sides of a
 * diff editor (a pull request's changed file, git's working-tree diff, found through the tab API), or two
 * dumps picked from the workspace. The comparison is the engine's `diffRulesets`, run in an engine worker
 * of its own that parses both sides (so the two dumps' workers keep answering hovers meanwhile), cached by
 * both parses, so the CodeLens, the status bar and the report panel share one computation per pair of
 * document versions. A newer version of either side stops the worker of the stale comparison.
 */
import * as vscode from 'vscode';
import { error, warn } from './notify.ts';
import type { DiffPanelState, DiffViewModel } from '../shared/protocol.ts';
import { hunkAnnotations } from '../editor/diff-annotations.ts';
import { changePacket, diffLensTitle, diffViewModel } from '../editor/diff-view.ts';
import { DUMP_DIALOG_FILTERS, DUMP_GLOB, NFT_GLOB, isDumpPath, sideLabel } from '../editor/dump-files.ts';
import { PromiseCache } from '../editor/promise-cache.ts';
import type { Settings } from '../editor/settings.ts';
import { type DiffReport, formatDiffMarkdown } from '../engine/api.ts';
import type { Comparison, NodeRequest } from '../shared/engine-protocol.ts';
import { EngineWorker, isCancelled, isOutOfMemory } from '../worker/client.ts';
import type { Busy } from './busy.ts';
import { COMMANDS, RULESET_LANGUAGES } from './commands.ts';
import { lineStart } from './convert.ts';
import type { DiffPanel } from './diff-panel.ts';
import { type Analysis, type DumpStore, FileTooLarge, fileName } from './dump-store.ts';
import type { TraceController } from './trace-controller.ts';

export interface DumpPair {
  readonly original: vscode.Uri;
  readonly modified: vscode.Uri;
}

export type { Comparison };

const CACHE_SIZE = 6;

/** A side of a comparison is a dump when its document has the language, or its name says so. */
export function isDumpUri(uri: vscode.Uri): boolean {
  const doc = vscode.workspace.textDocuments.find(d => d.uri.toString() === uri.toString());
  if (doc) return RULESET_LANGUAGES.includes(doc.languageId);
  return isDumpPath(uri.path);
}

export { sideLabel };

export class BehaviourDiffs implements vscode.Disposable {
  private readonly cache = new PromiseCache<string, Comparison>(CACHE_SIZE);
  /** The worker of the running comparison of each pair of URIs (one at a time per pair). */
  private readonly jobs = new Map<string, { key: string; worker: EngineWorker }>();
  private readonly ids = new WeakMap<Analysis, number>();
  private nextId = 1;
  private current: { pair: DumpPair; report: DiffReport } | null = null;
  private readonly emitter = new vscode.EventEmitter<void>();
  /** A comparison finished: CodeLens and the status bar show it. */
  readonly onDidCompare = this.emitter.event;

  constructor(
    private readonly store: DumpStore,
    private readonly settings: () => Settings,
    private readonly panel: DiffPanel,
    private readonly controller: TraceController,
    private readonly log: (message: string) => void,
    /** The node context of a dump (its status item's): a comparison runs on the new side's node. */
    private readonly nodeFor: (a: Analysis) => Promise<NodeRequest> = () =>
      Promise.resolve({ node: this.settings().node }),
    private readonly busy: Busy | null = null,
  ) {}

  /** Every diff editor tab whose two sides are dumps. */
  dumpPairs(): DumpPair[] {
    const out: DumpPair[] = [];
    for (const g of vscode.window.tabGroups.all) {
      for (const t of g.tabs) {
        const input = t.input;
        if (input instanceof vscode.TabInputTextDiff && isDumpUri(input.original) && isDumpUri(input.modified))
          out.push({ original: input.original, modified: input.modified });
      }
    }
    return out;
  }

  /** Whether `uri` is open only as a side of dump diffs (no plain editor tab shows it). */
  inDumpDiffOnly(uri: vscode.Uri): boolean {
    const key = uri.toString();
    let inDiff = false;
    for (const g of vscode.window.tabGroups.all) {
      for (const t of g.tabs) {
        const input = t.input;
        if (input instanceof vscode.TabInputText && input.uri.toString() === key) return false;
        if (
          input instanceof vscode.TabInputTextDiff &&
          (input.original.toString() === key || input.modified.toString() === key) &&
          isDumpUri(input.original) &&
          isDumpUri(input.modified)
        )
          inDiff = true;
      }
    }
    return inDiff;
  }

  /** The dump diff whose modified side is `uri`. */
  pairFor(uri: vscode.Uri): DumpPair | null {
    return this.dumpPairs().find(p => p.modified.toString() === uri.toString()) ?? null;
  }

  /** The dump diff whose original side is `uri`. */
  originalPairFor(uri: vscode.Uri): DumpPair | null {
    return this.dumpPairs().find(p => p.original.toString() === uri.toString()) ?? null;
  }

  /** The active tab, when it is a dump diff. */
  activePair(): DumpPair | null {
    const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
    return input instanceof vscode.TabInputTextDiff && isDumpUri(input.original) && isDumpUri(input.modified)
      ? { original: input.original, modified: input.modified }
      : null;
  }

  /** The finished comparison of the pair's current versions, if there is one (no work). */
  async peek(pair: DumpPair): Promise<Comparison | null> {
    const a = this.peekAnalysis(pair.original);
    const b = this.peekAnalysis(pair.modified);
    if (!a || !b) return null;
    const c = this.cache.peek(this.key(a, b, await this.nodeFor(b)));
    return c ? await c : null;
  }

  /** Compares the two dumps' current versions (once per pair of parses and node settings). */
  async compare(oldUri: vscode.Uri, newUri: vscode.Uri): Promise<Comparison> {
    let a: Analysis;
    let b: Analysis;
    try {
      [a, b] = await Promise.all([this.load(oldUri), this.load(newUri)]);
    } catch (e) {
      const bytes =
        e instanceof FileTooLarge
          ? `, ${(e.bytes / 1048576).toFixed(0)} MB, is above packetlens.limits.maxFileSizeMB`
          : '';
      return { ok: false, error: `cannot read a dump${bytes}: ${e instanceof Error ? e.message : String(e)}` };
    }
    const node = await this.nodeFor(b);
    const key = this.key(a, b, node);
    let made = false;
    const c = this.cache.get(key, () => {
      made = true;
      return this.run(a, b, key, node).catch(
        (e: unknown) =>
          ({ ok: false, error: `the comparison failed: ${e instanceof Error ? e.message : String(e)}` }) as const,
      );
    });
    if (made) void c.then(() => this.emitter.fire());
    return c;
  }

  private async run(a: Analysis, b: Analysis, key: string, node: NodeRequest): Promise<Comparison> {
    const quick = [a, b].flatMap(x => x.summary.firstErrors);
    const errors = a.summary.errorCount + b.summary.errorCount;
    if (errors)
      return {
        ok: false,
        error: `the dumps have errors; fix them before comparing: ${quick.slice(0, 3).join('; ')}${errors > 3 ? ` (and ${errors - 3} more)` : ''}`,
      };
    const pairKey = `${a.uri.toString()}|${b.uri.toString()}`;
    this.jobs.get(pairKey)?.worker.terminate('a newer comparison of the same dumps started');
    const worker = new EngineWorker(this.store.spawn);
    this.jobs.set(pairKey, { key, worker });
    let timedOut = false;
    // How long a comparison may run in its worker (setting packetlens.limits.compareTimeoutSeconds): two
    // 320k-rule dumps take minutes on a busy 2-core machine, a hostile pair must still end.
    const deadlineS = this.settings().limits.compareTimeoutSeconds;
    const timer = setTimeout(() => {
      timedOut = true;
      worker.terminate('the comparison ran past its deadline');
    }, deadlineS * 1000);
    try {
      const max = this.settings().limits.maxFileSizeMB * 1048576;
      await a.sendTo(worker, 'old', max);
      await b.sendTo(worker, 'new', max);
      const r = await worker.request('diff', { oldKey: 'old', newKey: 'new', ...node });
      if (r.ok)
        this.log(
          `compared ${fileName(a.uri)} → ${fileName(b.uri)}: ${r.report.summary}, ${r.report.classesTraced} classes traced in ${r.ms.toFixed(0)} ms`,
        );
      return r;
    } catch (e) {
      if (timedOut)
        return {
          ok: false,
          error: `the comparison did not finish within ${deadlineS} s and was stopped (setting packetlens.limits.compareTimeoutSeconds)`,
        };
      // Its worker ran out of memory: kept as this pair's answer (not run again until a side changes).
      if (isOutOfMemory(e))
        return { ok: false, error: `comparing ${fileName(a.uri)} → ${fileName(b.uri)} ${e.message}` };
      // Cancelled by a newer comparison: drop this one from the cache so nobody reuses its failure.
      this.cache.delete(key);
      // The newer comparison of the same dumps (another version of one side, another node) answers whoever
      // waited for this one: the report panel showed "cancelled: a newer comparison … started" instead.
      const newer = this.jobs.get(pairKey);
      const next = newer && newer.worker !== worker ? this.cache.peek(newer.key) : undefined;
      if (next) return next;
      throw e;
    } finally {
      clearTimeout(timer);
      worker.terminate('the comparison is done');
      if (this.jobs.get(pairKey)?.worker === worker) this.jobs.delete(pairKey);
    }
  }

  private key(a: Analysis, b: Analysis, node: NodeRequest): string {
    return `${this.id(a)}|${this.id(b)}|${JSON.stringify(node)}`;
  }

  private id(a: Analysis): number {
    let id = this.ids.get(a);
    if (id === undefined) {
      id = this.nextId++;
      this.ids.set(a, id);
    }
    return id;
  }

  private document(uri: vscode.Uri): vscode.TextDocument | undefined {
    return vscode.workspace.textDocuments.find(d => d.uri.toString() === uri.toString());
  }

  private peekAnalysis(uri: vscode.Uri): Analysis | undefined {
    const doc = this.document(uri);
    return doc ? this.store.peek(doc) : undefined;
  }

  private async load(uri: vscode.Uri): Promise<Analysis> {
    const doc =
      this.document(uri) ?? (uri.scheme === 'file' ? undefined : await vscode.workspace.openTextDocument(uri));
    return doc ? this.store.get(doc) : this.store.readFile(uri);
  }

  /** The command: the given pair, the active diff editor's, or two dumps picked from the workspace. */
  async command(first?: unknown, second?: unknown): Promise<void> {
    let pair: DumpPair | null =
      first instanceof vscode.Uri && second instanceof vscode.Uri ? { original: first, modified: second } : null;
    pair ??= this.activePair() ?? (first instanceof vscode.Uri ? this.pairFor(first) : null);
    pair ??= await this.pickTwo();
    if (pair) await this.open(pair);
  }

  /** Compares the pair and shows the report (below the diff editor when the pair is the active one). */
  async open(pair: DumpPair): Promise<void> {
    const active = this.activePair();
    const below =
      active?.original.toString() === pair.original.toString() &&
      active.modified.toString() === pair.modified.toString();
    this.panel.busy(`Comparing packet behaviour: ${sideLabel(pair.original)} → ${sideLabel(pair.modified)}…`, below);
    const t0 = performance.now();
    const label = `comparing ${sideLabel(pair.original)} → ${sideLabel(pair.modified)}…`;
    const work = this.compare(pair.original, pair.modified);
    const r = await (this.busy ? this.busy.run(label, work, () => this.stop(pair)) : work).catch(
      (e: unknown) => ({ ok: false, error: isCancelled(e) ? 'stopped' : String(e) }) as const,
    );
    if (!r.ok) {
      this.log(
        `comparing ${sideLabel(pair.original)} → ${sideLabel(pair.modified)} failed after ${(performance.now() - t0).toFixed(0)} ms: ${r.error}`,
      );
      this.panel.error(`Cannot compare ${sideLabel(pair.original)} and ${sideLabel(pair.modified)}: ${r.error}`);
      if (!/stopped/.test(r.error)) void error(`cannot compare: ${r.error}`);
      return;
    }
    this.current = { pair, report: r.report };
    const state: DiffPanelState = { kind: 'diff', oldUri: pair.original.toString(), newUri: pair.modified.toString() };
    this.panel.show(this.viewModel(pair, r.report), state, below);
    vscode.window.setStatusBarMessage(`Packet Lens: ${diffLensTitle(r.report)} (${r.ms.toFixed(0)} ms)`, 8000);
  }

  /** The spinner's click: stop the running comparison of the pair. */
  private stop(pair: DumpPair): void {
    const job = this.jobs.get(`${pair.original.toString()}|${pair.modified.toString()}`);
    if (!job) return;
    this.cache.delete(job.key);
    job.worker.terminate('the comparison was stopped from the status bar');
  }

  viewModel(pair: DumpPair, report: DiffReport): DiffViewModel {
    let oldLabel = sideLabel(pair.original);
    let newLabel = sideLabel(pair.modified);
    if (oldLabel === newLabel) {
      oldLabel = vscode.workspace.asRelativePath(pair.original);
      newLabel = vscode.workspace.asRelativePath(pair.modified);
    }
    return diffViewModel(report, oldLabel, newLabel);
  }

  /** The panel's trace buttons: the class's packet through one side, in the flow diagram. */
  async traceClass(side: 'old' | 'new', change: number): Promise<void> {
    const cur = this.current;
    const p = cur ? changePacket(cur.report, change) : null;
    if (!cur || !p) {
      void warn(
        'Packet Lens: this comparison is no longer current: run "Packet Lens: Compare Packet Behaviour" again.',
      );
      return;
    }
    if (p.note) vscode.window.setStatusBarMessage(`Packet Lens: ${p.note}`, 8000);
    await this.controller.traceWith(side === 'old' ? cur.pair.original : cur.pair.modified, p.packet);
  }

  /** The panel's "Copy as Markdown": the report as `packetlens diff --markdown` prints it, for a PR comment. */
  async copyMarkdown(): Promise<void> {
    const cur = this.current;
    if (!cur) {
      void warn('Packet Lens: no comparison to copy: run "Packet Lens: Compare Packet Behaviour" first.');
      return;
    }
    await vscode.env.clipboard.writeText(formatDiffMarkdown(cur.report));
    vscode.window.setStatusBarMessage('Packet Lens: the report is on the clipboard as Markdown', 5000);
  }

  async revealRule(side: 'old' | 'new', line: number): Promise<void> {
    const cur = this.current;
    if (cur) await this.controller.reveal(side === 'old' ? cur.pair.original : cur.pair.modified, line);
  }

  async restore(state: DiffPanelState): Promise<void> {
    await this.open({ original: vscode.Uri.parse(state.oldUri), modified: vscode.Uri.parse(state.newUri) });
  }

  /** Two dumps of the workspace (or browsed to): the old one, then the new one. */
  private async pickTwo(): Promise<DumpPair | null> {
    const found = await vscode.workspace.findFiles(DUMP_GLOB, '**/{node_modules,.git}/**', 2000);
    // Open nftables rulesets too: the comparison reads both kinds (and `*.nft` files of the workspace).
    const nft = await vscode.workspace.findFiles(NFT_GLOB, '**/{node_modules,.git}/**', 2000);
    const open = vscode.workspace.textDocuments
      .filter(d => RULESET_LANGUAGES.includes(d.languageId) && d.uri.scheme !== 'git')
      .map(d => d.uri);
    const uris = [...new Map([...open, ...found, ...nft].map(u => [u.toString(), u])).values()].sort((a, b) =>
      vscode.workspace.asRelativePath(a).localeCompare(vscode.workspace.asRelativePath(b)),
    );
    type Item = vscode.QuickPickItem & { uri?: vscode.Uri };
    const items: Item[] = uris.map(uri => ({
      label: fileName(uri),
      description: vscode.workspace.asRelativePath(uri),
      uri,
    }));
    const browse: Item = { label: '$(folder-opened) Browse…', description: 'a dump outside the workspace' };
    const ask = async (title: string, exclude: vscode.Uri | null): Promise<vscode.Uri | null> => {
      const pick = await vscode.window.showQuickPick(
        [...items.filter(i => i.uri?.toString() !== exclude?.toString()), browse],
        {
          title,
          placeHolder: items.length
            ? 'An iptables-save dump or nftables ruleset'
            : 'No dumps in the workspace: browse for one',
          matchOnDescription: true,
        },
      );
      if (!pick) return null;
      if (pick.uri) return pick.uri;
      const chosen = await vscode.window.showOpenDialog({
        canSelectMany: false,
        openLabel: 'Compare',
        filters: DUMP_DIALOG_FILTERS,
      });
      return chosen?.[0] ?? null;
    };
    const original = await ask('Compare Packet Behaviour (1/2): the old dump', null);
    if (!original) return null;
    const modified = await ask(
      `Compare Packet Behaviour (2/2): the new dump, compared with ${fileName(original)}`,
      original,
    );
    return modified ? { original, modified } : null;
  }

  dispose(): void {
    for (const j of this.jobs.values()) j.worker.terminate('the extension stopped');
    this.jobs.clear();
    this.cache.clear();
    this.emitter.dispose();
  }
}

/** The CodeLens atop the modified side of a diff editor comparing two dumps. */
export class DiffSummaryLens implements vscode.CodeLensProvider, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.emitter.event;
  private readonly subscriptions: vscode.Disposable[];

  constructor(private readonly diffs: BehaviourDiffs) {
    this.subscriptions = [
      vscode.window.tabGroups.onDidChangeTabs(() => this.emitter.fire()),
      diffs.onDidCompare(() => this.emitter.fire()),
    ];
  }

  async provideCodeLenses(doc: vscode.TextDocument, token: vscode.CancellationToken): Promise<vscode.CodeLens[]> {
    const pair = this.diffs.pairFor(doc.uri);
    if (!pair) {
      // The original side: each changed rule's effect above it (the comparison is the modified side's).
      const old = this.diffs.originalPairFor(doc.uri);
      if (!old) return [];
      const r = await this.diffs.compare(old.original, old.modified);
      return r.ok && !token.isCancellationRequested ? this.hunkLenses(r.report, 'old', old) : [];
    }
    const r = await this.diffs.compare(pair.original, pair.modified);
    if (token.isCancellationRequested) return [];
    const title = r.ok
      ? `$(git-compare) ${diffLensTitle(r.report)}`
      : `$(warning) Packet Lens: cannot compare (${r.error})`;
    const tooltip = r.ok
      ? `Packet behaviour, ${sideLabel(pair.original)} → ${sideLabel(pair.modified)}: ${r.report.classesTraced} packet classes traced in ${r.ms.toFixed(0)} ms. Click for the report.`
      : r.error;
    return [
      new vscode.CodeLens(lineStart(0), {
        title,
        tooltip,
        command: COMMANDS.compareBehaviour,
        arguments: [pair.original, pair.modified],
      }),
      ...(r.ok ? this.hunkLenses(r.report, 'new', pair) : []),
    ];
  }

  /** Above each changed rule of one side: the headline it causes (src/editor/diff-annotations.ts); a click opens the report. */
  private hunkLenses(report: DiffReport, side: 'old' | 'new', pair: DumpPair): vscode.CodeLens[] {
    return hunkAnnotations(report)
      .filter(n => n.side === side)
      .map(
        n =>
          new vscode.CodeLens(lineStart(n.line), {
            title: `$(git-compare) ${n.text}`,
            tooltip: `${n.tooltip}\nClick for the report.`,
            command: COMMANDS.compareBehaviour,
            arguments: [pair.original, pair.modified],
          }),
      );
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
    this.emitter.dispose();
  }
}

/**
 * The status bar item of the active diff editor when it compares two dumps: the same summary as the
 * CodeLens, which VS Code hides in diff editors unless `diffEditor.codeLens` is on.
 */
export class DiffStatus implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('packetlens.diff', vscode.StatusBarAlignment.Left, 50);
  private readonly subscriptions: vscode.Disposable[];
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(private readonly diffs: BehaviourDiffs) {
    this.item.name = 'Packet Lens: packet behaviour';
    this.subscriptions = [
      vscode.window.tabGroups.onDidChangeTabs(() => this.schedule()),
      vscode.window.tabGroups.onDidChangeTabGroups(() => this.schedule()),
      diffs.onDidCompare(() => this.schedule()),
    ];
    this.schedule();
  }

  /** Updates after the tab change settles (a diff editor opens both documents first). */
  schedule(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.update(), 150);
  }

  private async update(): Promise<void> {
    this.timer = null;
    const pair = this.diffs.activePair();
    if (!pair) {
      this.item.hide();
      return;
    }
    this.item.command = {
      title: 'Compare Packet Behaviour',
      command: COMMANDS.compareBehaviour,
      arguments: [pair.original, pair.modified],
    };
    let done = await this.diffs.peek(pair);
    if (!done) {
      this.item.text = '$(sync~spin) Packet Lens: comparing packet behaviour…';
      this.item.tooltip = `${sideLabel(pair.original)} → ${sideLabel(pair.modified)}`;
      this.item.show();
      done = await this.diffs.compare(pair.original, pair.modified);
    }
    const now = this.diffs.activePair();
    if (now?.original.toString() !== pair.original.toString() || now.modified.toString() !== pair.modified.toString())
      return;
    this.item.text = done.ok
      ? `$(git-compare) ${diffLensTitle(done.report)}`
      : '$(warning) Packet Lens: cannot compare';
    this.item.tooltip = done.ok
      ? `Packet behaviour, ${sideLabel(pair.original)} → ${sideLabel(pair.modified)}. Click for the report.`
      : done.error;
    this.item.show();
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    for (const s of this.subscriptions) s.dispose();
    this.item.dispose();
  }
}
