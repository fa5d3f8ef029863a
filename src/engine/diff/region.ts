/**
 * Where two versions of a chain can treat a packet differently, and which packets can get there: the
 * first classes of an iptables comparison (diff.ts) are these regions, not every packet that crosses a
 * changed chain. docs/diff.md ("Where a change can show") gives the argument; in short:
 *
 *   - Two rulesets differ only in their changed chains. A packet evaluates the same rules on both sides,
 *     with the same state, until it enters a changed chain C in a state C's two versions answer
 *     differently; a packet that never does fares alike (by induction over the chains it evaluates).
 *   - C's versions answer alike for a state that matches none of the rules on one side only (compared as
 *     normalized text, counted with multiplicity) and no two common rules whose relative order changed:
 *     it then meets the same rules, in the same order, on both sides. "Matches" is over-approximated by
 *     the rule's positive header checks (protocol, addresses, ports, incoming interface, `--dst-type
 *     LOCAL`), fields that no rule changes within one table's walk (a NAT binding ends the walk).
 *   - The state at C is the packet's as the hook sees it, narrowed by the jumps that lead to C (the
 *     contexts). Going back to the packet as sent: a field a NAT rule of an earlier stage may rewrite into
 *     the region is left unconstrained; where every such rewrite writes a value outside it (kube-proxy's
 *     DNATs all write port 8080, a new INPUT rule tests port 22), the region is the packet's own.
 *
 * Everything is an over-approximation (negations and other matches only make a region larger), so the
 * packets left out provably fare alike; refinement (refine.ts) then proves or reports the rest exactly.
 */
import type { Chain, HookName, Rule } from '../model.ts';
import type { Family } from '../net/addr.ts';
import { type Box, boxExtent, boxInput, wholeBox } from './box.ts';
import { type ClassEnv, type PacketClass, fromOptions } from './classes.ts';
import { type Ctx, compatible, narrow, textualDst } from './contexts.ts';
import { ruleFacts } from './facts.ts';
import { type JumpGraph, hookBit, hooksOf, tableMask, targetName } from './graph.ts';
import { chainKey, normalizedRule } from './normalize.ts';
import { canPrecede } from './relevant.ts';
import { type Span, addrValue, intersect } from './space.ts';
import { ruleWords, soleTargetOption } from '../iptables/rule-text.ts';
import { parseNatRange } from '../targets/nat.ts';

/** A header region: null is "any". */
export interface Area {
  readonly proto: number | null;
  readonly src: Span | null;
  readonly dst: Span | null;
  readonly sport: Span | null;
  readonly dport: Span | null;
  readonly inIface: string | null;
}

const ANY: Area = { proto: null, src: null, dst: null, sport: null, dport: null, inIface: null };
/** Beyond this many areas for one chain, the chain's region is everything its contexts hold. */
const MAX_AREAS = 4096;
/** Beyond this many pairs to compare for a reorder, likewise. */
const MAX_PAIRS = 4_000_000;
/** Contexts kept per chain; beyond, the chain's context is every packet of its hooks. */
const MAX_CTX = 32;
/** Callers of a chain followed up; beyond (kube-proxy's KUBE-MARK-MASQ), every packet of its hooks. */
const MAX_CALLERS = 256;

function meetSpan(a: Span | null, b: Span | null): Span | null | false {
  if (!a) return b;
  if (!b) return a;
  return intersect(a, b) ?? false;
}

export function meet(a: Area, b: Area): Area | null {
  if (a.proto !== null && b.proto !== null && a.proto !== b.proto) return null;
  if (a.inIface !== null && b.inIface !== null && a.inIface !== b.inIface) return null;
  const src = meetSpan(a.src, b.src);
  const dst = meetSpan(a.dst, b.dst);
  const sport = meetSpan(a.sport, b.sport);
  const dport = meetSpan(a.dport, b.dport);
  if (src === false || dst === false || sport === false || dport === false) return null;
  return { proto: a.proto ?? b.proto, src, dst, sport, dport, inIface: a.inIface ?? b.inIface };
}

/** The hull of a port test's ranges (multiport lists several): every port the test can accept. */
function portHull(tests: readonly { negated: boolean; value: readonly Span[] }[]): Span | null | false {
  let out: Span | null = null;
  for (const t of tests) {
    if (t.negated || !t.value.length) continue;
    let lo = t.value[0]!.lo;
    let hi = t.value[0]!.hi;
    for (const s of t.value) {
      if (s.lo < lo) lo = s.lo;
      if (s.hi > hi) hi = s.hi;
    }
    const m = meetSpan(out, { lo, hi });
    if (m === false) return false;
    out = m;
  }
  return out;
}

