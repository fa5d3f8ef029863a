/**
 * How the extension's notifications read: one "Packet Lens:" prefix, the engine's words said the editor's
 * way (editor-words.ts), and the buttons that help — the Node item's command when the node is what is
 * missing, the setting a message names (opened at that setting), and "Show Log" on every error.
 */
import { type EditorAction, editorWords } from './editor-words.ts';

export const PREFIX = 'Packet Lens: ';

export type Severity = 'info' | 'warning' | 'error';

export type MessageButton =
  | { readonly kind: 'setNode'; readonly title: 'Set Node…' }
  | { readonly kind: 'chooseReceivingNode'; readonly title: 'Choose the Node…' }
  | { readonly kind: 'openSetting'; readonly title: 'Open Setting'; readonly setting: string }
  | { readonly kind: 'showLog'; readonly title: 'Show Log' };

export interface EditorMessage {
  readonly text: string;
  readonly buttons: readonly MessageButton[];
}

const SETTING = /\b(packetlens\.[a-zA-Z]+\.[a-zA-Z]+)\b/;
/** Prefixes the extension used to write, folded into the one prefix. */
const OLD_PREFIX = /^(Packet Lens( settings)?:\s*)+/;

function button(a: EditorAction): MessageButton {
  return a === 'setNode'
    ? { kind: 'setNode', title: 'Set Node…' }
    : { kind: 'chooseReceivingNode', title: 'Choose the Node…' };
}

/** The notification for `message` (any prefix it had is replaced by the one prefix). */
export function editorMessage(message: string, severity: Severity): EditorMessage {
  const w = editorWords(message.replace(OLD_PREFIX, ''));
  // A sentence starts with a capital, but a file name (`f.rules is …`) or a setting stays as written.
  const firstWord = /^\S*/.exec(w.text)![0];
  const body = /[./:]/.test(firstWord) ? w.text : w.text.charAt(0).toUpperCase() + w.text.slice(1);
  const buttons: MessageButton[] = w.actions.filter(a => a === 'setNode').map(button);
  const setting = SETTING.exec(body)?.[1];
  if (setting) buttons.push({ kind: 'openSetting', title: 'Open Setting', setting });
  if (severity === 'error') buttons.push({ kind: 'showLog', title: 'Show Log' });
  return { text: `${PREFIX}${body}`, buttons };
}
