/**
 * "Packet Lens: Open Example Dump" (the Getting Started walkthrough's buttons): the example dumps shipped
 * in the extension (media/examples/, seed 003's worker node, before and after one endpoint went away),
 * opened read-only, so they work the same in a folder, an empty window and VS Code for the Web.
 */
import * as vscode from 'vscode';
import type { VirtualDumps } from './virtual-dumps.ts';

const BEFORE = 'node-myk8s-worker.rules';
const AFTER = 'node-myk8s-worker-after.rules';

async function exampleText(extensionUri: vscode.Uri, name: string): Promise<string> {
  const bytes = await vscode.workspace.fs.readFile(vscode.Uri.joinPath(extensionUri, 'media', 'examples', name));
  return new TextDecoder('utf-8').decode(bytes);
}

/** `dump`: the example dump in an editor; `compare`: both examples in a diff editor. */
export async function openExample(
  extensionUri: vscode.Uri,
  dumps: VirtualDumps,
  which: unknown = 'dump',
): Promise<void> {
  const before = dumps.uriFor(`examples/${BEFORE}`);
  dumps.set(before, await exampleText(extensionUri, BEFORE));
  if (which !== 'compare') {
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(before), { preview: false });
    return;
  }
  const after = dumps.uriFor(`examples/${AFTER}`);
  dumps.set(after, await exampleText(extensionUri, AFTER));
  await vscode.commands.executeCommand('vscode.diff', before, after, `${BEFORE} ↔ ${AFTER} (example)`);
}