/** The packets a rule can match, from its positive header checks (an over-approximation); [] when none. */
export function matchAreas(rule: Rule, family: Family, local: readonly Span[]): Area[] {
  const f = ruleFacts(rule, family);
  const dport = portHull(f.dports);
  const sport = portHull(f.sports);
  if (dport === false || sport === false) return [];
  const pos = <T>(x: { negated: boolean; value: T } | null): T | null => (x && !x.negated ? x.value : null);
  const iface = pos(f.inIface);
  const area: Area = {
    proto: pos(f.proto),
    src: pos(f.src),
    dst: pos(f.dst),
    sport,
    dport,
    inIface: iface && !iface.wildcard ? iface.name : null,
  };
  if (!f.dstLocal) return [area];
  return local.flatMap(l => meet(area, { ...ANY, dst: l }) ?? []);
}

/**
 * What a rule does, as text: its normalized words, except that a MARK target is written as the kernel's
 * (value, mask) pair (`xt_mark.c`: `--or-mark 0x4000` and `--set-xmark 0x4000/0x4000` are the same
 * rule; iptables-legacy and iptables-nft print kube-proxy's KUBE-MARK-MASQ the two ways).
 */
export function ruleIdentity(rule: Rule): string {
  const key = normalizedRule(rule);
  if (targetName(rule) !== 'MARK') return key;
  const t = rule.target;
  if (t?.kind !== 'target' || t.module.name !== 'MARK' || t.options.length !== 1) return key;
  const o = t.options[0]!;
  const tail = [o.name, ...o.args].join(' ');
  const spec = t.spec as { value: number; mask: number } | null;
  if (!spec || !key.endsWith(` ${tail}`)) return key;
  return `${key.slice(0, key.length - tail.length)}xmark ${spec.value}/${spec.mask}`;
}

/**
 * Rules of the two versions paired by what they do (k-th occurrence with k-th): first by their words as
 * written (cheap, and most rules are untouched), the rest by `ruleIdentity`; the unpaired differ.
 */
function pairRules(a: readonly Rule[], b: readonly Rule[]) {
  const newOf = new Int32Array(a.length).fill(-1);
  const oldOf = new Int32Array(b.length).fill(-1);
  for (const key of [ruleWords, ruleIdentity]) {
    const byKey = new Map<string, number[]>();
    a.forEach((r, i) => {
      if (newOf[i] !== -1) return;
      const k = key(r);
      const list = byKey.get(k);
      if (list) list.push(i);
      else byKey.set(k, [i]);
    });
    if (!byKey.size) break;
    b.forEach((r, j) => {
      if (oldOf[j] !== -1) return;
      const i = byKey.get(key(r))?.shift();
      if (i !== undefined) {
        newOf[i] = j;
        oldOf[j] = i;
      }
    });
  }
  const differing: Rule[] = [];
  b.forEach((r, j) => {
    if (oldOf[j] === -1) differing.push(r);
  });
  a.forEach((r, i) => {
    if (newOf[i] === -1) differing.push(r);
  });
  return { newOf, differing };
}

/** The one destination a rule names (`-d a.b.c.d`), or null: rules naming two different ones never overlap. */
function pointDst(rule: Rule, family: Family): bigint | null {
  let d = textualDst(rule);
  if (d === undefined) {
    const f = ruleFacts(rule, family);
    d = f.dst && !f.dst.negated && f.dst.value.lo === f.dst.value.hi ? f.dst.value.lo : null;
  }
  return d;
}

/**
 * Where a chain's two versions can answer differently, in the state the chain sees: the match areas of the
 * rules on one side only, and of each pair of common rules whose relative order changed (their meet).
 * 'all' when the policy differs, a user chain exists on one side only, or the regions grow too many.
 */
