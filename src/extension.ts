/**
 * The composition root of the VS Code extension (node and browser bundles alike): it creates the dump
 * store, the providers, the trace controller, the flow-diagram and comparison panels and the manifest
 * features, registers them, and pushes every disposable into `context.subscriptions`. Nothing is parsed
 * here, nor anywhere on the extension host's thread: each open dump has an engine worker (spawn-node.ts on
 * the desktop; esbuild swaps in spawn-web.ts for the browser) that parses it after activation, when it is
 * quiet, and answers for it; manifests are read when a provider first asks about a YAML document that
 * holds Kubernetes objects.
 */
import * as vscode from 'vscode';
import type { Settings } from './editor/settings.ts';
import type { NodeRequest } from './shared/engine-protocol.ts';
import { DumpCodeLens } from './vscode/codelens-provider.ts';
import {
  COMMANDS,
  DIFF_VIEW_TYPE,
  LANGUAGE_ID,
  NFT_LANGUAGE_ID,
  RULESET_LANGUAGES,
  VIEW_TYPE,
  YAML_LANGUAGE_ID,
} from './vscode/commands.ts';
import { TraceDecorations } from './vscode/decorations.ts';
import { DiagramPanel } from './vscode/diagram-panel.ts';
import { DiagnosticsController, DumpCodeActions } from './vscode/diagnostics-controller.ts';
import { BehaviourDiffs, DiffStatus, DiffSummaryLens } from './vscode/diff-controller.ts';
import { DiffPanel } from './vscode/diff-panel.ts';
import { type Analysis, DumpStore } from './vscode/dump-store.ts';
import { DumpHover } from './vscode/hover-provider.ts';
import { KubeManifests } from './vscode/kube-manifests.ts';
import { ManifestDiagnostics } from './vscode/manifest-diagnostics.ts';
import { ManifestWorkspace } from './vscode/manifest-workspace.ts';
import { type ManifestHost, ManifestRegistry } from './vscode/manifest-registry.ts';
import { DumpNavigation } from './vscode/navigation-providers.ts';
import { rulesetLanguageDetection } from './vscode/ruleset-language.ts';
import { SECTION, currentSettings } from './vscode/settings.ts';
import { stallMonitor, timingLog, workerSpawner } from './vscode/spawn-node.ts';
import { timing, useTimingLog } from './vscode/timing.ts';
import { Busy } from './vscode/busy.ts';
import { openExample } from './vscode/examples.ts';
import { useLog, warn } from './vscode/notify.ts';
import { NodeContexts } from './vscode/node-contexts.ts';
import { NodeStatus } from './vscode/node-status.ts';
import { DumpStatus } from './vscode/status.ts';
import { type TraceArgument, TraceController } from './vscode/trace-controller.ts';
import { TraceSessions } from './vscode/trace-sessions.ts';
import { LiveCompare } from './vscode/live-compare.ts';
import { VIRTUAL_SCHEME, VirtualDumps } from './vscode/virtual-dumps.ts';

export function activate(context: vscode.ExtensionContext): void {
  const t0 = performance.now();
  const log = vscode.window.createOutputChannel('Packet Lens', { log: true });
  context.subscriptions.push(log);
  useLog(log);
  try {
    compose(context, log);
    log.info(`activated in ${(performance.now() - t0).toFixed(1)} ms`);
  } catch (e) {
    const message = e instanceof Error ? (e.stack ?? e.message) : String(e);
    log.error(`activation failed: ${message}`);
    void vscode.window.showErrorMessage(`Packet Lens failed to start: ${e instanceof Error ? e.message : String(e)}`);
  }
}

export function deactivate(): void {
  // Everything is in context.subscriptions.
}

