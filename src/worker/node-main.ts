/** The desktop worker (worker_threads): dist/worker.js, started by src/vscode/spawn-node.ts. */
import { parentPort } from 'node:worker_threads';
import type { EngineRequest } from '../shared/engine-protocol.ts';
import { EngineHost } from './engine-host.ts';
import { requestQueue } from './request-queue.ts';

const port = parentPort;
if (port) {
  // setImmediate runs after pending messages are delivered; setTimeout(0) would add a millisecond a slice.
  const host = new EngineHost(
    () => new Promise(r => setImmediate(r)),
    () => process.memoryUsage().heapUsed,
  );
  const receive = requestQueue(
    req => host.handle(req),
    r => port.postMessage(r),
    f => setImmediate(f),
  );
  port.on('message', (req: EngineRequest) => receive(req));
}
