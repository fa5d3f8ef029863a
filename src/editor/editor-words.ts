/**
 * The engine's messages speak to both of its front ends, and some name the CLI's flags ("pass --node-ip").
 * In the editor a flag means nothing: each such phrase is said in the editor's words here — the status
 * bar's Node item, the command behind it, the setting — and the message says which action helps, so the
 * glue can put a button on it. Checked by test/editor/editor-words.test.ts against every phrase of the
 * engine's sources that names a flag.
 */
import type { Trace } from '../engine/api.ts';

/** What a button on the message does: choose the node (status item / command), open the log. */
export type EditorAction = 'setNode' | 'chooseReceivingNode';

/** The command that opens the node context quick pick, as its title reads in the Command Palette. */
export const SET_NODE_TITLE = 'Packet Lens: Set Node for This File…';

const NODE = `choose the node's address with the Node item in the status bar (${SET_NODE_TITLE})`;
/** The node's own files in the editor: beside the dump, or named by the setting. */
const NODE_FILES =
  "put the node's `ip -j addr`, `ip -j route show table all` and `sysctl -a` outputs beside the dump (or name them in packetlens.node.contextFiles)";

/** [phrase, editor wording, action]; the first that matches a spot wins, longest phrases first. */
const PHRASES: readonly (readonly [RegExp, string, EditorAction | null])[] = [
  [/\(pass --node-ip or set packetlens\.node\.addresses to see it\)/g, `(${NODE} to see it)`, 'setNode'],
  [/or pass --node-ip \/ set packetlens\.node\.addresses/g, `or ${NODE}`, 'setNode'],
  [/\(pass --node-ip to say otherwise\)/g, `(to say otherwise, ${NODE})`, 'setNode'],
  [/\(pass --node-ip to decide\)/g, `(to decide, ${NODE})`, 'setNode'],
  [/if it is this one, pass --node-ip (\S+)/g, `if it is this one, ${NODE} and choose $1`, 'setNode'],
  [/\(give --node-ip or a source\)/g, `(write a source in the packet, or ${NODE})`, 'setNode'],
  [/\(pass --node-ip\)/g, `(${NODE})`, 'setNode'],
  [/pass --node-ip/g, NODE, 'setNode'],
  [/give (?:the node's (?:own )?files|its ip -j route) with --node-context/g, NODE_FILES, null],
  [
    /\(pass --affinity (\S+) to assume one\)/g,
    '(the editor traces a client without affinity entries; the trace shows both answers where it matters)',
    null,
  ],
  [/: give --node \(([^)]*)\)/g, ': choose the node that receives it ($1)', 'chooseReceivingNode'],
  [/: give --node\b/g, ': choose the node that receives it', 'chooseReceivingNode'],
];

export interface EditorWords {
  readonly text: string;
  /** The buttons the message should carry, in order, without repeats. */
  readonly actions: readonly EditorAction[];
}

/** The message in the editor's words, and the actions that help with it. */
export function editorWords(message: string): EditorWords {
  // Every phrase names --node… or --affinity: most messages (a trace's thousands of why-not reasons) name
  // neither and skip the regular expressions.
  if (!message.includes('--node') && !message.includes('--affinity')) return { text: message, actions: [] };
  let text = message;
  const actions: EditorAction[] = [];
  for (const [re, words, action] of PHRASES) {
    re.lastIndex = 0;
    if (!re.test(text)) continue;
    re.lastIndex = 0;
    text = text.replace(re, words);
    if (action && !actions.includes(action)) actions.push(action);
  }
  return { text, actions };
}

/** `editorWords(message).text`, for lists of notes and warnings. */
export function inEditorWords(message: string): string {
  return editorWords(message).text;
}

/** Whether a manifest trace failed only because the manifests cannot say which node receives the packet. */
export function needsReceivingNode(error: string): boolean {
  return /: give --node\b/.test(error);
}

/** A trace with every message the user reads in the editor's words (the value is copied, not changed). */
export function traceInEditorWords(trace: Trace): Trace {
  const w = inEditorWords;
  return {
    ...trace,
    warnings: trace.warnings.map(w),
    outcomes: trace.outcomes.map(o => ({
      ...o,
      notes: o.notes.map(w),
      reason: o.reason === null ? null : w(o.reason),
      misses: o.misses.map(m => ({ ...m, reason: w(m.reason) })),
      assumptions: o.assumptions.map(a => ({ ...a, reason: w(a.reason) })),
      events: o.events.map(e => (e.kind === 'note' ? { ...e, text: w(e.text) } : e)),
    })),
  };
}

/** A comparison's report with its warnings in the editor's words. */
export function reportInEditorWords<R extends { readonly warnings: readonly string[] }>(report: R): R {
  return { ...report, warnings: report.warnings.map(inEditorWords) };
}
