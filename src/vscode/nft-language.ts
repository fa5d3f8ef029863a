/**
 * nftables files that VS Code did not recognise by name (`.nft`, `nftables.conf` and the first-line
 * patterns in package.json): a plain-text or JSON document whose content is an nftables ruleset (`nft list
 * ruleset` text, an `nft -f` script, `nft -j` JSON; the engine's content detection reads its head) is given
 * the `nftables` language, so its features and Trace Packet work on `ruleset.txt` and `ruleset.json` too.
 */
import * as vscode from 'vscode';
import { detectRulesetFormat } from '../engine/api.ts';
import { NFT_LANGUAGE_ID } from './commands.ts';
import { firstLines } from './convert.ts';

/** Languages VS Code gives files whose names say nothing about nftables. */
const CANDIDATES = new Set(['plaintext', 'json', 'jsonc']);
/** The head that decides (the detection reads no more than this). */
const HEAD_LINES = 400;

export function nftLanguageDetection(log: (message: string) => void): vscode.Disposable {
  const check = (doc: vscode.TextDocument) => {
    if (!CANDIDATES.has(doc.languageId) || doc.uri.scheme === 'output') return;
    const format = detectRulesetFormat(doc.getText(firstLines(Math.min(doc.lineCount, HEAD_LINES))));
    if (format !== 'nft-text' && format !== 'nft-script' && format !== 'nft-json') return;
    vscode.languages.setTextDocumentLanguage(doc, NFT_LANGUAGE_ID).then(
      () => log(`${doc.uri.toString()} reads as an nftables ruleset (${format}): language set to nftables`),
      (e: unknown) => log(`could not set the language of ${doc.uri.toString()}: ${String(e)}`),
    );
  };
  setTimeout(() => vscode.workspace.textDocuments.forEach(check), 0);
  return vscode.workspace.onDidOpenTextDocument(check);
}
