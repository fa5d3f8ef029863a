/**
 * The message protocol between the extension and the flow-diagram webview, and the diagram model it
 * carries. Both sides import this file; the webview imports types only. Every message is a plain JSON
 * value with a `type` discriminant; the extension checks what the webview sends with the guards below
 * (a webview is a separate, less trusted context).
 */

/** The packet fields the panel lets the user edit; empty strings mean "not given". */
export interface PacketFields {
  readonly protocol: string;
  readonly src: string;
  readonly sport: string;
  readonly dst: string;
  readonly dport: string;
  readonly from: '' | 'auto' | 'outside' | 'local';
  readonly in: string;
  readonly state: string;
  readonly mark: string;
}

export type FlowNodeKind =
  'hook' | 'chain' | 'rule' | 'policy' | 'return' | 'routing' | 'branch' | 'assume' | 'nat-skipped' | 'note' | 'end';

export interface FlowNode {
  readonly id: string;
  readonly kind: FlowNodeKind;
  readonly label: string;
  readonly detail: string | null;
  /** 0-based line of the rule or chain in the dump, to reveal on click. */
  readonly line: number | null;
  /** Nesting: 0 for hooks, 1 for a table's base chain, +1 per jump. */
  readonly depth: number;
  /** A rewrite this node performs, shown on its outgoing edge (`dst → 10.10.1.11:80`). */
  readonly rewrite: string | null;
  /** A step the engine could not decide (assumed) or a target it does not model. */
  readonly flagged: boolean;
}

/** A run of nodes every path below it shares, then the ways it splits (empty at an end state). */
export interface FlowSegment {
  readonly nodes: readonly FlowNode[];
  readonly branches: readonly FlowBranch[];
}

export interface FlowBranch {
  /** Why the paths split here: `random 0.5 taken`, `assumed to match`. */
  readonly label: string;
  /** Share of all packets that follow this branch, as a percentage and an exact fraction. */
  readonly percent: string;
  readonly exact: string;
  readonly segment: FlowSegment;
}

export interface HookVisit {
  readonly hook: 'PREROUTING' | 'INPUT' | 'FORWARD' | 'OUTPUT' | 'POSTROUTING' | 'routing';
  /** Share of all packets that pass here. */
  readonly percent: string;
  readonly visited: boolean;
}

export interface OutcomeSummary {
  readonly index: number;
  readonly disposition: string;
  readonly headline: string;
  readonly percent: string;
  readonly exact: string;
  readonly flagged: boolean;
  /** End-to-end traces from manifests: where the outcome arrives (`pod default/webpod2 on myk8s-worker2`). */
  readonly reaches: string | null;
  /**
   * Paths merged into this outcome (they differ only in mark bits no rule reads), said in words; the graph
   * draws one of them. Null for a single path.
   */
  readonly merged?: string | null;
}

/** One hop of an end-to-end trace from manifests: the client, then the node that receives the packet. */
export interface RouteHop {
  readonly kind: 'client' | 'node' | 'pod' | 'external';
  readonly name: string;
  readonly address: string | null;
  /** Why the packet goes there (MetalLB's announcer election, the client pod's node, …). */
  readonly reason: string;
}

/** How a graph element reads: ordinary, a packet's end by drop/reject (error colour), or resting on an unknown. */
export type GraphTone = 'normal' | 'accept' | 'error' | 'unknown';

/** One rule (or policy, or assumption) a packet crossed, as a row of a graph node. */
export interface GraphRow {
  /** `nat KUBE-SVC-… #2`: the table, chain and 1-based rule position (the full names; the view may clip). */
  readonly where: string;
  /** What it did: `jump KUBE-SEP-…`, `DNAT → 10.10.1.11:80`, `policy ACCEPT`. */
  readonly verdict: string;
  /** 0-based line in the dump, to reveal on click. */
  readonly line: number | null;
  /** Why it matched (or, for a walk, why nothing in the chain did), for the hover and the text outline. */
  readonly why: string;
  /** A jump into a chain the packet walked without any rule matching: hidden while the walk is collapsed. */
  readonly walk: boolean;
  /** A rewrite this row does (`dst → 10.10.1.11:80`, `mark 0x0 → 0x4000`), drawn on the connector after it. */
  readonly rewrite: string | null;
  readonly tone: GraphTone;
}

export type GraphNodeKind = 'rules' | 'balance' | 'routing' | 'end';

/** A node of the flow graph: a run of rules one set of paths crossed, a load-balancing split, a routing decision or an end. */
export interface GraphNode {
  readonly id: string;
  readonly kind: GraphNodeKind;
  /** The lane (hook visit) it belongs to; null for routing decisions and ends. */
  readonly lane: string | null;
  readonly title: string;
  /** For a load-balance node: what chooses the way (`-m statistic`, nft `numgen`, the IPVS scheduler). */
  readonly chooser?: string;
  readonly rows: readonly GraphRow[];
  /** Share of all packets that cross it. */
  readonly percent: string;
  readonly exact: string;
  readonly tone: GraphTone;
  /** Hover text: why the packet is here, what it did. */
  readonly why: string;
  /** 0-based line to reveal when the node itself (not a row) is clicked. */
  readonly line: number | null;
}