export function chainRegion(
  a: Chain | undefined,
  b: Chain | undefined,
  family: Family,
  local: readonly Span[],
): Area[] | 'all' {
  const builtin = (a ?? b)?.builtin ?? false;
  if ((!a || !b) && !builtin) return 'all';
  // A table the dump does not have registers no hook: like its built-in chains, empty with policy ACCEPT.
  if ((a?.policy ?? 'ACCEPT') !== (b?.policy ?? 'ACCEPT')) return 'all';
  const ra = a?.rules ?? [];
  const rb = b?.rules ?? [];
  const { newOf, differing } = pairRules(ra, rb);
  const out: Area[] = [];
  for (const r of differing) {
    out.push(...matchAreas(r, family, local));
    if (out.length > MAX_AREAS) return 'all';
  }
  // Common rules in the same relative order evaluate alike; a pair whose order changed only where both match.
  let ordered = true;
  for (let i = 0, last = -1; i < ra.length; i++) {
    if (newOf[i]! < 0) continue;
    if (newOf[i]! < last) ordered = false;
    last = newOf[i]!;
  }
  if (ordered) return out;
  const common: number[] = [];
  for (let i = 0; i < ra.length; i++) if (newOf[i]! >= 0) common.push(i);
  const buckets = new Map<bigint, number[]>();
  const wide: number[] = [];
  for (const i of common) {
    const d = pointDst(ra[i]!, family);
    if (d === null) wide.push(i);
    else {
      const list = buckets.get(d);
      if (list) list.push(i);
      else buckets.set(d, [i]);
    }
  }
  let pairs = wide.length * common.length;
  for (const list of buckets.values()) pairs += (list.length * (list.length - 1)) / 2;
  if (pairs > MAX_PAIRS) return 'all';
  const overlap = (i: number, j: number): boolean => {
    if (i === j || i < j === newOf[i]! < newOf[j]!) return false;
    for (const x of matchAreas(ra[i]!, family, local))
      for (const y of matchAreas(ra[j]!, family, local)) {
        const m = meet(x, y);
        if (m) out.push(m);
      }
    return out.length > MAX_AREAS;
  };
  for (const list of buckets.values())
    for (let x = 0; x < list.length; x++)
      for (let y = x + 1; y < list.length; y++) if (overlap(list[x]!, list[y]!)) return 'all';
  const isWide = new Set(wide);
  for (const w of wide) for (const i of common) if ((!isWide.has(i) || i > w) && overlap(w, i)) return 'all';
  return out;
}

/** Every packet of one hook of a table. */
function hookCtx(table: string, hook: HookName): Ctx {
  return { table, hook, proto: null, src: null, dst: null, dport: null, inIface: null, dstLocal: false };
}

/**
 * The contexts of a chain: what the jumps that lead to it, from the built-in chains, say about the
 * packets in it (contexts.ts `narrow`, an over-approximation), on either side. Chains reached in too many
 * ways are taken as every packet of their hooks.
 */
export class ChainContexts {
  private readonly memo = new Map<string, Ctx[]>();
  private readonly busy = new Set<string>();

  constructor(
    private readonly g: JumpGraph,
    private readonly family: Family,
    private readonly local: readonly Span[],
  ) {}

  private widest(key: string): Ctx[] {
    const n = this.g.node(key)!;
    return hooksOf(this.g.hookMask(key)).map(h => hookCtx(n.table, h));
  }

  of(key: string): Ctx[] {
    const memo = this.memo.get(key);
    if (memo) return memo;
    const n = this.g.node(key);
    if (!n) return [];
    let out: Ctx[];
    if (n.builtin) out = this.g.hookMask(key) ? [hookCtx(n.table, n.name as HookName)] : [];
    else {
      const callers = this.g.callersOf(key);
      if (callers.length > MAX_CALLERS || this.busy.has(key)) return this.widest(key);
      this.busy.add(key);
      const seen = new Map<string, Ctx>();
      let wide = false;
      for (const from of callers) {
        for (const ctx of this.of(from)) {
          for (const e of this.g.out(from)) {
            if (e.to !== key) continue;
            const f = ruleFacts(e.rule, this.family);
            if (!compatible(f, ctx, this.local)) continue;
            const next = narrow(ctx, f);
            if (next)
              seen.set(
                JSON.stringify(next, (_, v) => (typeof v === 'bigint' ? `${v}` : v)),
                next,
              );
          }
          if (seen.size > MAX_CTX) wide = true;
        }
        if (wide) break;
      }
      this.busy.delete(key);
      out = wide ? this.widest(key) : [...seen.values()];
    }
    this.memo.set(key, out);
    return out;
  }
}

/** A context as header areas (`--dst-type LOCAL` as the node's own addresses). */
function ctxAreas(c: Ctx, local: readonly Span[]): Area[] {
  const area: Area = { proto: c.proto, src: c.src, dst: c.dst, sport: null, dport: c.dport, inIface: c.inIface };
  if (!c.dstLocal) return [area];
  return local.flatMap(l => meet(area, { ...ANY, dst: l }) ?? []);
}

const NAT_TARGETS = new Set(['DNAT', 'SNAT', 'MASQUERADE', 'REDIRECT', 'NETMAP']);

type NatWrite = { field: 'dst' | 'src'; to: Span | null; ports: Span | null };

/**
 * What a NAT rule writes. kube-proxy's DNATs (one per endpoint, 100k in a large dump) end in a plain
 * `-j DNAT --to-destination a.b.c.d:port`: read from the words, as the target would (nat.ts
 * `parseNatRange`); any other form from the compiled rule's facts.
 */
