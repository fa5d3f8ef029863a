/**
 * A packet class: one representative packet, the box of packets it stands for (refine.ts proves it does),
 * the extent the report prints, and the comparison's environment (the node's addresses and the route and
 * reverse-path cuts). region.ts makes the first classes of an iptables comparison.
 */
import type { Family } from '../net/addr.ts';
import type { PacketInput } from '../eval/packet-spec.ts';
import type { Ctx } from './contexts.ts';
import { type Span } from './space.ts';
import type { ClassExtent } from './types.ts';
import { type Box } from './box.ts';

export interface PacketClass {
  readonly input: PacketInput;
  readonly affinity: readonly string[];
  readonly extent: ClassExtent;
  readonly origin: 'changed' | 'sweep';
  /** The packets the class stands for (refine.ts proves it); none for the sweep's samples. */
  readonly box?: Box;
}

export interface ClassEnv {
  readonly family: Family;
  /** The node's addresses as values (routing and addrtype cut at them). */
  readonly nodeAddrs: readonly bigint[];
  /** Where routing decides differently: loopback, the node's routes and interface networks. */
  readonly routeCuts: readonly Span[];
  /** Where the reverse-path filter answers differently for a source (the node's files with rp_filter on). */
  readonly srcRouteCuts: readonly Span[];
  readonly uplink: string;
}

export function fromOptions(ctx: Ctx): ('outside' | 'local')[] {
  if (ctx.hook === 'FORWARD' || (ctx.hook === 'PREROUTING' && ctx.table === 'nat')) return ['outside'];
  if (ctx.hook === 'OUTPUT') return ['local'];
  return ['outside', 'local'];
}

/** A stable identity of a class's representative, to trace each packet once. */
export function classId(c: PacketClass): string {
  const i = c.input;
  return [
    i.from,
    i.protocol,
    i.src,
    i.sport,
    i.dst,
    i.dport,
    i.in,
    i.mark,
    i.ctstate,
    i.icmpType,
    i.icmpCode,
    c.affinity.join(','),
  ].join('|');
}
