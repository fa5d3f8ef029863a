/**
 * The engine side of the worker protocol (src/shared/engine-protocol.ts): it holds parsed dumps by key and
 * answers requests with the editor logic of src/editor over src/engine. It imports neither `vscode` nor
 * `node:*`, so the desktop worker (worker_threads), the browser's Web Worker and the in-process fallback
 * all run this same code.
 *
 * Long work is spread over short slices (`yieldToMessages`), so a hover that arrives while a big dump's
 * diagnostics are computed is answered between two slices instead of after all of them.
 */
import { chainLenses, isHelpfulChainLens, referencesTitle } from '../editor/chain-lens.ts';
import { inEditorWords, reportInEditorWords, traceInEditorWords } from '../editor/editor-words.ts';
import { dumpDiagnosticSteps } from '../editor/diagnostics.ts';
import { type DumpIndex, analyzeDump } from '../editor/dump-index.ts';
import { foldingRanges } from '../editor/folding.ts';
import { hoverAt } from '../editor/hover/hover.ts';
import { chainAt, definitionOf, prepareRename, referencesOf, renameChain } from '../editor/navigation.ts';
import { suggestPackets } from '../editor/packet-suggest.ts';
import { packetsReaching } from '../editor/trace-from-here.ts';
import { quickFixes } from '../editor/quick-fixes.ts';
import { lineSpan } from '../editor/ranges.ts';
import { type TraceExtra, traceText } from '../editor/run-trace.ts';
import { nftHoverAt } from '../editor/nft/hover.ts';
import { nftDiagnosticSteps } from '../editor/nft/diagnostics.ts';
import { nftChainLenses, nftChainReferences } from '../editor/nft/lens.ts';
import { nftDefinition, nftPrepareRename, nftReferences, nftRename } from '../editor/nft/navigation.ts';
import { nftFolds, nftOutline } from '../editor/nft/outline.ts';
import { type WorkerPort, inProcessPort } from './client.ts';
import { KubeHost } from './kube-host.ts';
import { type OutlineSymbol, outline } from '../editor/symbols.ts';
import { type LineVerdict, traceLineVerdicts } from '../editor/trace-lens.ts';
import { type NodeFileText, readNodeFiles } from '../editor/node-files.ts';
import { capturePacket, compareLive, liveView } from '../editor/live-compare.ts';
import {
  type NodeConfig,
  type Ruleset,
  type Trace,
  clusterNodeHints,
  diffRulesets,
  formatDiagnostic,
  inferNodeAddresses,
  ipvsInterceptors,
  prepareTraceSteps,
} from '../engine/api.ts';
import type {
  ChainLensRow,
  Comparison,
  DumpSummary,
  DumpText,
  EngineMethods,
  EngineRequest,
  EngineResponse,
  Method,
  NodeRequest,
  OutlineRow,
  Params,
  Result,
} from '../shared/engine-protocol.ts';

/** Work this long, then let waiting messages in. */
const SLICE_MS = 20;

type Handlers = { [M in Method]: (p: Params<M>) => Result<M> | Promise<Result<M>> };

export class EngineHost {
  private readonly docs = new Map<string, DumpIndex>();
  private readonly pieces = new Map<string, string[]>();
  /** Clusters' manifests, by key (kube-host.ts). */
  private readonly kube = new KubeHost((source, key) => this.textOf(source, key));
  private readonly outlines = new WeakMap<DumpIndex, OutlineSymbol[]>();
  /** Parses whose first-trace caches are filled (or being filled). */
  private readonly prepared = new WeakSet<DumpIndex>();
  /** The last node files read, per ruleset: a trace sends them each time, they are read once. */
  private readonly nodeReads = new WeakMap<
    Ruleset,
    { files: readonly NodeFileText[]; read: ReturnType<typeof readNodeFiles> }
  >();

  constructor(
    /** Resolves after the messages already queued have been delivered (setTimeout/setImmediate). */
    private readonly yieldToMessages: () => Promise<void> = () => new Promise(r => setTimeout(r, 0)),
    private readonly heapUsed: () => number = () => 0,
  ) {}

  /** Answers one request; never throws (an exception becomes an error response). */
  async handle(req: EngineRequest): Promise<EngineResponse> {
    try {
      const h = this.handlers[req.method] as (p: unknown) => unknown;
      if (typeof h !== 'function') return { id: req.id, ok: false, error: `unknown method ${String(req.method)}` };
      return { id: req.id, ok: true, result: await h(req.params) };
    } catch (e) {
      return { id: req.id, ok: false, error: e instanceof Error ? e.message : String(e) };
    }
  }

  private doc(key: string): DumpIndex {
    const d = this.docs.get(key);
    if (!d) throw new Error(`no parse for ${key}`);
    return d;
  }