/** An edge: the packets that go from one node to the next, with their share and the rewrites done on the way. */
export interface GraphEdge {
  readonly id: string;
  readonly from: string;
  readonly to: string;
  /** Share of all packets along it, as a float (edge width), a percentage, a near simple fraction and exactly. */
  readonly share: number;
  readonly percent: string;
  /** `≈ 1/3`, `1/2` (exact when simple), or '' when no short fraction is close. */
  readonly approx: string;
  readonly exact: string;
  /** NAT rewrites and mark changes done where the edge leaves (`dst → 10.10.1.11:80`). */
  readonly rewrites: readonly string[];
  /** A chain folded into the edge (a load-balancing target such as `nat KUBE-SEP-…`), with its line. */
  readonly via: string | null;
  readonly line: number | null;
  /** Leaves a load-balancing node: the edge's label leads with its probability. */
  readonly balance: boolean;
}

/** A lane: one visit of a netfilter hook (`PREROUTING`, `FORWARD`, …), drawn as a box around its nodes. */
export interface GraphLane {
  readonly id: string;
  readonly label: string;
}

/** The trace as a graph: paths that cross the same rules share nodes (one FORWARD, one POSTROUTING). */
export interface FlowGraph {
  readonly lanes: readonly GraphLane[];
  readonly nodes: readonly GraphNode[];
  readonly edges: readonly GraphEdge[];
}

export interface DiagramModel {
  readonly title: string;
  readonly packet: string;
  readonly fields: PacketFields;
  readonly from: 'outside' | 'local';
  readonly hooks: readonly HookVisit[];
  readonly outcomes: readonly OutcomeSummary[];
  readonly flow: FlowSegment;
  readonly warnings: readonly string[];
  /** Outcomes left out of the drawing (very many branches). */
  readonly omitted: number;
  /** client → node of an end-to-end trace from manifests; empty for a trace through a dump. */
  readonly route: readonly RouteHop[];
  /** `this file has N errors; the kernel would refuse it; results assume …`, shown above everything else. */
  readonly fileErrors?: string;
  /** The drawn outcomes as a graph (what the panel shows; `flow` is the same paths as a tree). */
  readonly graph?: FlowGraph;
}

/** One fate of a packet class in a behaviour comparison: `50%  forwarded, DNAT 10.10.1.11:80, masqueraded to …`. */
export interface DiffFateView {
  readonly percent: string;
  readonly exact: string;
  readonly text: string;
  /** It rests on an undecidable match. */
  readonly flagged: boolean;
}

/** A rule the comparison names on one side; `line` is 0-based, to reveal it. */
export interface DiffRuleView {
  readonly side: 'old' | 'new';
  readonly line: number;
  /** `old.rules:109`. */
  readonly where: string;
  /** `nat KUBE-SVC-DLGPAL4ZCYSJ7UPR #2`. */
  readonly rule: string;
  readonly text: string;
}

/** A class of packets whose fate changed, with the classes that changed the same way. */
export interface DiffItemView {
  /** Index of the class in the report: what the trace buttons send back. */
  readonly change: number;
  /** The representative packet, in the Trace Packet syntax. */
  readonly packet: string;
  /** A condition the packet text cannot carry (the client's session-affinity entry). */
  readonly note: string | null;
  readonly aspects: readonly string[];
  readonly approximate: boolean;
  readonly old: readonly DiffFateView[];
  readonly new: readonly DiffFateView[];
  readonly oldRules: readonly DiffRuleView[];
  readonly newRules: readonly DiffRuleView[];
  readonly alike: readonly { readonly change: number; readonly packet: string }[];
  /** Classes alike beyond those listed. */
  readonly alikeMore: number;
}

export interface DiffGroupView {
  /** `Service default/svc1:svc1-webport`, `chain filter FORWARD`. */
  readonly title: string;
  readonly classes: number;
  readonly aspects: readonly string[];
  readonly items: readonly DiffItemView[];
}

export interface DiffViewModel {
  readonly oldLabel: string;
  readonly newLabel: string;
  /** "N packet classes change · M Services affected". */
  readonly summary: string;
  /** The change in a reviewer's words, one sentence per Service or chain (the CLI's first lines). */
  readonly headlines: readonly string[];
  readonly identical: boolean;
  /** `191 packet classes traced · 2 chains differ (counters and comments aside)`. */
  readonly facts: string;
  readonly changedChains: readonly string[];
  readonly groups: readonly DiffGroupView[];
  /** Items left out of the view (very many changes). */
  readonly omitted: number;
  readonly approximations: readonly string[];
  readonly warnings: readonly string[];
}

