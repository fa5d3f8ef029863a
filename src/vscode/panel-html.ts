/**
 * The flow diagram's HTML shell: a strict Content Security Policy (nothing by default; the bundled
 * script only by nonce; styles and fonts only from the extension's built webview folder), and no file
 * text at all — the webview builds the diagram from the model with `textContent`.
 */
import * as vscode from 'vscode';

export function nonce(): string {
  const bytes = new Uint8Array(24);
  crypto.getRandomValues(bytes);
  let s = '';
  for (const b of bytes) s += 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'[b % 62];
  return s;
}

export function webviewRoot(extensionUri: vscode.Uri): vscode.Uri {
  return vscode.Uri.joinPath(extensionUri, 'dist', 'webview');
}

export function panelHtml(webview: vscode.Webview, extensionUri: vscode.Uri): string {
  const root = webviewRoot(extensionUri);
  const script = webview.asWebviewUri(vscode.Uri.joinPath(root, 'main.js'));
  const styles = webview.asWebviewUri(vscode.Uri.joinPath(root, 'main.css'));
  const n = nonce();
  // Styles only from the extension's stylesheet (the controls are plain HTML, nothing injects a style
  // element). `blob:` images: the PNG export draws the graph's own SVG through an <img> onto a canvas.
  const csp = [
    `default-src 'none'`,
    `script-src 'nonce-${n}'`,
    `style-src ${webview.cspSource}`,
    `font-src ${webview.cspSource}`,
    `img-src ${webview.cspSource} blob:`,
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${styles.toString()}">
<title>Packet flow</title>
</head>
<body>
<main id="app"><p id="status" role="status">Waiting for a trace…</p></main>
<script nonce="${n}" src="${script.toString()}"></script>
</body>
</html>`;
}
