/** Reads the `packetlens.*` settings through the pure reader in src/editor/settings.ts. */
import * as vscode from 'vscode';
import { type Settings, readSettings } from '../editor/settings.ts';

export const SECTION = 'packetlens';

export function currentSettings(scope?: vscode.Uri): Settings {
  const config = vscode.workspace.getConfiguration(SECTION, scope);
  return readSettings(key => config.get(key));
}
