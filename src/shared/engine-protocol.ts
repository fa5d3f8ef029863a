/**
 * The typed request/response protocol between the extension host and the engine worker (worker_threads on
 * the desktop, a Web Worker in the browser). A worker holds parsed dumps by key: one document's parse (the
 * key is the document), or the two sides of a comparison. Every value crossing is plain data (structured
 * clone): no class instances, no functions. The extension imports this file; the worker implements it.
 */
import type { ReachingPacket } from '../editor/trace-from-here.ts';
import type { DiagnosticsOptions, DumpDiagnostics } from '../editor/diagnostics.ts';
import type { Fold } from '../editor/folding.ts';
import type { HoverResult } from '../editor/hover/hover.ts';
import type { PrepareRename, RenameResult } from '../editor/navigation.ts';
import type { PacketSuggestion } from '../editor/packet-suggest.ts';
import type { QuickFix } from '../editor/quick-fixes.ts';
import type { Range } from '../editor/ranges.ts';
import type { LineVerdict } from '../editor/trace-lens.ts';
import type { NodeFileText, NodeFilesSummary } from '../editor/node-files.ts';
import type { CapturePacket, LiveView } from '../editor/live-compare.ts';
import type { OutlineSymbol } from '../editor/symbols.ts';
import type { ManifestHover } from '../editor/kube/manifest-hover.ts';
import type { ModeSetting } from '../editor/kube/cluster.ts';
import type { NodePick } from '../editor/kube/node-rules.ts';
import type { PortLens } from '../editor/kube/service-lens.ts';
import type { DiagramModel } from './protocol.ts';
import type {
  DiffReport,
  FileDiagnostic,
  InferredAddress,
  LiveComparison,
  NodeConfig,
  ProxyModeName,
  Trace,
} from '../engine/api.ts';

/**
 * A dump's text; or its bytes (a file read from disk, decoded in the worker; the buffer is transferred);
 * or the pieces sent before with `append` (a big document goes in slices, so no single message costs the
 * extension host more than a millisecond or two to copy).
 */
export type DumpText = { readonly text: string } | { readonly bytes: Uint8Array } | { readonly appended: true };

/** An outline symbol without its children: `parent` is the index of its table's row, -1 for a table. */
export interface OutlineRow extends Omit<OutlineSymbol, 'children'> {
  readonly parent: number;
}

/** A slice of a long answer, so neither thread copies it whole in one task. */
export interface Page<T> {
  readonly items: readonly T[];
  readonly total: number;
}

/** What the extension shows without asking again: the status bar, "nothing to trace", the family. */
export interface DumpSummary {
  readonly ruleCount: number;
  readonly tableCount: number;
  readonly chainCount: number;
  readonly family: 4 | 6;
  readonly errorCount: number;
  /** Why nothing can be traced (no tables), or null. */
  readonly empty: string | null;
  /** The first error messages (at most 3), formatted `file:line:col: message`. */
  readonly firstErrors: readonly string[];
  readonly bytes: number;
  readonly parseMs: number;
}

/** One chain's CodeLens, compact: its references are asked for when a lens is resolved. */
export interface ChainLensRow {
  readonly line: number;
  readonly table: string;
  readonly chain: string;
  /** `referenced by 3`, `hook INPUT · policy DROP`. */
  readonly title: string;
  readonly references: number;
}

/** A trace as the worker sends it: `trace` without the outcomes' misses, and the verdict of each line. */
export type WorkerTrace =
  { ok: true; trace: Trace; ms: number; verdicts: LineVerdict[] } | { ok: false; error: string };

/** A trace held against a live capture: the trace as `trace` sends it, the engine's comparison and its words. */
export type LiveResult =
  | {
      ok: true;
      trace: Trace;
      ms: number;
      verdicts: LineVerdict[];
      comparison: LiveComparison;
      view: LiveView;
    }
  | { ok: false; error: string };

export type Comparison =
  | { readonly ok: true; readonly report: DiffReport; readonly ms: number }
  | { readonly ok: false; readonly error: string };

/**
 * The node a trace or a comparison is for: what the editor resolved (node-context.ts) and the node's own
 * files, which the worker reads itself (a parse never happens on the extension host's thread).
 */
