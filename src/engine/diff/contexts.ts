/**
 * Contexts: what the jumps that lead to a chain already say about the packets in it. kube-proxy reaches
 * KUBE-SVC-X only through `-d 10.96.0.10/32 -p tcp --dport 53`, so a change under KUBE-SVC-X can only show
 * for those packets. A context is built from the positive header checks of the jumps on the way (an
 * over-approximation: negations and other matches only make it wider); region.ts carries contexts down the
 * jump graph with `narrow` and tests rules against them with `compatible`.
 */
import type { HookName, Rule } from '../model.ts';
import { type RuleFacts } from './facts.ts';
import { writtenDst } from '../iptables/rule-text.ts';
import { type Span, contains, intersect, netSpan } from './space.ts';

export interface Ctx {
  readonly table: string;
  readonly hook: HookName;
  readonly proto: number | null;
  readonly src: Span | null;
  readonly dst: Span | null;
  readonly dport: Span | null;
  readonly inIface: string | null;
  /** Reached through `addrtype --dst-type LOCAL`: only packets to the node. */
  readonly dstLocal: boolean;
}

/** False when no packet of the context can match the rule's header and port checks. */
export function compatible(f: RuleFacts, c: Ctx, local: readonly Span[] = []): boolean {
  // Behind `--dst-type LOCAL` only the node's own addresses (and 127.0.0.0/8) are destinations.
  if (c.dstLocal && f.dst && !f.dst.negated && local.length && !local.some(l => intersect(l, f.dst!.value)))
    return false;
  if (f.proto && c.proto !== null && (f.proto.value === c.proto) === f.proto.negated) return false;
  for (const [r, x] of [
    [f.dst, c.dst],
    [f.src, c.src],
  ] as const) {
    if (!r || !x) continue;
    if (!r.negated && !intersect(r.value, x)) return false;
    if (r.negated && contains(r.value, x)) return false;
  }
  if (c.dport) for (const p of f.dports) if (!p.negated && !p.value.some(s => intersect(s, c.dport!))) return false;
  const i = f.inIface;
  if (i && c.inIface !== null && !i.value.wildcard && (i.value.name === c.inIface) === i.negated) return false;
  return true;
}

/** The context of packets that match the rule's positive checks; null when there are none. */
export function narrow(c: Ctx, f: RuleFacts): Ctx | null {
  let { proto, src, dst, dport, inIface } = c;
  if (f.proto && !f.proto.negated) proto = f.proto.value;
  if (f.dst && !f.dst.negated) dst = dst ? intersect(dst, f.dst.value) : f.dst.value;
  if (f.src && !f.src.negated) src = src ? intersect(src, f.src.value) : f.src.value;
  if (f.dports.length === 1 && !f.dports[0]!.negated && f.dports[0]!.value.length === 1) {
    const p = f.dports[0]!.value[0]!;
    dport = dport ? intersect(dport, p) : p;
  }
  if (f.inIface && !f.inIface.negated && !f.inIface.value.wildcard) inIface = f.inIface.value.name;
  if (
    (f.dst && !f.dst.negated && !dst) ||
    (f.src && !f.src.negated && !src) ||
    (f.dports.length === 1 && !f.dports[0]!.negated && f.dports[0]!.value.length === 1 && !dport)
  )
    return null;
  return { ...c, proto, src, dst, dport, inIface, dstLocal: c.dstLocal || f.dstLocal };
}

/**
 * The exact `-d a.b.c.d/32` of a rule as the front end read it, without compiling it; null for rules that
 * have none or a wider network, undefined when the words cannot tell (those are compiled).
 */
export function textualDst(rule: Rule): bigint | null | undefined {
  const net = writtenDst(rule);
  if (!net) return net;
  const s = netSpan(net);
  return s.lo === s.hi ? s.lo : null;
}
