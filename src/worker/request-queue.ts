/**
 * The order a worker serves its requests in. Requests are served one at a time as they arrive, except that
 * one somebody is waiting for on screen (a hover, the CodeLens of the visible lines, a trace) is served
 * before queued work that can wait: the outline and folds of a whole dump, its diagnostics, the node's
 * hints. Right after a big dump is parsed those all arrive at once, and the outline of 110k chains alone
 * held the first CodeLens and hovers for a few hundred milliseconds. Only reads of a parse pass only reads
 * of a parse, so the answers are the same in any order; loading, appending and dropping stay in order.
 */
import type { EngineRequest, EngineResponse, Method } from '../shared/engine-protocol.ts';

/** Requests that read a parse and that no one watches the screen for. */
const CAN_WAIT: ReadonlySet<Method> = new Set<Method>(['outline', 'folding', 'diagnostics', 'nodeHints', 'nodeFiles']);
/** Reads of a parse someone is waiting for on screen: these pass queued CAN_WAIT requests. */
const FIRST: ReadonlySet<Method> = new Set<Method>([
  'hover',
  'chainLenses',
  'chainReferences',
  'definition',
  'references',
  'suggest',
  'trace',
  'kubeHover',
  'kubeLenses',
]);

/**
 * Returns the function to call with each incoming request. `handle` starts it (a sliced request such as the
 * diagnostics yields to later ones as before); `reply` posts its answer; `later` runs a callback after the
 * messages already delivered (setImmediate / setTimeout).
 */
export function requestQueue(
  handle: (req: EngineRequest) => Promise<EngineResponse>,
  reply: (res: EngineResponse) => void,
  later: (f: () => void) => void,
): (req: EngineRequest) => void {
  const queue: EngineRequest[] = [];
  let scheduled = false;
  const next = (): void => {
    scheduled = false;
    let i = 0;
    while (i < queue.length && CAN_WAIT.has(queue[i]!.method)) i++;
    const [req] = queue.splice(i < queue.length && FIRST.has(queue[i]!.method) ? i : 0, 1);
    if (req) void handle(req).then(reply);
    if (queue.length) schedule();
  };
  const schedule = (): void => {
    if (scheduled) return;
    scheduled = true;
    later(next);
  };
  return req => {
    queue.push(req);
    schedule();
  };
}