export interface NodeRequest {
  readonly node: NodeConfig;
  readonly nodeFiles?: readonly NodeFileText[];
}

/**
 * One file of a cluster's manifests: its URI string and its text (or bytes, or the pieces appended before
 * under the key `${key}\n${file}`). The worker keeps the files that hold Kubernetes objects.
 */
export interface ManifestSource {
  readonly file: string;
  readonly source: DumpText;
}

/** What the extension keeps of a cluster's view (the view itself stays in the worker). */
export interface ClusterSummary {
  readonly label: string;
  readonly mode: ProxyModeName;
  /** The files read that hold Kubernetes objects (URI strings). */
  readonly files: readonly string[];
  readonly services: number;
  readonly pods: number;
  readonly nodes: readonly { readonly name: string; readonly ips: readonly string[] }[];
  /** What reading the manifests found, at most `maxPerFile` of each file; `diagnosticCount` is them all. */
  readonly diagnostics: readonly FileDiagnostic[];
  readonly diagnosticCount: number;
  /** Why the manifests cannot be traced end to end (manifest-trace.ts `nothingToTrace`), or null. */
  readonly empty: string | null;
  readonly family: 4 | 6;
  readonly readMs: number;
}

/** A CodeLens of a Service port: `title` for ports kube-proxy writes no rules for, else the port's index to resolve. */
export interface KubeLensRow {
  readonly line: number;
  readonly title: string | null;
  readonly port: number;
}

/** An end-to-end trace from manifests, as the extension shows it; the node's dump is read with `kubeDump`. */
export type KubeTrace =
  | {
      readonly ok: true;
      readonly node: string;
      readonly mode: ProxyModeName;
      /** `client → node`: the hops' names. */
      readonly route: string;
      /** traceSummary of the trace. */
      readonly summary: string;
      readonly diagram: DiagramModel;
      /** The name the node's dump opens under (`myk8s-worker.rules`). */
      readonly dumpName: string;
      readonly ms: number;
    }
  | { readonly ok: false; readonly error: string; readonly chooseNode?: readonly string[] };

export interface Position {
  readonly line: number;
  readonly character: number;
}

