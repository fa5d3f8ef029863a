/**
 * Contexts: what the jumps that lead to a chain already say about the packets in it. kube-proxy reaches
 * KUBE-SVC-X only through `-d 10.96.0.10/32 -p tcp --dport 53`, so the constants of KUBE-SVC-X and of the
 * KUBE-SEP chains under it cut the classes of those packets only, not of every packet: this keeps the
 * number of classes proportional to what changed. A context is built from the positive header checks of
 * the jumps on the way (an over-approximation: negations and other matches only make it wider), and each
 * context collects the rules whose constants cut its classes (its group).
 */
import type { HookName, Rule } from '../model.ts';
import type { Family } from '../net/addr.ts';
import { type RuleFacts, ruleFacts } from './facts.ts';
import { type JumpGraph, hookBit } from './graph.ts';
import { type Relevant, canPrecede, feeds } from './relevant.ts';
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

export interface Group {
  readonly ctx: Ctx;
  readonly rules: Set<Rule>;
  readonly chains: Set<string>;
}

/** More contexts than this for one chain (kube-proxy's KUBE-MARK-MASQ) and it is analysed per hook only. */
const MAX_CONTEXTS_PER_CHAIN = 32;
/** Interceptor rules kept per context; beyond it the context is flagged approximate. */
const MAX_VIA = 512;

