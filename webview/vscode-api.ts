/** The VS Code webview API as this webview uses it (acquireVsCodeApi may be called once). */
import type { DiffPanelState, PanelState, WebviewToExtension } from '../src/shared/protocol.ts';

interface VsCodeApi {
  postMessage(message: WebviewToExtension): void;
  getState(): unknown;
  setState(state: PanelState | DiffPanelState): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

export const vscode: VsCodeApi = acquireVsCodeApi();
