/**
 * Rulesets that VS Code did not recognise by name (`.nft`, `.rules`, `nftables.conf` and the first-line
 * patterns in package.json): a plain-text or JSON document whose content is a ruleset (the engine's content
 * detection reads its head) is given its language — `nftables` for `nft list ruleset` text, an `nft -f`
 * script or `nft -j` JSON, `iptables-save` for iptables-save output — so its features and Trace Packet work
 * on `ruleset.txt`, `ruleset.json` and `iptables.txt` too. A dump holding a NUL byte is one VS Code calls
 * binary: opened anyway, it is read as a dump, so it gets the diagnostic iptables-restore's reading deserves
 * (the line ends at the NUL) rather than no answer at all.
 */
import * as vscode from 'vscode';
import { detectRulesetFormat } from '../engine/api.ts';
import { LANGUAGE_ID, NFT_LANGUAGE_ID } from './commands.ts';
import { firstLines } from './convert.ts';

/** Languages VS Code gives files whose names say nothing about rulesets (`code-text-binary`: "Open Anyway" on a file with NUL bytes). */
const CANDIDATES = new Set(['plaintext', 'json', 'jsonc', 'code-text-binary']);
/** The head that decides (the detection reads no more than this). */
const HEAD_LINES = 400;

export function rulesetLanguageDetection(log: (message: string) => void): vscode.Disposable {
  const check = (doc: vscode.TextDocument) => {
    if (!CANDIDATES.has(doc.languageId) || doc.uri.scheme === 'output') return;
    const format = detectRulesetFormat(doc.getText(firstLines(Math.min(doc.lineCount, HEAD_LINES))));
    const language =
      format === 'nft-text' || format === 'nft-script' || format === 'nft-json'
        ? NFT_LANGUAGE_ID
        : format === 'iptables-save'
          ? LANGUAGE_ID
          : null;
    if (!language) return;
    vscode.languages.setTextDocumentLanguage(doc, language).then(
      () => log(`${doc.uri.toString()} reads as ${format} output: language set to ${language}`),
      (e: unknown) => log(`could not set the language of ${doc.uri.toString()}: ${String(e)}`),
    );
  };
  setTimeout(() => vscode.workspace.textDocuments.forEach(check), 0);
  return vscode.workspace.onDidOpenTextDocument(check);
}