  private readonly handlers: Handlers = {
    load: p => this.load(p),
    append: p => {
      let list = this.pieces.get(p.key);
      if (!list) this.pieces.set(p.key, (list = []));
      list.push(p.text);
      return null;
    },
    drop: p => {
      this.docs.delete(p.key);
      this.pieces.delete(p.key);
      this.kube.drop(p.key);
      return null;
    },
    diagnostics: async p => {
      const index = this.doc(p.key);
      const steps = index.nft
        ? nftDiagnosticSteps(index.nft, index.lines, p.options)
        : dumpDiagnosticSteps(index, p.options);
      const result = await this.sliced(steps);
      this.prepareTraces(p.key, index);
      return result;
    },
    hover: p => {
      const index = this.doc(p.key);
      return index.nft ? nftHoverAt(index.nft, index.lines, p.line, p.character) : hoverAt(index, p.line, p.character);
    },
    outline: p => {
      const rows = this.outlineRows(this.doc(p.key), p.max);
      return { items: rows.slice(p.offset, p.offset + p.limit), total: rows.length };
    },
    folding: p => {
      const index = this.doc(p.key);
      const folds = (index.nft ? nftFolds(index.nft, index.lines) : foldingRanges(index)).sort(
        (a, b) => a.start - b.start,
      );
      return { items: folds.slice(0, p.max), total: folds.length };
    },
    definition: p => {
      const index = this.doc(p.key);
      if (index.nft) return nftDefinition(index.nft, p.line, p.character);
      const at = chainAt(index, p.line, p.character);
      return at ? definitionOf(index, at) : null;
    },
    references: p => {
      const index = this.doc(p.key);
      if (index.nft) return nftReferences(index.nft, p.line, p.character, p.includeDeclaration);
      const at = chainAt(index, p.line, p.character);
      return at ? referencesOf(index, at, p.includeDeclaration) : null;
    },
    prepareRename: p => {
      const index = this.doc(p.key);
      return index.nft ? nftPrepareRename(index.nft, p.line, p.character) : prepareRename(index, p.line, p.character);
    },
    rename: p => {
      const index = this.doc(p.key);
      return index.nft
        ? nftRename(index.nft, p.line, p.character, p.newName)
        : renameChain(index, p.line, p.character, p.newName);
    },
    chainLenses: p => {
      const index = this.doc(p.key);
      if (index.nft) {
        const rows = nftChainLenses(index.nft).filter(l => l.line >= p.fromLine && l.line <= p.toLine);
        return { items: rows.slice(0, p.max), total: rows.length };
      }
      const inside = chainLenses(index).filter(
        l => isHelpfulChainLens(l) && l.range.start.line >= p.fromLine && l.range.start.line <= p.toLine,
      );
      const items = inside.slice(0, p.max).map((l): ChainLensRow => ({
        line: l.range.start.line,
        table: l.table,
        chain: l.chain,
        title: referencesTitle(l, index.chain(l.table, l.chain)),
        references: l.references.length,
      }));
      return { items, total: inside.length };
    },
    chainReferences: p => {
      const index = this.doc(p.key);
      if (index.nft) return nftChainReferences(index.nft, p.table, p.chain);
      // A chain's lens lists the rules that jump to it (none for a built-in chain): one lookup, not a
      // search of 110k lenses for each lens VS Code resolves.
      const chain = index.chain(p.table, p.chain);
      if (!chain || chain.builtin) return [];
      return index.referencesTo(p.table, p.chain).map(r => lineSpan(r.line, r.nameStart, r.nameEnd));
    },
    // The quick fixes edit iptables-save lines; nft files get none yet.
    quickFixes: p => {
      const index = this.doc(p.key);
      return index.nft ? [] : quickFixes(index, { code: p.code, range: p.range });
    },
    suggest: p => suggestPackets(this.doc(p.key), p.query, p.limit),
    packetsReaching: p => {
      const index = this.doc(p.key);
      if (index.nft) return []; // the paths are read from iptables criteria
      const chain = index.chain(p.table, p.chain);
      return chain ? packetsReaching(index, p.table, chain, this.nodeOf(p, index.ruleset).node) : [];
    },
    trace: p => {
      const index = this.doc(p.key);
      const { node, notes, extra } = this.nodeOf(p, index.ruleset);
      const r = traceText(index, p.packet, node, extra);
      if (!r.ok) return { ok: false, error: inEditorWords(r.error) };
      return { ok: true, ms: r.ms, ...lightTrace(r.trace, notes) };
    },
    capturePacket: p => capturePacket(p.capture),
    liveCompare: p => {
      const index = this.doc(p.key);
      const { node, notes, extra } = this.nodeOf(p, index.ruleset);
      const r = traceText(index, p.packet, node, extra);
      if (!r.ok) return { ok: false, error: inEditorWords(r.error) };
      const comparison = compareLive(index, r.trace, p.capture);
      return {
        ok: true,
        ms: r.ms,
        ...lightTrace(r.trace, notes),
        comparison,
        view: liveView(comparison, p.captureName),
      };
    },
    diff: p => this.diff(p.oldKey, p.newKey, p),
    nodeFiles: p => this.nodeRead(p.files, this.doc(p.key).ruleset).summary,
    nodeHints: p => {
      const rs = this.doc(p.key).ruleset;
      return {
        inferred: [...inferNodeAddresses(rs)],
        clusterNodes: [...clusterNodeHints(rs)].map(([address, from]) => ({ address, from })),
      };
    },
    kubeLoad: p => this.kube.load(p),
    kubeLenses: p => this.kube.lenses(p),
    kubePortLens: p => this.kube.portLens(p),
    kubeHover: p => this.kube.hover(p),
    kubeSuggest: p => this.kube.suggest(p),
    kubeTrace: p => this.kube.trace(p),
    kubeNodePicks: p => this.kube.nodePicks(p),
    kubeDump: p => this.kube.dump(p),
    kubeDumpNode: p => this.kube.dumpNode(p),
    memory: () => ({ heapUsed: this.heapUsed() }),
  };