/** Every method: its parameters and its result. `key` names the parsed dump a method works on. */
export interface EngineMethods {
  /** Parses a dump and keeps it under `key` (replacing what was there). */
  /** `encoding`: what the editor decoded the document from (VS Code's `TextDocument.encoding`), if it says. */
  load: {
    params: { key: string; file: string; maxBytes: number; source: DumpText; encoding?: string };
    result: DumpSummary;
  };
  /** Adds a piece of text to what the next `load` of `key` with `{ appended: true }` parses. */
  append: { params: { key: string; text: string }; result: null };
  /** Forgets a parse. */
  drop: { params: { key: string }; result: null };
  diagnostics: { params: { key: string; options: DiagnosticsOptions }; result: DumpDiagnostics };
  hover: { params: { key: string } & Position; result: HoverResult | null };
  /** The outline, flattened (tables first, then chains in table order; at most `max` chains), `limit` rows from `offset`. */
  outline: { params: { key: string; offset: number; limit: number; max: number }; result: Page<OutlineRow> };
  /** The first `max` folds in line order (the editor keeps no more than editor.foldingMaximumRegions). */
  folding: { params: { key: string; max: number }; result: Page<Fold> };
  definition: { params: { key: string } & Position; result: Range | null };
  references: { params: { key: string; includeDeclaration: boolean } & Position; result: Range[] | null };
  prepareRename: { params: { key: string } & Position; result: PrepareRename };
  rename: { params: { key: string; newName: string } & Position; result: RenameResult };
  /** The chain lenses on lines `fromLine`…`toLine` (the visible part of a big dump), at most `max`. */
  chainLenses: { params: { key: string; fromLine: number; toLine: number; max: number }; result: Page<ChainLensRow> };
  chainReferences: { params: { key: string; table: string; chain: string }; result: Range[] };
  quickFixes: { params: { key: string; code: string; range: Range }; result: QuickFix[] };
  suggest: { params: { key: string; query: string; limit: number }; result: PacketSuggestion[] };
  /** "Trace from here": packets that reach a chain, each traced on the node first (trace-from-here.ts). */
  packetsReaching: { params: { key: string; table: string; chain: string } & NodeRequest; result: ReachingPacket[] };
  /**
   * A trace with why-not. What crosses is light: each outcome's `misses` (100k on a 320k-rule dump) stay
   * in the worker, which sends the per-line verdicts the CodeLens and highlights need instead.
   */
  trace: { params: { key: string; packet: string } & NodeRequest; result: WorkerTrace };
  /** The packet a live capture traced, as packet text (for the packet input). */
  capturePacket: { params: { key: string; capture: string }; result: CapturePacket };
  /** Traces `packet` and holds the trace against a live capture (src/editor/live-compare.ts). */
  liveCompare: {
    params: { key: string; packet: string; capture: string; captureName: string } & NodeRequest;
    result: LiveResult;
  };
  /** Compares two parses held by this worker. */
  diff: { params: { oldKey: string; newKey: string } & NodeRequest; result: Comparison };
  /**
   * Reads files that may be the node's own outputs (recognised by content, node-files.ts) against the
   * dump under `key`: what they are, what the node looks like, and what they leave out or contradict.
   * Null when none of them is a node file.
   */
  nodeFiles: { params: { key: string; files: readonly NodeFileText[] }; result: NodeFilesSummary | null };
  /**
   * What the dump says about its node (eval/node-inference.ts): the addresses it implies, and the
   * addresses of the cluster's nodes it names (API server endpoints) that may be this one.
   */
  nodeHints: {
    params: { key: string };
    result: { inferred: InferredAddress[]; clusterNodes: { address: string; from: string }[] };
  };
  /**
   * Reads a cluster's manifests into its view (src/editor/kube/cluster.ts), kept under `key`: the model,
   * and everything derived from it on demand (lenses, hovers, traces, synthesized dumps).
   */
  kubeLoad: {
    params: {
      key: string;
      label: string;
      mode: ModeSetting;
      files: readonly ManifestSource[];
      maxPerFile: number;
    };
    result: ClusterSummary;
  };
  /** The CodeLens rows of the Service ports in `file`. */
  kubeLenses: { params: { key: string; file: string }; result: KubeLensRow[] };
  /** The lens of one Service port (an end-to-end trace): `port` from `kubeLenses`. */
  kubePortLens: { params: { key: string; port: number }; result: PortLens | null };
  kubeHover: { params: { key: string; file: string } & Position; result: ManifestHover | null };
  kubeSuggest: { params: { key: string; query: string; limit: number }; result: PacketSuggestion[] };
  /** Traces `packet` end to end (`node`: the receiving node when the manifests cannot say). */
  kubeTrace: { params: { key: string; packet: string; node: string | null }; result: KubeTrace };
  kubeNodePicks: { params: { key: string }; result: NodePick[] };
  /**
   * `limit` characters from `offset` of the rules synthesized for `node` (`traced`: as the last trace on it
   * showed them), so a 45 MB dump crosses in pieces; null when the manifests define no such node.
   */
  kubeDump: {
    params: { key: string; node: string; traced: boolean; offset: number; limit: number };
    result: { text: string; total: number; fileName: string } | null;
  };
  /** The addresses of the Node object a dump's file name names (or the only node): kube/dump-node.ts. */
  kubeDumpNode: { params: { key: string; fileName: string }; result: InferredAddress[] };
  /** The worker's heap, for the log and the bench. */
  memory: { params: Record<string, never>; result: { heapUsed: number } };
}

export type Method = keyof EngineMethods;
export type Params<M extends Method> = EngineMethods[M]['params'];
export type Result<M extends Method> = EngineMethods[M]['result'];

export interface EngineRequest<M extends Method = Method> {
  readonly id: number;
  readonly method: M;
  readonly params: Params<M>;
}

export type EngineResponse =
  | { readonly id: number; readonly ok: true; readonly result: unknown }
  | { readonly id: number; readonly ok: false; readonly error: string };

export function isEngineResponse(m: unknown): m is EngineResponse {
  if (typeof m !== 'object' || m === null) return false;
  const r = m as { id?: unknown; ok?: unknown; error?: unknown };
  return typeof r.id === 'number' && (r.ok === true || (r.ok === false && typeof r.error === 'string'));
}