function compose(context: vscode.ExtensionContext, log: vscode.LogOutputChannel): void {
  const subs = context.subscriptions;
  let cached: Settings | null = null;
  const settings = () => (cached ??= currentSettings());

  subs.push(stallMonitor(m => log.warn(m)));
  useTimingLog(timingLog(m => log.info(m)));
  subs.push({ dispose: () => useTimingLog(null) });
  const busy = new Busy();
  subs.push(
    busy,
    vscode.commands.registerCommand(COMMANDS.cancelWork, () => busy.cancel()),
  );
  // Each engine worker's heap is capped (packetlens.limits.engineMemoryMB), and the open dumps' workers keep
  // within that much together by dropping the parses of dumps not on screen (issue 12).
  const heapMb = () => settings().limits.engineMemoryMB;
  const spawn = workerSpawner(context.extensionUri, m => log.info(m), undefined, heapMb);
  const store = new DumpStore(
    () => settings().limits.maxFileSizeMB * 1048576,
    spawn,
    m => log.error(m),
    (label, cancel) => busy.start(label, cancel),
    {
      budget: () => heapMb() * 1048576,
      visible: uri => vscode.window.visibleTextEditors.some(e => e.document.uri.toString() === uri.toString()),
    },
  );
  const sessions = new TraceSessions();
  const decorations = new TraceDecorations(context.extensionUri, sessions);
  const diagnostics = new DiagnosticsController(store, settings, m => log.error(m));
  // Set below: the comparison of two dumps, which the dump CodeLens and the panels consult.
  let diffs: BehaviourDiffs | null = null;
  const codeLens = new DumpCodeLens(
    store,
    sessions,
    () => ({ chains: settings().chainLenses, maxChains: settings().limits.chainLensMaxChains }),
    m => log.debug(m),
    uri => diffs?.inDumpDiffOnly(uri) ?? false,
  );
  const navigation = new DumpNavigation(store);
  const status = new DumpStatus(uri => diagnostics.notesFor(uri));
  const virtualDumps = new VirtualDumps();
  // Set below: the node context of each dump (status item, traces, comparisons).
  let nodes: NodeContexts | null = null;
  const nodeFor = async (a: Analysis): Promise<NodeRequest> =>
    nodes ? nodes.requestFor(a) : { node: settings().node };
  const controller = new TraceController(store, sessions, context.globalState, settings, nodeFor, busy);
  // Set below: the panel's handlers route traces from manifests to the manifest features.
  let manifests: ManifestRegistry | null = null;
  const panel = new DiagramPanel(context.extensionUri, {
    reveal: (uri, line) => void controller.reveal(uri, line),
    retrace: (uri, fields, origin) =>
      void (origin === 'manifests' ? manifests?.retrace(uri, fields) : controller.retrace(uri, fields)),
    restore: (uri, packet, origin) =>
      void (origin === 'manifests' ? manifests?.retrace(uri, packet) : controller.restore(uri, packet)),
    openSettings: () => void vscode.commands.executeCommand('workbench.action.openSettings', SECTION),
  });
  controller.panel = panel;
  const host: ManifestHost = {
    virtualDumps,
    settings,
    memento: context.globalState,
    trace: (uri, packet) => controller.traceCommand({ uri: uri.toString(), ...(packet ? { packet } : {}) }),
    showDiagram: (model, uri, origin) => panel.show(model, uri, false, origin),
    panelError: message => panel.error(message),
    log: message => log.info(message),
  };
  const manifestDiagnostics = new ManifestDiagnostics(() => settings().limits.maxDiagnostics);
  const manifestWorkspace = new ManifestWorkspace(
    settings,
    m => log.info(m),
    spawn,
    (root, files, summary) => manifestDiagnostics.publish(root, files, summary.diagnostics),
    (label, cancel) => busy.start(label, cancel),
  );
  manifests = new ManifestRegistry(host, new KubeManifests(manifestWorkspace));
  const diffPanel = new DiffPanel(context.extensionUri, {
    trace: (side, change) => void diffs?.traceClass(side, change),
    reveal: (side, line) => void diffs?.revealRule(side, line),
    restore: state => void diffs?.restore(state),
    copyMarkdown: () => void diffs?.copyMarkdown(),
  });
  diffs = new BehaviourDiffs(store, settings, diffPanel, controller, m => log.info(m), nodeFor, busy);
  nodes = new NodeContexts(context.workspaceState, manifestWorkspace, m => log.info(m));
  const nodeStatus = new NodeStatus(store, nodes);
  const live = new LiveCompare(store, sessions, nodeFor, () => settings().limits.maxFileSizeMB, busy);
  const refreshNode = () => void nodeStatus.update();
  const diffLens = new DiffSummaryLens(diffs);
  const diffStatus = new DiffStatus(diffs);
  subs.push(
    store,
    sessions,
    decorations,
    diagnostics,
    codeLens,
    status,
    virtualDumps,
    panel,
    manifestDiagnostics,
    manifestWorkspace,
    manifests,
    diffPanel,
    diffs,
    diffLens,
    diffStatus,
    nodes,
    nodeStatus,
    live,
  );

  // iptables-save dumps and nftables rulesets: one set of providers, the engine worker answers for the format.
  const selector: vscode.DocumentSelector = [{ language: LANGUAGE_ID }, { language: NFT_LANGUAGE_ID }];
  subs.push(rulesetLanguageDetection(m => log.info(m)));
  subs.push(
    vscode.languages.registerDocumentSymbolProvider(selector, navigation, { label: 'Packet Lens' }),
    vscode.languages.registerFoldingRangeProvider(selector, navigation),
    vscode.languages.registerDefinitionProvider(selector, navigation),
    vscode.languages.registerReferenceProvider(selector, navigation),
    vscode.languages.registerRenameProvider(selector, navigation),
    vscode.languages.registerHoverProvider(selector, new DumpHover(store)),
    vscode.languages.registerCodeLensProvider(selector, codeLens),
    vscode.languages.registerCodeLensProvider(selector, diffLens),
    vscode.languages.registerCodeActionsProvider(selector, new DumpCodeActions(store), {
      providedCodeActionKinds: DumpCodeActions.kinds,
    }),
    vscode.workspace.registerTextDocumentContentProvider(VIRTUAL_SCHEME, virtualDumps),
    vscode.window.registerWebviewPanelSerializer(VIEW_TYPE, panel),
    vscode.window.registerWebviewPanelSerializer(DIFF_VIEW_TYPE, diffPanel),
  );

  subs.push(
    vscode.commands.registerCommand(COMMANDS.tracePacket, (arg: TraceArgument) =>
      manifests.handlesTrace(arg) ? manifests.traceCommand(arg) : controller.traceCommand(arg),
    ),
    vscode.commands.registerCommand(COMMANDS.clearTrace, () => {
      sessions.clear();
      live.clear();
    }),
    vscode.commands.registerCommand(COMMANDS.compareLiveTrace, (uri?: unknown) => live.command(uri)),
    vscode.commands.registerCommand(COMMANDS.showFlowDiagram, (uri?: vscode.Uri) => controller.showDiagram(uri)),
    vscode.commands.registerCommand(COMMANDS.showKubeProxyRules, () => manifests.showKubeProxyRules()),
    vscode.commands.registerCommand(COMMANDS.compareBehaviour, (first?: unknown, second?: unknown) =>
      diffs.command(first, second),
    ),
    vscode.commands.registerCommand(COMMANDS.setNode, (uri?: vscode.Uri) => nodeStatus.pick(uri)),
    vscode.commands.registerCommand(COMMANDS.showLog, () => log.show(true)),
    vscode.commands.registerCommand(COMMANDS.openExample, (which?: unknown) =>
      openExample(context.extensionUri, virtualDumps, which),
    ),
  );
  refreshNode();
  subs.push(
    nodes.onDidChange(() => {
      refreshNode();
      // Open traces follow the node they were made for: run their packets again.
      for (const doc of vscode.workspace.textDocuments) {
        const a = isDump(doc) ? store.peek(doc) : undefined;
        const s = a && sessions.get(a.uri);
        if (a && s) void controller.run(a, s.packet, false);
      }
      diffStatus.schedule();
    }),
    manifestWorkspace.onDidChange(refreshNode),
  );

  // Manifest problems are published when a cluster's view is built: build it for every open manifest
  // (as dumps are parsed when opened), and again after the manifests change.
  let manifestTimer: ReturnType<typeof setTimeout> | null = null;
  const manifestProblems = () => {
    if (manifestTimer) clearTimeout(manifestTimer);
    manifestTimer = setTimeout(() => {
      manifestTimer = null;
      for (const doc of vscode.workspace.textDocuments) {
        if (manifestWorkspace.isKubernetes(doc))
          manifestWorkspace
            .viewFor(doc)
            .catch((e: unknown) => log.error(`reading the manifests of ${doc.uri.toString()} failed: ${String(e)}`));
      }
    }, 300);
  };
  manifestProblems();
  subs.push(
    { dispose: () => manifestTimer && clearTimeout(manifestTimer) },
    manifestWorkspace.onDidChange(manifestProblems),
    vscode.workspace.onDidOpenTextDocument(doc => doc.languageId === YAML_LANGUAGE_ID && manifestProblems()),
  );

  const isDump = (doc: vscode.TextDocument) => RULESET_LANGUAGES.includes(doc.languageId);
  // Parse open dumps (and dumps opened later) after activation, so diagnostics appear without a request.
  const touch = (doc: vscode.TextDocument) => {
    if (isDump(doc))
      store.get(doc).catch((e: unknown) => log.error(`parsing ${doc.uri.toString()} failed: ${String(e)}`));
  };
  setTimeout(() => vscode.workspace.textDocuments.forEach(touch), 0);
  subs.push(
    vscode.workspace.onDidOpenTextDocument(doc => {
      if (isDump(doc)) timing(() => `opened ${doc.uri.path.slice(doc.uri.path.lastIndexOf('/') + 1)} at ${Date.now()}`);
      touch(doc);
    }),
    vscode.workspace.onDidChangeTextDocument(e => {
      if (!isDump(e.document) || e.contentChanges.length === 0) return;
      store.changed(e.document);
      touch(e.document);
    }),
    store.onDidFail(f => {
      diagnostics.failed(f.uri, f.error.message);
      void warn(f.error.message);
    }),
    vscode.workspace.onDidCloseTextDocument(doc => {
      store.forget(doc.uri);
      diagnostics.closed(doc.uri);
      sessions.clear(doc.uri);
    }),
    store.onDidAnalyze(a => {
      log.info(`parsed ${a.uri.toString()} v${a.version}: ${a.summary.ruleCount} rules in ${a.parseMs.toFixed(0)} ms`);
      diagnostics.analyzed(a);
      controller.analyzed(a);
      setTimeout(() => {
        status.update(a);
        refreshNode();
      }, 100);
      // A side of an open dump diff changed: its summary follows.
      if (
        diffs
          .dumpPairs()
          .some(p => p.original.toString() === a.uri.toString() || p.modified.toString() === a.uri.toString())
      )
        diffStatus.schedule();
    }),
    diagnostics.onDidPublish(uri => {
      const editor = vscode.window.activeTextEditor;
      if (editor?.document.uri.toString() === uri.toString()) status.update(store.peek(editor.document));
    }),
    sessions.onDidChange(uri => {
      log.debug(`trace changed for ${uri.toString()}: refreshing CodeLens and highlights`);
      codeLens.refresh();
      decorations.refresh();
      live.refresh();
    }),
    vscode.window.onDidChangeVisibleTextEditors(() => {
      decorations.refresh();
      live.refresh();
    }),
    vscode.window.onDidChangeTextEditorVisibleRanges(e => codeLens.scrolled(e)),
    // A dump shown only in a diff editor keeps its CodeLens to the behaviour summary.
    vscode.window.tabGroups.onDidChangeTabs(() => codeLens.refresh()),
    vscode.window.onDidChangeActiveTextEditor(editor => {
      status.update(editor ? store.peek(editor.document) : undefined);
      refreshNode();
    }),
    vscode.workspace.onDidChangeConfiguration(e => {
      if (!e.affectsConfiguration(SECTION)) return;
      cached = null;
      codeLens.refresh();
      // A raised memory limit: the dumps that could not be read are read again.
      if (e.affectsConfiguration(`${SECTION}.limits.engineMemoryMB`))
        for (const uri of store.retryFailed()) {
          const doc = vscode.workspace.textDocuments.find(d => d.uri.toString() === uri.toString());
          if (doc) touch(doc);
        }
      if (e.affectsConfiguration(`${SECTION}.node.contextFiles`))
        nodes?.filesChanged('packetlens.node.contextFiles changed');
      else if (e.affectsConfiguration(`${SECTION}.node`)) refreshNode();
      if (
        e.affectsConfiguration(`${SECTION}.kubeProxy`) ||
        e.affectsConfiguration(`${SECTION}.manifests`) ||
        e.affectsConfiguration(`${SECTION}.limits`)
      )
        manifestWorkspace.reconfigured();
    }),
  );
}
