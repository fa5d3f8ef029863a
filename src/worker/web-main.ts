/** The browser worker (a Web Worker): dist/web/worker.js, started by src/vscode/spawn-web.ts. */
import type { EngineRequest } from '../shared/engine-protocol.ts';
import { EngineHost } from './engine-host.ts';

interface WorkerScope {
  onmessage: ((e: { data: EngineRequest }) => void) | null;
  postMessage(m: unknown): void;
}

const scope = globalThis as unknown as WorkerScope;
const host = new EngineHost();
scope.onmessage = e => void host.handle(e.data).then(r => scope.postMessage(r));
