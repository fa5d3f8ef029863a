/**
 * The `--json` contract of `packetlens trace`: one object per packet,
 * `{"packet":{…},"outcomes":[{"probability","disposition","dnat","snat","masquerade","steps":[…]}, …]}`,
 * with dnat/snat null when absent. Fields are only ever added, never renamed (README, "JSON output").
 */
import type { PacketInput, Trace, TraceMiss } from '../engine/api.ts';
import { withSteps } from './json-steps.ts';

export function toJsonTrace(
  trace: Trace,
  input: PacketInput,
  opts: { misses: boolean | 'grouped'; events: boolean },
  /** What stands for an outcome's steps (jsonTraceChunks' marker); the steps themselves by default. */
  stepsOf?: (o: Trace['outcomes'][number]) => unknown,
): unknown {
  return {
    packet: { ...trace.packet, ...(input.name ? { name: input.name } : {}) },
    from: trace.from,
    unknown: trace.unknown,
    outcomes: trace.outcomes.map(o => ({
      probability: o.probability,
      probabilityExact: o.probabilityExact,
      disposition: o.disposition,
      dnat: o.dnat,
      snat: o.snat,
      masquerade: o.masquerade,
      rejectWith: o.rejectWith,
      reason: o.reason,
      packet: o.packet,
      steps: stepsOf ? stepsOf(o) : o.steps,
      assumptions: o.assumptions,
      notes: o.notes,
      paths: o.paths,
      ...(o.markVaries ? { markVaries: o.markVaries } : {}),
      ...(o.ctmarkVaries ? { ctmarkVaries: o.ctmarkVaries } : {}),
      ...(o.loop ? { loop: o.loop } : {}),
      ...(o.notEnumerated ? { notEnumerated: o.notEnumerated } : {}),
      ...(opts.misses === 'grouped'
        ? { missesGrouped: o.missesGrouped ?? [] }
        : opts.misses
          ? { misses: o.misses }
          : {}),
      ...(opts.events ? { events: o.events } : {}),
    })),
    warnings: trace.warnings,
    ...(trace.node ? { node: trace.node } : {}),
    ...(trace.budget ? { budget: trace.budget } : {}),
    ...(trace.fileErrors ? { fileErrors: trace.fileErrors } : {}),
  };
}

/** A piece of output: text, or bytes already encoded (shared between the outcomes of a trace). */
export type Chunk = string | Uint8Array;

/**
 * `toJsonTrace` as one line of output, in pieces. Identical bytes to `JSON.stringify(toJsonTrace(…))`, but
 * with why-not the outcomes' `misses` are written once: forked paths share the misses recorded before the
 * fork (the same objects), often thousands (every KUBE-SERVICES rule before the packet's Service), so the
 * list common to the outcomes is serialised and encoded once and its bytes are written for each outcome.
 */
export function jsonTraceChunks(
  trace: Trace,
  input: PacketInput,
  opts: { misses: boolean | 'grouped'; events: boolean },
  extra?: Record<string, unknown>,
): Chunk[] {
  const json = (v: unknown) => JSON.stringify(extra ? { ...(v as object), ...extra } : v);
  if (!opts.misses) {
    // Each outcome's steps stand in as a marker; json-steps.ts writes each step once (see there).
    const marker = `\u0000packetlens-steps-${NONCE}\u0000`;
    const text = json(toJsonTrace(trace, input, opts, () => marker));
    return (
      withSteps(
        text,
        marker,
        trace.outcomes.map(o => o.steps),
      ) ?? [json(toJsonTrace(trace, input, opts))]
    );
  }
  const lists = trace.outcomes.map(o => o.misses);
  if (opts.misses !== true || lists.reduce((n, l) => n + l.length, 0) < 256)
    return [json(toJsonTrace(trace, input, opts))];
  // Each outcome's misses stand in as a marker string no rule text can hold (a per-process nonce).
  const marker = `\u0000packetlens-misses-${NONCE}\u0000`;
  const withMarkers = toJsonTrace(
    { ...trace, outcomes: trace.outcomes.map(o => ({ ...o, misses: marker as unknown as typeof o.misses })) },
    input,
    opts,
  );
  const parts = json(withMarkers).split(JSON.stringify(marker));
  if (parts.length !== lists.length + 1) return [json(toJsonTrace(trace, input, opts))];
  const encoded = missesChunks(lists);
  const out: Chunk[] = [parts[0]!];
  encoded.forEach((chunks, k) => out.push(...chunks, parts[k + 1]!));
  return out;
}

const NONCE = Math.random().toString(36).slice(2) + Date.now().toString(36);

/** `JSON.stringify(list)` for each list, as pieces; the longest list's prefixes shared by others are encoded once. */
function missesChunks(lists: readonly (readonly TraceMiss[])[]): Chunk[][] {
  let base = lists[0]!;
  for (const l of lists) if (l.length > base.length) base = l;
  const shared = lists.map(l => {
    if (l === base) return base.length;
    let p = 0;
    const n = Math.min(l.length, base.length);
    while (p < n && l[p] === base[p]) p++;
    return p;
  });
  // The base list cut where other lists leave it; each segment serialised and encoded once.
  const cuts = [...new Set([0, ...shared, base.length])].sort((a, b) => a - b);
  const segments = new Map<number, Uint8Array>();
  for (let i = 1; i < cuts.length; i++) segments.set(cuts[i]!, encode(base.slice(cuts[i - 1]!, cuts[i]!)));
  return lists.map((l, k) => {
    const p = shared[k]!;
    const out: Chunk[] = ['['];
    let first = true;
    for (let i = 1; i < cuts.length && cuts[i]! <= p; i++) {
      if (!first) out.push(',');
      out.push(segments.get(cuts[i]!)!);
      first = false;
    }
    if (p < l.length) {
      if (!first) out.push(',');
      out.push(JSON.stringify(l.slice(p)).slice(1, -1));
    }
    out.push(']');
    return out;
  });
}

/**
 * The items of a list as JSON text (without the brackets), UTF-8 encoded. `Buffer.from` rather than a
 * `TextEncoder`: on the 500 KB why-not lists of a 320k-rule dump it encodes in half the time.
 */
function encode(items: readonly TraceMiss[]): Uint8Array {
  // '[' and ']' are one byte each in UTF-8: the brackets come off the bytes, not the (500 KB) string.
  const bytes = Buffer.from(JSON.stringify(items));
  return bytes.subarray(1, bytes.length - 1);
}