function ctxKey(c: Ctx): string {
  const s = (x: Span | null) => (x ? `${x.lo}-${x.hi}` : '*');
  return `${c.table}|${c.hook}|${c.proto ?? '*'}|${s(c.src)}|${s(c.dst)}|${s(c.dport)}|${c.inIface ?? '*'}|${c.dstLocal ? 'L' : ''}`;
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

/** Rules of one side of a chain, with an index by exact destination for long chains (KUBE-SERVICES). */
class ChainRules {
  private readonly byDst = new Map<bigint, number[]>();
  private readonly wide: number[] = [];

  constructor(
    readonly rules: readonly Rule[],
    private readonly family: Family,
  ) {
    rules.forEach((r, i) => {
      let d = textualDst(r);
      if (d === undefined) {
        const f = ruleFacts(r, family);
        d = f.dst && !f.dst.negated && f.dst.value.lo === f.dst.value.hi ? f.dst.value.lo : null;
      }
      if (d === null) this.wide.push(i);
      else {
        const list = this.byDst.get(d);
        if (list) list.push(i);
        else this.byDst.set(d, [i]);
      }
    });
  }

  /** Rules before position `pos` that packets of the context could match. */
  before(pos: number, c: Ctx, local: readonly Span[]): Rule[] {
    // Only rules naming a destination the context can have, and rules naming none, can catch its packets.
    let cand: number[];
    if (c.dst && c.dst.lo === c.dst.hi) cand = [...(this.byDst.get(c.dst.lo) ?? []), ...this.wide];
    else if (c.dst || (c.dstLocal && local.length)) {
      const spans = c.dst ? [c.dst] : local;
      cand = [...this.wide];
      for (const [d, list] of this.byDst) if (spans.some(x => x.lo <= d && d <= x.hi)) cand.push(...list);
    } else cand = this.rules.map((_, i) => i);
    cand.sort((a, b) => a - b);
    const out: Rule[] = [];
    for (const i of cand) {
      if (i >= pos) break;
      if (compatible(ruleFacts(this.rules[i]!, this.family), c, local)) out.push(this.rules[i]!);
    }
    return out;
  }
}

export interface Contexts {
  readonly groups: Group[];
  /** Chains analysed per hook only, because too many different jumps reach them. */
  readonly widened: string[];
  readonly truncated: boolean;
}

/** `nodeAddrs`: the node's addresses as values, for `--dst-type LOCAL`. */
export function buildContexts(g: JumpGraph, rel: Relevant, family: Family, nodeAddrs: readonly bigint[]): Contexts {
  const local: Span[] = [
    ...nodeAddrs.map(n => ({ lo: n, hi: n })),
    ...(family === 4 ? [{ lo: 0x7f000000n, hi: 0x7fffffffn }] : [{ lo: 1n, hi: 1n }]),
  ];
  const groups = new Map<string, Group>();
  const perChain = new Map<string, Map<string, { ctx: Ctx; via: Set<Rule> }>>();
  const widened = new Set<string>();
  const sideRules = new Map<string, ChainRules>();
  let truncated = false;
  const work: { chain: string; key: string }[] = [];
  let head = 0;

  const groupOf = (ctx: Ctx, key: string): Group => {
    let gr = groups.get(key);
    if (!gr) groups.set(key, (gr = { ctx, rules: new Set(), chains: new Set() }));
    return gr;
  };
  const enter = (chain: string, ctx: Ctx, via: Iterable<Rule>) => {
    let ctxs = perChain.get(chain);
    if (!ctxs) perChain.set(chain, (ctxs = new Map()));
    if (!widened.has(chain) && ctxs.size >= MAX_CONTEXTS_PER_CHAIN) {
      widened.add(chain);
      ctxs.clear();
    }
    if (widened.has(chain)) {
      ctx = {
        table: ctx.table,
        hook: ctx.hook,
        proto: null,
        src: null,
        dst: null,
        dport: null,
        inIface: null,
        dstLocal: false,
      };
      via = [];
    }
    const key = ctxKey(ctx);
    let entry = ctxs.get(key);
    let grew = false;
    if (!entry) {
      ctxs.set(key, (entry = { ctx, via: new Set() }));
      grew = true;
    }
    for (const r of via) {
      if (entry.via.size >= MAX_VIA) {
        truncated = true;
        break;
      }
      if (!entry.via.has(r)) {
        entry.via.add(r);
        grew = true;
      }
    }
    if (grew) work.push({ chain, key });
  };

  for (const key of rel.all) {
    const n = g.node(key)!;
    if (n.builtin && g.hookMask(key) !== 0)
      enter(
        key,
        {
          table: n.table,
          hook: n.name as HookName,
          proto: null,
          src: null,
          dst: null,
          dport: null,
          inIface: null,
          dstLocal: false,
        },
        [],
      );
  }
  while (head < work.length) {
    const { chain, key } = work[head++]!;
    const entry = perChain.get(chain)?.get(key);
    if (!entry) continue;
    const { ctx, via } = entry;
    const group = groupOf(ctx, key);
    group.chains.add(chain);
    for (const r of via) group.rules.add(r);
    const full = rel.full.has(chain);
    if (full)
      for (const { rules } of g.rules(chain))
        for (const r of rules) if (compatible(ruleFacts(r, family), ctx, local)) group.rules.add(r);
    for (const e of g.out(chain)) {
      if (!rel.all.has(e.to)) continue;
      const f = ruleFacts(e.rule, family);
      if (!compatible(f, ctx, local)) continue;
      const next = narrow(ctx, f);
      if (!next) continue;
      const sideKey = `${chain}#${e.side}`;
      let cr = sideRules.get(sideKey);
      if (!cr) sideRules.set(sideKey, (cr = new ChainRules(g.node(chain)!.sides[e.side]!.rules, family)));
      const interceptors = cr.before(e.pos, next, local);
      // The gate and what may catch its packets first also cut this chain's own classes.
      if (!full) {
        group.rules.add(e.rule);
        for (const r of interceptors) group.rules.add(r);
      }
      enter(e.to, next, [...via, ...interceptors, e.rule]);
    }
  }
  // A group whose rules test a field that a relevant rule rewrites earlier (a mark set in mangle, an
  // address chosen by DNAT) is also cut by that rewrite's constants and by the jumps that lead to it:
  // which packets arrive marked depends on them, what happens next on the group's own constants.
  // Rewriters are bucketed by the stage they run in, so each group decides per bucket whether they can
  // run before it (kube-proxy has one DNAT per endpoint, all in the same stage).
  const buckets = new Map<
    string,
    { mask: number; table: string; nat: boolean; writers: { rule: Rule; facts: RuleFacts; via: Set<Rule> }[] }
  >();
  for (const chain of rel.full) {
    const via = new Set<Rule>();
    for (const entry of perChain.get(chain)?.values() ?? [])
      for (const r of entry.via) if (via.size < MAX_VIA) via.add(r);
    const mask = g.hookMask(chain);
    const table = g.node(chain)!.table;
    for (const { rules } of g.rules(chain)) {
      for (const r of rules) {
        const f = ruleFacts(r, family);
        if (!f.writes.length) continue;
        const nat = f.writes.some(x => x.field === 'dst' || x.field === 'src');
        const key = `${mask} ${table} ${nat}`;
        let b = buckets.get(key);
        if (!b) buckets.set(key, (b = { mask, table, nat, writers: [] }));
        b.writers.push({ rule: r, facts: f, via });
      }
    }
  }
  for (const group of groups.values()) {
    const facts = [...group.rules].map(r => ruleFacts(r, family));
    const stage = hookBit(group.ctx.hook);
    for (const b of buckets.values()) {
      if (!canPrecede(b.mask, b.table, stage, group.ctx.table, b.nat)) continue;
      for (const w of b.writers) {
        if (group.rules.has(w.rule) || !w.facts.writes.some(x => facts.some(f => feeds(x, f)))) continue;
        group.rules.add(w.rule);
        for (const r of w.via) group.rules.add(r);
      }
    }
  }
  return { groups: [...groups.values()], widened: [...widened], truncated };
}