  /** Runs `steps` in slices of SLICE_MS, letting waiting messages in between. */
  private async sliced<R>(steps: Generator<unknown, R>): Promise<R> {
    for (;;) {
      const end = performance.now() + SLICE_MS;
      let r = steps.next();
      while (!r.done && performance.now() < end) r = steps.next();
      if (r.done) return r.value;
      await this.yieldToMessages();
    }
  }

  /**
   * After a dump's diagnostics, while the worker is otherwise idle: what its first trace would compute once
   * (src/engine/eval/warm.ts), in slices, so Trace Packet answers sooner. Once per parse; an iptables dump's
   * only (an nft ruleset's rules would be lowered for it).
   */
  private prepareTraces(key: string, index: DumpIndex): void {
    if (index.nft || this.prepared.has(index)) return;
    this.prepared.add(index);
    void this.yieldToMessages()
      .then(() => this.sliced(whileHeld(prepareTraceSteps(index.ruleset), () => this.docs.get(key) === index)))
      .catch(() => {});
  }

  /**
   * Tables first, then their chains: one flat list to page through, with at most `max` chains in all (each
   * table gets its share, in file order); a table with more ends in one row that says how many are left
   * out. VS Code copies a provider's whole answer on the extension host's thread: 110k symbols held it
   * 2.4 s.
   */
  private outlineRows(index: DumpIndex, max: number): OutlineRow[] {
    let tree = this.outlines.get(index);
    if (!tree) this.outlines.set(index, (tree = index.nft ? nftOutline(index.nft, index.lines) : outline(index)));
    const row = (sym: Omit<OutlineSymbol, 'children'>, parent: number): OutlineRow => ({
      name: sym.name,
      kind: sym.kind,
      detail: sym.detail,
      range: sym.range,
      selectionRange: sym.selectionRange,
      parent,
    });
    const rows = tree.map(t => row(t, -1));
    const total = tree.reduce((n, t) => n + t.children.length, 0);
    tree.forEach((t, i) => {
      const share = total <= max ? t.children.length : Math.max(1, Math.floor((max * t.children.length) / total));
      for (const c of t.children.slice(0, share)) rows.push(row(c, i));
      const left = t.children.length - share;
      if (left > 0) {
        const at = t.children[share]!;
        rows.push(
          row(
            {
              name: `… ${left.toLocaleString('en-US')} more chains`,
              kind: 'chain',
              detail: `the outline lists at most ${max.toLocaleString('en-US')} chains: search the file for the others`,
              range: at.range,
              selectionRange: at.selectionRange,
            },
            i,
          ),
        );
      }
    });
    return rows;
  }

  private load(p: EngineMethods['load']['params']): DumpSummary {
    this.docs.delete(p.key); // the old parse can be collected while the new one is built
    const t0 = performance.now();
    const text = this.textOf(p.source, p.key);
    const index = analyzeDump(text, {
      file: p.file,
      maxBytes: p.maxBytes,
      ...(p.encoding ? { decodedFrom: p.encoding } : {}),
    });
    // The chain graph and the chain lenses belong to the parse: CodeLens and hovers after it read them.
    if (!index.nft) {
      index.references();
      chainLenses(index);
    }
    this.docs.set(p.key, index);
    const rs = index.ruleset;
    const errors = rs.diagnostics.filter(d => d.severity === 'error');
    let chainCount = 0;
    for (const t of rs.tables.values()) chainCount += t.chains.size;
    const empty =
      rs.tables.size > 0
        ? null
        : `Nothing to trace in ${rs.file}: ${errors[0] ? errors[0].message : index.nft ? 'it has no tables (an nftables ruleset has table … { } blocks or add table commands)' : 'it has no tables (iptables-save output has *filter, *nat, … sections ending in COMMIT)'}.`;
    return {
      ruleCount: rs.ruleCount,
      tableCount: rs.tables.size,
      chainCount,
      family: rs.family,
      errorCount: errors.length,
      empty,
      firstErrors: errors.slice(0, 3).map(d => formatDiagnostic(rs.file, d)),
      bytes: text.length,
      parseMs: performance.now() - t0,
    };
  }