/** What the webview keeps with `setState`: the view's parameters and UI state, never the trace. */
export interface PanelState {
  readonly uri: string;
  readonly packet: string;
  readonly selectedOutcome: number | null;
  readonly collapsed: readonly string[];
  /** Absent in states saved before traces from manifests existed: a dump. */
  readonly origin?: TraceOrigin;
  /** The flow graph's view: the non-matching walk drawn, scaled to the panel's width, the focused node. */
  readonly showWalks?: boolean;
  readonly fit?: boolean;
  readonly focus?: string | null;
}

/** Where a drawn trace came from: a dump, or the manifests of a cluster (end to end). */
export type TraceOrigin = 'dump' | 'manifests';

/** The comparison panel's state: the two dumps compared (the report is computed again on restore). */
export interface DiffPanelState {
  readonly kind: 'diff';
  readonly oldUri: string;
  readonly newUri: string;
}

export type ExtensionToWebview =
  | { readonly type: 'model'; readonly model: DiagramModel; readonly uri: string; readonly origin: TraceOrigin }
  | { readonly type: 'diff'; readonly model: DiffViewModel; readonly state: DiffPanelState }
  | { readonly type: 'error'; readonly message: string }
  | { readonly type: 'busy'; readonly message: string };

export type WebviewToExtension =
  | { readonly type: 'ready' }
  | { readonly type: 'reveal'; readonly line: number }
  | { readonly type: 'retrace'; readonly fields: PacketFields }
  | { readonly type: 'openSettings' }
  | { readonly type: 'traceClass'; readonly side: 'old' | 'new'; readonly change: number }
  | { readonly type: 'revealRule'; readonly side: 'old' | 'new'; readonly line: number }
  /** The drawn graph, to save: SVG text, or PNG as base64. */
  | { readonly type: 'export'; readonly format: 'svg' | 'png'; readonly data: string }
  /** The diff report as the CLI's --markdown, to copy. */
  | { readonly type: 'copyMarkdown' }
  /** The flow diagram of this packet is drawn (the editor's heavier updates for a big trace follow it). */
  | { readonly type: 'drawn'; readonly packet: string };

/** Largest export the extension accepts from the webview (characters). */
export const MAX_EXPORT_CHARS = 64 * 1024 * 1024;

const FIELD_NAMES: readonly (keyof PacketFields)[] = [
  'protocol',
  'src',
  'sport',
  'dst',
  'dport',
  'from',
  'in',
  'state',
  'mark',
];

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

export function isPacketFields(x: unknown): x is PacketFields {
  if (!isRecord(x)) return false;
  if (!FIELD_NAMES.every(k => typeof x[k] === 'string' && (x[k] as string).length <= 256)) return false;
  return ['', 'auto', 'outside', 'local'].includes(x.from as string);
}

export function isWebviewToExtension(x: unknown): x is WebviewToExtension {
  if (!isRecord(x)) return false;
  switch (x.type) {
    case 'ready':
    case 'openSettings':
    case 'copyMarkdown':
      return true;
    case 'export':
      return (
        (x.format === 'svg' || x.format === 'png') && typeof x.data === 'string' && x.data.length <= MAX_EXPORT_CHARS
      );
    case 'reveal':
      return typeof x.line === 'number' && Number.isInteger(x.line) && x.line >= 0;
    case 'drawn':
      return typeof x.packet === 'string' && x.packet.length <= 4096;
    case 'retrace':
      return isPacketFields(x.fields);
    case 'traceClass':
      return (
        (x.side === 'old' || x.side === 'new') &&
        typeof x.change === 'number' &&
        Number.isInteger(x.change) &&
        x.change >= 0
      );
    case 'revealRule':
      return (
        (x.side === 'old' || x.side === 'new') && typeof x.line === 'number' && Number.isInteger(x.line) && x.line >= 0
      );
    default:
      return false;
  }
}

export function isPanelState(x: unknown): x is PanelState {
  return (
    isRecord(x) &&
    typeof x.uri === 'string' &&
    typeof x.packet === 'string' &&
    (x.selectedOutcome === null || typeof x.selectedOutcome === 'number') &&
    Array.isArray(x.collapsed) &&
    x.collapsed.every(c => typeof c === 'string') &&
    (x.origin === undefined || x.origin === 'dump' || x.origin === 'manifests') &&
    (x.showWalks === undefined || typeof x.showWalks === 'boolean') &&
    (x.fit === undefined || typeof x.fit === 'boolean') &&
    (x.focus === undefined || x.focus === null || typeof x.focus === 'string')
  );
}

export function isDiffPanelState(x: unknown): x is DiffPanelState {
  return isRecord(x) && x.kind === 'diff' && typeof x.oldUri === 'string' && typeof x.newUri === 'string';
}
