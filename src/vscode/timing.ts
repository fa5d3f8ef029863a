/**
 * Timing lines for the e2e (issue 18's editor figures): when each step of a hover, a CodeLens request and
 * a trace happened, in wall-clock milliseconds since the epoch (`Date.now()`), so the e2e can hold them
 * against the moment the browser drew the result. Off unless spawn-node.ts's `timingLog` turned it on.
 */
let sink: ((m: string) => void) | null = null;

export function useTimingLog(log: ((m: string) => void) | null): void {
  sink = log;
}

/** Whether timing lines are written (then a caller may take a timestamp it would not need otherwise). */
export function timingOn(): boolean {
  return sink !== null;
}

/** Logs `what()` when the timing log is on (the message is built only then). */
export function timing(what: () => string): void {
  if (sink) sink(what());
}
