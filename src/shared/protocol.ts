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

export type FlowNodeKind = 'hook' | 'chain' | 'rule' | 'policy' | 'return' | 'routing' | 'branch' | 'assume' | 'nat-skipped' | 'note' | 'end';

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
}

/** What the webview keeps with `setState`: the view's parameters and UI state, never the trace. */
export interface PanelState {
  readonly uri: string;
  readonly packet: string;
  readonly selectedOutcome: number | null;
  readonly collapsed: readonly string[];
}

export type ExtensionToWebview =
  | { readonly type: 'model'; readonly model: DiagramModel; readonly uri: string }
  | { readonly type: 'error'; readonly message: string }
  | { readonly type: 'busy'; readonly message: string };

export type WebviewToExtension =
  | { readonly type: 'ready' }
  | { readonly type: 'reveal'; readonly line: number }
  | { readonly type: 'retrace'; readonly fields: PacketFields }
  | { readonly type: 'openSettings' };

const FIELD_NAMES: readonly (keyof PacketFields)[] = ['protocol', 'src', 'sport', 'dst', 'dport', 'from', 'in', 'state', 'mark'];

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

export function isPacketFields(x: unknown): x is PacketFields {
  if (!isRecord(x)) return false;
  if (!FIELD_NAMES.every((k) => typeof x[k] === 'string' && (x[k] as string).length <= 256)) return false;
  return ['', 'auto', 'outside', 'local'].includes(x.from as string);
}

export function isWebviewToExtension(x: unknown): x is WebviewToExtension {
  if (!isRecord(x)) return false;
  switch (x.type) {
    case 'ready':
    case 'openSettings':
      return true;
    case 'reveal':
      return typeof x.line === 'number' && Number.isInteger(x.line) && x.line >= 0;
    case 'retrace':
      return isPacketFields(x.fields);
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
    x.collapsed.every((c) => typeof c === 'string')
  );
}
