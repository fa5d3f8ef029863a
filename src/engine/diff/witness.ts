/**
 * Witness classes: for every rule that is on one side only (added, removed or edited) and every context
 * that reaches its chain, one class built from *all* of the rule's tests together (its source, destination,
 * protocol, ports, ICMP type, interface, mark, state and recent list at once), so that a rule whose effect
 * needs the conjunction of its conditions is always tried. refine.ts then splits the witness wherever other
 * rules on its paths tell its packets apart, like any other class.
 */
import type { Rule, Ruleset } from '../model.ts';
import { type Box, boxExtent, boxInput, wholeBox } from './box.ts';
import { type ClassEnv, type PacketClass, fromOptions } from './classes.ts';
import type { Ctx } from './contexts.ts';
import { ruleFacts } from './facts.ts';
import { normalizedRule, ruleTextSet, tableByName } from './normalize.ts';
import { type Span, intersect } from './space.ts';

/** The rules of a chain that the other side's chain lacks (compared as normalized text). */
export function differingRules(
  oldRs: Ruleset,
  newRs: Ruleset,
  table: string,
  chain: string,
): { side: 0 | 1; rule: Rule }[] {
  const out: { side: 0 | 1; rule: Rule }[] = [];
  const sides = [oldRs, newRs] as const;
  sides.forEach((rs, side) => {
    const other = ruleTextSet(tableByName(sides[1 - side]!, table)?.chains.get(chain));
    for (const r of tableByName(rs, table)?.chains.get(chain)?.rules ?? [])
      if (!other.has(normalizedRule(r))) out.push({ side: side as 0 | 1, rule: r });
  });
  return out;
}

const BASE_STATES = ['NEW', 'ESTABLISHED', 'RELATED', 'INVALID', 'UNTRACKED'];

/** The witness classes of one rule within one context; none when the rule cannot match there. */
export function witnessClasses(ctx: Ctx, rule: Rule, env: ClassEnv): PacketClass[] {
  const f = ruleFacts(rule, env.family);
  const pos = <T>(x: { negated: boolean; value: T } | null): T | null => (x && !x.negated ? x.value : null);
  const meet = (a: Span | null, b: Span | null): Span | null | false =>
    a && b ? (intersect(a, b) ?? false) : (a ?? b);
  const proto = pos(f.proto) ?? ctx.proto;
  if (ctx.proto !== null && proto !== ctx.proto) return [];
  const src = meet(ctx.src, pos(f.src));
  let dst = meet(ctx.dst, pos(f.dst));
  const dport = meet(ctx.dport, f.dports.find(d => !d.negated)?.value[0] ?? null);
  const sport = f.sports.find(d => !d.negated)?.value[0] ?? null;
  if (src === false || dst === false || dport === false) return [];
  const local = [
    ...env.nodeAddrs.map(n => ({ lo: n, hi: n })),
    env.family === 4 ? { lo: 0x7f000000n, hi: 0x7fffffffn } : { lo: 1n, hi: 1n },
  ];
  const dsts: (Span | null)[] =
    ctx.dstLocal || f.dstLocal
      ? local.flatMap(l => (dst ? (intersect(dst, l) ? [intersect(dst, l)!] : []) : [l]))
      : [dst];
  const iface = pos(f.inIface);
  const mark = f.marks[0];
  const state = f.ctstates.find(s => BASE_STATES.includes(s) && s !== 'NEW');
  const icmp = f.icmpTypes[0];
  const out: PacketClass[] = [];
  for (const from of fromOptions(ctx)) {
    // A process on the node sends from one of the node's addresses or loopback (as classes.ts assumes).
    const srcs: (Span | null)[] =
      from === 'local' && env.nodeAddrs.length
        ? local.flatMap(l => (src ? (intersect(src, l) ? [intersect(src, l)!] : []) : [l]))
        : [src];
    for (const s of srcs)
      for (dst of dsts) {
        const whole = wholeBox(env.family, from, { src: s, dst, proto, dport });
        const box: Box = {
          ...whole,
          sport: whole.sport && sport ? sport : whole.sport,
          icmp: whole.icmp && icmp ? { only: `${icmp[0]}/${icmp[1]}` } : whole.icmp,
          ifaces: from === 'outside' && iface ? [iface.name] : [],
          marks: from === 'local' && mark ? [[mark.value, mark.mask]] : [],
          lists: f.recentLists,
        };
        const inName = iface ? (iface.name.endsWith('+') ? `${iface.name.slice(0, -1)}0` : iface.name) : undefined;
        const input = boxInput(env.family, box, null, {
          in: from === 'outside' ? inName : undefined,
          mark: from === 'local' && mark ? mark.value : undefined,
          ctstate: state,
        });
        if (input)
          out.push({
            input,
            affinity: f.recentLists,
            origin: 'changed',
            box,
            extent: boxExtent(env.family, box, input, f.recentLists, env.uplink),
          });
      }
  }
  return out;
}

/** Witnesses for every differing rule of the changed chains, in every context that reaches the chain. */
export function allWitnesses(
  groups: readonly { ctx: Ctx; chains: ReadonlySet<string> }[],
  differing: ReadonlyMap<string, { side: 0 | 1; rule: Rule }[]>,
  env: ClassEnv,
): PacketClass[] {
  const out: PacketClass[] = [];
  for (const g of groups) {
    for (const key of g.chains) {
      for (const { rule } of differing.get(key) ?? []) out.push(...witnessClasses(g.ctx, rule, env));
    }
  }
  return out;
}
