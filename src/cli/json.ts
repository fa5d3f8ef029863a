/**
 * The `--json` contract of `packetlens trace`: one object per packet,
 * `{"packet":{…},"outcomes":[{"probability","disposition","dnat","snat","masquerade","steps":[…]}, …]}`,
 * with dnat/snat null when absent. Fields are only ever added, never renamed (README, "JSON output").
 */
import type { PacketInput, Trace } from '../engine/api.ts';

export function toJsonTrace(trace: Trace, input: PacketInput, opts: { misses: boolean; events: boolean }): unknown {
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
      steps: o.steps,
      assumptions: o.assumptions,
      notes: o.notes,
      paths: o.paths,
      ...(o.markVaries ? { markVaries: o.markVaries } : {}),
      ...(o.ctmarkVaries ? { ctmarkVaries: o.ctmarkVaries } : {}),
      ...(o.loop ? { loop: o.loop } : {}),
      ...(o.notEnumerated ? { notEnumerated: o.notEnumerated } : {}),
      ...(opts.misses ? { misses: o.misses } : {}),
      ...(opts.events ? { events: o.events } : {}),
    })),
    warnings: trace.warnings,
    ...(trace.node ? { node: trace.node } : {}),
    ...(trace.budget ? { budget: trace.budget } : {}),
    ...(trace.fileErrors ? { fileErrors: trace.fileErrors } : {}),
  };
}