function natWrites(rule: Rule, family: Family): readonly NatWrite[] {
  const text = targetName(rule) === 'DNAT' ? soleTargetOption(rule, '--to-destination') : undefined;
  const r = text ? parseNatRange(text) : null;
  if (r?.from && r.to && r.from.v === family) {
    const to = { lo: addrValue(r.from), hi: addrValue(r.to) };
    const ports = r.portFrom !== null && r.portTo !== null ? { lo: BigInt(r.portFrom), hi: BigInt(r.portTo) } : null;
    return [{ field: 'dst', to, ports }];
  }
  return ruleFacts(rule, family).writes.filter((w): w is NatWrite => w.field === 'dst' || w.field === 'src');
}

/**
 * The packets as sent whose state at (table, hook) can lie in `area`: a field a NAT rewrite of an earlier
 * stage (relevant.ts `canPrecede`) can write into the area is left free; the others keep their bounds.
 * A rewrite that writes outside the area (another port, another address) cannot bring a packet into it.
 */
export function preimage(g: JumpGraph, area: Area, table: string, hook: HookName, family: Family): Area {
  let { src, dst, sport, dport } = area;
  if (!src && !dst && !sport && !dport) return area;
  const bit = hookBit(hook);
  for (const t of g.tables()) {
    if (!canPrecede(tableMask(t), t, bit, table, true)) continue;
    for (const [chain, rules] of g.writers(t)) {
      let precedes: boolean | undefined;
      for (const rule of rules) {
        if (!NAT_TARGETS.has(targetName(rule) ?? '')) continue;
        for (const w of natWrites(rule, family)) {
          const [addr, port] = w.field === 'dst' ? [dst, dport] : [src, sport];
          if (!addr && !port) continue;
          const into =
            (!w.to || !addr || intersect(w.to, addr) !== null) &&
            (!w.ports || !port || intersect(w.ports, port) !== null);
          if (!into) continue;
          precedes ??= canPrecede(g.hookMask(chainKey(t, chain)), t, bit, table, true);
          if (!precedes) break;
          if (w.field === 'dst') {
            dst = null;
            if (w.ports) dport = null;
          } else {
            src = null;
            if (w.ports) sport = null;
          }
        }
        if (precedes === false) break;
      }
      if (!src && !dst && !sport && !dport) break;
    }
  }
  return { ...area, src, dst, sport, dport };
}

/** The classes that start the exploration of one area of one context: one box per origin (and node address). */
export function areaClasses(ctx: Ctx, area: Area, env: ClassEnv): PacketClass[] {
  const out: PacketClass[] = [];
  const local = [
    ...env.nodeAddrs.map(n => ({ lo: n, hi: n })),
    env.family === 4 ? { lo: 0x7f000000n, hi: 0x7fffffffn } : { lo: 1n, hi: 1n },
  ];
  for (const from of fromOptions(ctx)) {
    // A process on the node sends from one of the node's addresses or loopback (as classes.ts assumes).
    const srcs: (Span | null)[] =
      from === 'local' && env.nodeAddrs.length
        ? local.flatMap(l => (area.src ? (intersect(area.src, l) ?? []) : [l]))
        : [area.src];
    for (const src of srcs) {
      const whole = wholeBox(env.family, from, { src, dst: area.dst, proto: area.proto, dport: area.dport });
      const iface = from === 'outside' ? area.inIface : null;
      const box: Box = {
        ...whole,
        sport: whole.sport && area.sport ? area.sport : whole.sport,
        ifaces: iface ? [iface] : [],
      };
      const input = boxInput(env.family, box, null, { in: iface ?? undefined });
      if (input)
        out.push({
          input,
          affinity: [],
          origin: 'changed',
          box,
          extent: boxExtent(env.family, box, input, [], env.uplink),
        });
    }
  }
  return out;
}

/**
 * The first classes of an iptables comparison: for every changed chain, each of its contexts met with
 * the chain's region, taken back to the packets as sent.
 */
export function regionClasses(
  g: JumpGraph,
  changed: ReadonlySet<string>,
  env: ClassEnv,
): { classes: PacketClass[]; areas: number } {
  const local = [
    ...env.nodeAddrs.map(n => ({ lo: n, hi: n })),
    env.family === 4 ? { lo: 0x7f000000n, hi: 0x7fffffffn } : { lo: 1n, hi: 1n },
  ];
  const ctxs = new ChainContexts(g, env.family, local);
  const classes: PacketClass[] = [];
  let areas = 0;
  for (const key of changed) {
    const n = g.node(key);
    if (!n) continue;
    const region = chainRegion(n.sides[0], n.sides[1], env.family, local);
    for (const ctx of ctxs.of(key)) {
      for (const c of ctxAreas(ctx, local)) {
        const list = region === 'all' ? [c] : region.flatMap(r => meet(c, r) ?? []);
        for (const a of list) {
          areas++;
          classes.push(...areaClasses(ctx, preimage(g, a, ctx.table, ctx.hook, env.family), env));
        }
      }
    }
  }
  return { classes, areas };
}
