/** The browser worker (a Web Worker): dist/web/worker.js, started by src/vscode/spawn-web.ts. */
import type { EngineRequest } from '../shared/engine-protocol.ts';
import { EngineHost } from './engine-host.ts';
import { requestQueue } from './request-queue.ts';

interface WorkerScope {
  onmessage: ((e: { data: EngineRequest }) => void) | null;
  postMessage(m: unknown): void;
}

const scope = globalThis as unknown as WorkerScope;
const host = new EngineHost();
const receive = requestQueue(
  req => host.handle(req),
  r => scope.postMessage(r),
  f => setTimeout(f, 0),
);
scope.onmessage = e => receive(e.data);