  /** A source's text; appended pieces are taken from under `key` (and forgotten). */
  private textOf(source: DumpText, key: string): string {
    if (!('appended' in source)) return textOf(source);
    const text = (this.pieces.get(key) ?? []).join('');
    this.pieces.delete(key);
    return text;
  }

  /** The node files read against a ruleset, once for the same files. */
  private nodeRead(files: readonly NodeFileText[], rs: Ruleset): ReturnType<typeof readNodeFiles> {
    const last = this.nodeReads.get(rs);
    if (
      last &&
      last.files.length === files.length &&
      last.files.every((f, i) => f.file === files[i]!.file && f.text === files[i]!.text)
    )
      return last.read;
    const read = readNodeFiles(files, rs);
    this.nodeReads.set(rs, { files, read });
    return read;
  }

  /** The engine's node for a request: the editor's, plus the node's files when they were sent. */
  private nodeOf(p: NodeRequest, rs: Ruleset): { node: NodeConfig; notes: string[]; extra: TraceExtra } {
    if (!p.nodeFiles?.length) return { node: p.node, notes: [], extra: {} };
    const read = this.nodeRead(p.nodeFiles, rs);
    return {
      node: read.context ? { ...p.node, context: read.context } : p.node,
      notes: (read.summary?.notes ?? []).map(n => `node files: ${n.message}`),
      // A bundle's ipvsadm listing: IPVS takes new connections to its virtual services (src/engine/ipvs/).
      extra: {
        ...(read.ipvs ? { interceptors: ipvsInterceptors(read.ipvs) } : {}),
        ...(read.ipsets ? { ipsets: read.ipsets } : {}),
      },
    };
  }

  private diff(oldKey: string, newKey: string, req: NodeRequest): Comparison {
    const a = this.doc(oldKey).ruleset;
    const b = this.doc(newKey).ruleset;
    const { node, notes } = this.nodeOf(req, b);
    const structural = [a, b].flatMap(rs =>
      rs.diagnostics.filter(d => d.severity === 'error').map(d => formatDiagnostic(rs.file, d)),
    );
    if (structural.length)
      return {
        ok: false,
        error: `the dumps have errors; fix them before comparing: ${structural.slice(0, 3).join('; ')}${structural.length > 3 ? ` (and ${structural.length - 3} more)` : ''}`,
      };
    const t0 = performance.now();
    const r = diffRulesets(a, b, { node });
    const ms = performance.now() - t0;
    return r.ok
      ? { ok: true, report: reportInEditorWords({ ...r.report, warnings: [...notes, ...r.report.warnings] }), ms }
      : { ok: false, error: inEditorWords(r.error) };
  }
}

/**
 * A trace as it crosses to the extension: in the editor's words, with the node files' notes first, without
 * the outcomes' misses (the per-line verdicts the CodeLens and highlights need travel instead).
 */
function lightTrace(t: Trace, notes: readonly string[]): { trace: Trace; verdicts: LineVerdict[] } {
  // The verdicts from the engine's misses, then each line's one reason in the editor's words: a trace on a
  // 320k-rule dump has 50,000 misses (5,000 in each of 10 outcomes) and 10,000 lines.
  const verdicts = [...traceLineVerdicts(t).values()];
  for (const v of verdicts) if (v.reason !== null) v.reason = inEditorWords(v.reason);
  const light = { ...t, warnings: [...notes, ...t.warnings], outcomes: t.outcomes.map(o => ({ ...o, misses: [] })) };
  return { verdicts, trace: traceInEditorWords(light) };
}

/** `steps` until `held()` turns false (the parse they work for was replaced or dropped). */
function* whileHeld(steps: Generator<void, void>, held: () => boolean): Generator<void, void> {
  for (const step of steps) {
    if (!held()) return;
    yield step;
  }
}

function textOf(source: Exclude<DumpText, { appended: true }>): string {
  if ('text' in source) return source.text;
  return new TextDecoder('utf-8').decode(source.bytes);
}

/** The engine on the calling thread, behind the same port as a worker: the fallback when none can start. */
export function inProcessEngine(receive: (m: unknown) => void): WorkerPort {
  const host = new EngineHost();
  return inProcessPort(r => host.handle(r), receive);
}
