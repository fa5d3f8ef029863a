/**
 * Every notification of the extension goes through here: one "Packet Lens:" prefix, the buttons
 * src/editor/messages.ts chooses (Set Node…, Open Setting, Show Log), and a line in the log channel for
 * each warning and error, so the log tells what the user was told.
 */
import * as vscode from 'vscode';
import { type Severity, editorMessage } from '../editor/messages.ts';
import { COMMANDS } from './commands.ts';

let log: vscode.LogOutputChannel | null = null;

/** The log channel notifications are recorded in (set once at activation). */
export function useLog(channel: vscode.LogOutputChannel): void {
  log = channel;
}

/**
 * Shows `message` with its buttons (and any `extra` ones, whose title is returned when clicked); the
 * standard buttons act by themselves.
 */
export async function notify(severity: Severity, message: string, ...extra: string[]): Promise<string | undefined> {
  const m = editorMessage(message, severity);
  if (severity === 'error') log?.error(m.text);
  else if (severity === 'warning') log?.warn(m.text);
  else log?.info(m.text);
  const show =
    severity === 'error'
      ? vscode.window.showErrorMessage
      : severity === 'warning'
        ? vscode.window.showWarningMessage
        : vscode.window.showInformationMessage;
  const titles = [...extra, ...m.buttons.map(b => b.title)];
  const picked = await show(m.text, ...titles);
  const b = m.buttons.find(x => x.title === picked);
  if (!b) return picked;
  if (b.kind === 'setNode') await vscode.commands.executeCommand(COMMANDS.setNode);
  else if (b.kind === 'openSetting') await vscode.commands.executeCommand('workbench.action.openSettings', b.setting);
  else if (b.kind === 'showLog') await vscode.commands.executeCommand(COMMANDS.showLog);
  return undefined;
}

export const info = (message: string, ...extra: string[]) => notify('info', message, ...extra);
export const warn = (message: string, ...extra: string[]) => notify('warning', message, ...extra);
export const error = (message: string, ...extra: string[]) => notify('error', message, ...extra);

/** A line in the log channel (each trace, comparison and manifest problem, with its timing). */
export function record(line: string): void {
  log?.info(line);
}
