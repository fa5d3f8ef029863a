/**
 * The proof that a class's representative speaks for its whole box. After tracing the representative
 * under both rulesets, every rule of every chain either trace entered is evaluated *symbolically* against
 * the box, one field at a time (facts.ts reads the rule's tests): a rule whose every test holds for the
 * whole box, or one of whose tests fails for the whole box, answers the same for every packet of it. A
 * rule that answers differently inside the box splits it at that rule's constants (into at most three
 * intervals, or one protocol / ICMP type / interface / mark apart), and the pieces are traced in turn.
 * Routing is a test too: boxes are cut at the node's addresses, its routes and loopback.
 *
 * When every class is *closed* (no rule on its paths, on either side, splits it), the classes cover the
 * packets that can reach a changed chain and each fares like its representative: "same behaviour" is a
 * proof over the modelled header fields, not a sample. What the check cannot decide (a module whose
 * constants are not fields here, a non-contiguous mask, NETMAP's per-address mapping, an undecidable match)
 * leaves the class *open*, and the report says approximate.
 */
import type { Chain, Rule, Ruleset } from '../model.ts';
import type { Trace } from '../eval/trace-types.ts';
import type { PacketInput } from '../eval/packet-spec.ts';
import { ifaceMatches } from '../matches/iface.ts';
import { parseAddr } from '../net/addr.ts';
import { hasPorts } from '../net/proto.ts';
import { type Box, type ProtoSet, boxExtent, boxInput } from './box.ts';
import type { ClassEnv, PacketClass } from './classes.ts';
import { textualDst } from './contexts.ts';
import { type Neg, type RuleFacts, ruleFacts } from './facts.ts';
import { targetName } from './graph.ts';
import { type Cutters, nftAnswer, nftExtras } from './nft-facts.ts';
import { tablesNamed } from './normalize.ts';
import { PORT_SPACE, type Span, atoms, contains, intersect } from './space.ts';

export type Check =
  | { readonly kind: 'closed' }
  | { readonly kind: 'split'; readonly pieces: PacketClass[] }
  | { readonly kind: 'open'; readonly reason: string };

/** What a rule's test says for a whole box: no packet matches, it answers alike for all, or a split. */
type Answer =
  | { kind: 'none' }
  | { kind: 'const' }
  | { kind: 'split'; boxes: { box: Box; in?: string; mark?: number }[] }
  | { kind: 'open'; reason: string };

const NONE: Answer = { kind: 'none' };
const CONST: Answer = { kind: 'const' };
const REST_IFACES = ['eth0', 'ens3', 'enp0s1', 'wan0', 'uplink9'];
/** States a rule can name that are the packet's own, not derived from NAT (`--ctstate DNAT` is). */
const BASE_STATES = new Set(['NEW', 'ESTABLISHED', 'RELATED', 'INVALID', 'UNTRACKED']);

function spanAnswer(
  box: Box,
  field: 'src' | 'dst' | 'sport' | 'dport',
  have: Span,
  test: Neg<readonly Span[]>,
): Answer {
  let all = false;
  let partial: Span | null = null;
  for (const s of test.value) {
    if (contains(s, have)) all = true;
    else if (intersect(s, have)) partial ??= s;
  }
  if (all) return test.negated ? NONE : CONST;
  if (partial) return { kind: 'split', boxes: atoms(have, [partial]).map(a => ({ box: { ...box, [field]: a } })) };
  return test.negated ? CONST : NONE;
}

function protoAnswer(box: Box, test: Neg<number>): Answer {
  const p = box.proto;
  if ('only' in p) return (p.only === test.value) !== test.negated ? CONST : NONE;
  if (p.except.includes(test.value)) return test.negated ? CONST : NONE;
  const only: ProtoSet = { only: test.value };
  const ports = hasPorts(test.value);
  const icmp = test.value === 1 || test.value === 58;
  return {
    kind: 'split',
    boxes: [
      {
        box: {
          ...box,
          proto: only,
          sport: ports ? PORT_SPACE : null,
          dport: ports ? PORT_SPACE : null,
          icmp: icmp ? { except: [] } : null,
        },
      },
      { box: { ...box, proto: { except: [...p.except, test.value] } } },
    ],
  };
}

/** Interfaces: the class is every name that agrees with its representative on the patterns it was cut against. */
function ifaceAnswer(
  box: Box,
  input: PacketInput,
  uplink: string,
  test: Neg<{ name: string; wildcard: boolean }>,
): Answer {
  if (box.from !== 'outside') return CONST;
  const q = test.value.name;
  if (box.ifaces.includes(q)) return CONST;
  const rep = input.in ?? uplink;
  const agrees = (n: string) => box.ifaces.every(p => ifaceMatches(p, n) === ifaceMatches(p, rep));
  const known = [...box.ifaces, q];
  const inside = q.endsWith('+') ? `${q.slice(0, -1)}0` : q;
  const outside = ifaceMatches(q, rep) ? REST_IFACES.find(n => !ifaceMatches(q, n) && agrees(n)) : rep;
  if (!agrees(inside) || outside === undefined)
    return { kind: 'open', reason: `interface pattern ${q} overlaps the class's interfaces` };
  return {
    kind: 'split',
    boxes: [
      { box: { ...box, ifaces: known }, in: inside },
      { box: { ...box, ifaces: known }, in: outside },
    ],
  };
}

/** Marks of local packets: the class is every mark that agrees with its representative on the tests it was cut against. */
function markAnswer(box: Box, input: PacketInput, test: { value: number; mask: number }): Answer {
  if (box.from !== 'local' || box.marks.some(([v, m]) => v === test.value && m === test.mask)) return CONST;
  const rep = Number(input.mark ?? 0) >>> 0;
  const agrees = (x: number) => box.marks.every(([v, m]) => ((x & m) >>> 0 === v) === ((rep & m) >>> 0 === v));
  const yes = ((rep & ~test.mask) | test.value) >>> 0;
  const low = test.mask & -test.mask;
  const no = low ? (yes ^ low) >>> 0 : null;
  if (no === null || !agrees(yes) || !agrees(no))
    return { kind: 'open', reason: `mark test ${test.value}/${test.mask} overlaps the class's marks` };
  const marks = [...box.marks, [test.value, test.mask] as const];
  return {
    kind: 'split',
    boxes: [
      { box: { ...box, marks }, mark: yes },
      { box: { ...box, marks }, mark: no },
    ],
  };
}

function icmpAnswer(box: Box, f: RuleFacts): Answer {
  if (!box.icmp || !f.icmpTypes.length) return CONST;
  const keys = f.icmpTypes.map(([t, c]) => `${t}/${c}`);
  if ('only' in box.icmp) return CONST;
  const fresh = keys.filter(k => !(box.icmp as { except: readonly string[] }).except.includes(k));
  if (!fresh.length) return CONST;
  return {
    kind: 'split',
    boxes: [
      ...fresh.map(k => ({ box: { ...box, icmp: { only: k } } })),
      { box: { ...box, icmp: { except: [...box.icmp.except, ...fresh] } } },
    ],
  };
}

/** The cuts nftables rules share with iptables rules (nft-facts.ts). */
const CUTTERS: Cutters = {
  proto: (box, value) => protoAnswer(box, { negated: false, value }),
  iface: (box, input, uplink, name) =>
    ifaceAnswer(box, input, uplink, { negated: false, value: { name, wildcard: name.endsWith('+') } }),
  mark: markAnswer,
};

/** One rule against a box: the first test that fails for the whole box settles it; else the first split. */
function answer(f: RuleFacts, rule: Rule, box: Box, input: PacketInput, uplink: string): Answer {
  const parts: Answer[] = [];
  if (f.proto) parts.push(protoAnswer(box, f.proto));
  if (f.src) parts.push(spanAnswer(box, 'src', box.src, { negated: f.src.negated, value: [f.src.value] }));
  if (f.dst) parts.push(spanAnswer(box, 'dst', box.dst, { negated: f.dst.negated, value: [f.dst.value] }));
  // iprange and conntrack's original tuple: constants on the same fields, direction aside.
  for (const c of f.srcCuts) {
    const a = spanAnswer(box, 'src', box.src, { negated: false, value: [c] });
    parts.push(a.kind === 'split' ? a : CONST);
  }
  for (const c of f.dstCuts) {
    const a = spanAnswer(box, 'dst', box.dst, { negated: false, value: [c] });
    parts.push(a.kind === 'split' ? a : CONST);
  }
  const only = 'only' in box.proto ? box.proto.only : null;
  if (only !== null && hasPorts(only) && (!f.proto || f.proto.value === only)) {
    for (const d of f.dports) parts.push(spanAnswer(box, 'dport', box.dport ?? PORT_SPACE, d));
    for (const s of f.sports) parts.push(spanAnswer(box, 'sport', box.sport ?? PORT_SPACE, s));
  }
  if (f.inIface) parts.push(ifaceAnswer(box, input, uplink, f.inIface));
  if (f.proto && !f.proto.negated) parts.push(icmpAnswer(box, f));
  for (const m of f.marks) parts.push(markAnswer(box, input, m));
  if (parts.some(p => p.kind === 'none')) return NONE;
  const split = parts.find(p => p.kind === 'split' || p.kind === 'open');
  if (split) return split;
  if (f.unsplit.length)
    return {
      kind: 'open',
      reason: `-m ${f.unsplit.join(', -m ')} (${rule.chain} line ${rule.line + 1}) is not decided per field`,
    };
  if (f.inexact) return { kind: 'open', reason: `a non-contiguous address mask (${rule.chain} line ${rule.line + 1})` };
  if (targetName(rule) === 'NETMAP')
    return { kind: 'open', reason: `NETMAP (${rule.chain} line ${rule.line + 1}) maps each address apart` };
  return CONST;
}

function addrNum(text: string): bigint {
  const a = parseAddr(text);
  return a ? (typeof a.n === 'bigint' ? a.n : BigInt(a.n)) : 0n;
}

/** Long chains (KUBE-SERVICES) indexed by exact destination, so a box meets only the rules it can match. */
interface ChainIndex {
  readonly wide: number[];
  readonly exact: { d: bigint; i: number }[];
  /** Built when a box with many destinations asks: rules by their one destination port, and the rest. */
  ports?: { readonly byPort: Map<bigint, number[]>; readonly rest: number[] };
}

const indexes = new WeakMap<Chain, ChainIndex>();
const SMALL_CHAIN = 64;
/** A box whose destinations leave more candidates than this is looked up by port too, if it has few. */
const MANY_CANDIDATES = 512;
const FEW_PORTS = 256n;

/** The rules of a chain by the one destination port they test (`--dport 80`), and those that test no such port. */
function portIndex(chain: Chain, family: 4 | 6): NonNullable<ChainIndex['ports']> {
  const byPort = new Map<bigint, number[]>();
  const rest: number[] = [];
  chain.rules.forEach((r, i) => {
    if (r.nft) return void rest.push(i);
    const f = ruleFacts(r, family);
    const one = f.dports.length === 1 && !f.dports[0]!.negated && f.dports[0]!.value.length === 1;
    const span = one ? f.dports[0]!.value[0]! : null;
    if (!span || span.lo !== span.hi) return void rest.push(i);
    const list = byPort.get(span.lo);
    if (list) list.push(i);
    else byPort.set(span.lo, [i]);
  });
  return { byPort, rest };
}

/**
 * The rules of a chain a box can match on its destination: all of a short chain, else the rules without an
 * exact destination and those whose destination lies in the box; when that is still many and the box has
 * few destination ports, the rules that test none of them are left out too (a rule testing one port
 * matches no packet of a box without it). Any order will do: a split found at any rule is a valid split.
 */
/** Rules read one at a time by position (an array is one): a list that is not built unless read. */
interface RuleList {
  readonly length: number;
  at(k: number): Rule | undefined;
}

function candidates(chain: Chain, box: Box, family: 4 | 6): RuleList {
  if (chain.rules.length <= SMALL_CHAIN) return chain.rules;
  let ix = indexes.get(chain);
  if (!ix) {
    const wide: number[] = [];
    const exact: { d: bigint; i: number }[] = [];
    chain.rules.forEach((r, i) => {
      // nftables rules are programs: each is a candidate (their destinations are looked up, not written).
      let d = r.nft ? null : textualDst(r);
      if (d === undefined) {
        const f = ruleFacts(r, family);
        d = f.dst && !f.dst.negated && f.dst.value.lo === f.dst.value.hi ? f.dst.value.lo : null;
      }
      if (d === null) wide.push(i);
      else exact.push({ d, i });
    });
    exact.sort((a, b) => (a.d < b.d ? -1 : a.d > b.d ? 1 : a.i - b.i));
    indexes.set(chain, (ix = { wide, exact }));
  }
  let lo = 0;
  let hi = ix.exact.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ix.exact[mid]!.d < box.dst.lo) lo = mid + 1;
    else hi = mid;
  }
  let end = ix.exact.length;
  for (let a = lo; a < end;) {
    const mid = (a + end) >> 1;
    if (ix.exact[mid]!.d <= box.dst.hi) a = mid + 1;
    else end = mid;
  }
  const dp = box.dport;
  if (end - lo > MANY_CANDIDATES && dp && dp.hi - dp.lo < FEW_PORTS) {
    ix.ports ??= portIndex(chain, family);
    const picked = [...ix.ports.rest];
    for (let p = dp.lo; p <= dp.hi; p++) picked.push(...(ix.ports.byPort.get(p) ?? []));
    return { length: picked.length, at: k => chain.rules[picked[k]!] };
  }
  const { wide, exact } = ix;
  const rules = chain.rules;
  return {
    length: wide.length + end - lo,
    at: k => rules[k < wide.length ? wide[k]! : exact[lo + k - wide.length]!.i],
  };
}

/** A class for a piece of a box: the representative moves only where it left the piece. */
export function pieceClass(
  env: ClassEnv,
  c: PacketClass,
  piece: { box: Box; in?: string; mark?: number },
  affinity = c.affinity,
): PacketClass | null {
  const extra = {
    in: piece.in ?? c.input.in,
    mark: piece.mark ?? (c.input.mark === undefined ? undefined : Number(c.input.mark)),
    ctstate: c.input.ctstate,
  };
  const input = boxInput(env.family, piece.box, c.input, extra);
  if (!input) return null;
  return {
    input,
    affinity,
    origin: c.origin,
    box: piece.box,
    extent: boxExtent(env.family, piece.box, input, affinity, env.uplink),
  };
}

/** Cuts every box gets: routing (the node's addresses, routes, loopback) and addrtype's special ranges. */
export function alwaysCuts(env: ClassEnv): { src: Span[]; dst: Span[] } {
  const nodes = env.nodeAddrs.map(n => ({ lo: n, hi: n }));
  const special =
    env.family === 4
      ? [
          { lo: 0xe0000000n, hi: 0xefffffffn },
          { lo: 0xffffffffn, hi: 0xffffffffn },
          { lo: 0x7f000000n, hi: 0x7fffffffn },
        ]
      : [{ lo: 1n, hi: 1n }];
  return { src: [...nodes, ...env.srcRouteCuts, ...special], dst: [...nodes, ...env.routeCuts, ...special] };
}

/**
 * Whether a traced class is closed; else how to split it, or why it cannot be decided. `spawn` receives
 * further classes the paths call for without splitting this one (a conntrack state or a recent list a rule
 * names: the class is one state, so other states are other classes).
 */
export function checkClass(
  env: ClassEnv,
  c: PacketClass,
  sides: readonly { rs: Ruleset; trace: Trace }[],
  spawn: (c: PacketClass) => void,
  skip?: (rule: Rule) => boolean,
  work?: { rules: number },
): Check {
  /** A class that changes is cut exactly; one that does not may skip what cannot tell its halves apart. */
  const exact = skip === undefined;
  const box = c.box;
  if (!box) return { kind: 'open', reason: 'a sampled packet' };
  const cuts = alwaysCuts(env);
  const cutAt = (field: 'src' | 'dst', list: readonly Span[]): Check | null => {
    const have = box[field];
    const at = list.find(s => intersect(s, have) && !contains(s, have));
    return at
      ? pieces(
          env,
          c,
          atoms(have, [at]).map(a => ({ box: { ...box, [field]: a } })),
        )
      : null;
  };
  // Routing answers by destination. A source that is the node's own, loopback or multicast is a martian
  // from outside, dropped at the first routing decision on both sides alike (routing reads no rule), so
  // the source is cut there only for a class that changes, or where a rule tests addrtype.
  const first = cutAt('dst', cuts.dst) ?? (exact ? cutAt('src', cuts.src) : null);
  if (first) return first;
  // Routing reads the incoming interface: a loopback or node-owned source, or a loopback destination, is
  // a martian on any interface but lo (pipeline.ts `routeInput`). A box whose representative is such a
  // martian is dropped before any rule could cut it at `-i lo`, while its packets arriving on lo are
  // delivered: the box is cut at lo first.
  const lo = loCut(env, c, box);
  if (lo) return pieces(env, c, lo);
  for (const { rs, trace } of sides) {
    if (trace.unknown) {
      const why = [...new Set(trace.outcomes.flatMap(o => o.assumptions.map(x => x.reason)))].join('; ');
      return { kind: 'open', reason: `a path rests on an undecidable match${why ? ` (${why})` : ''}` };
    }
    const seen = new Set<string>();
    for (const o of trace.outcomes) {
      // Rules after a NAT binding test the translated packet: the new address (and port) is one value for
      // the whole box, so they are evaluated against that value, not the box's original interval.
      let view: Box = box;
      for (const e of o.events) {
        if (e.kind === 'rule') {
          const v = e.step.verdict;
          const point = (x: string | null) => (x ? { lo: addrNum(x), hi: addrNum(x) } : null);
          // nftables steps end `accept` and say what they did: `dnat → …`, `masquerade → …`.
          const act = e.step.action ?? '';
          const dnat = /^(DNAT|REDIRECT)/.test(v) || /^(dnat|redirect) →/.test(act);
          const snat = /^(SNAT|MASQUERADE)/.test(v) || /^(snat|masquerade) →/.test(act);
          if (dnat && point(o.packet.dst))
            view = {
              ...view,
              dst: point(o.packet.dst)!,
              dport:
                view.dport && o.packet.dport !== null
                  ? { lo: BigInt(o.packet.dport), hi: BigInt(o.packet.dport) }
                  : view.dport,
            };
          if (snat && point(o.packet.src))
            view = {
              ...view,
              src: point(o.packet.src)!,
              sport:
                view.sport && o.packet.sport !== null
                  ? { lo: BigInt(o.packet.sport), hi: BigInt(o.packet.sport) }
                  : view.sport,
            };
          continue;
        }
        if (e.kind !== 'chain') continue;
        const key = `${e.table} ${e.chain} ${view === box ? '' : `${view.src.lo}-${view.dst.lo}-${view.dport?.lo ?? ''}`}`;
        if (seen.has(key)) continue;
        seen.add(key);
        // nftables steps name the table without its family: every table of that name is looked at.
        const chains = tablesNamed(rs, e.table).flatMap(t => t.chains.get(e.chain) ?? []);
        // Candidates one at a time, the list never built: a box split at the first rule of a long chain (each
        // Service address of KUBE-SERVICES in turn, for a box over all of them) looks at that rule only.
        for (const chain of chains) {
          const list = candidates(chain, view, env.family);
          for (let k = 0; k < list.length; k++) {
            const rule = list.at(k)!;
            // What the proof costs: the comparison's work budget counts the rules looked at (diff.ts `explore`).
            if (work) work.rules++;
            if (skip?.(rule)) continue;
            const f = rule.nft ? nftExtras(rule) : ruleFacts(rule, env.family);
            for (const st of f.ctstates) {
              if (BASE_STATES.has(st) && st !== (c.input.ctstate ?? 'NEW'))
                spawn({
                  ...c,
                  input: { ...c.input, ctstate: st as PacketInput['ctstate'] },
                  extent: { ...c.extent, ctstate: st },
                });
            }
            for (const l of f.recentLists)
              if (!c.affinity.includes(l))
                spawn({ ...c, affinity: [...c.affinity, l], extent: { ...c.extent, affinity: [...c.affinity, l] } });
            if (f.addrtype && !exact) {
              const byType = cutAt('src', cuts.src);
              if (byType) return byType;
            }
            const a = rule.nft
              ? nftAnswer(rule, box, view, c.input, env.uplink, env.family, CUTTERS)
              : answer(f as RuleFacts, rule, view, c.input, env.uplink);
            if (a.kind === 'open') return a;
            if (a.kind === 'split') {
              // Only untranslated fields can split (translated ones are single values): carry them to the box.
              const back = a.boxes.map(p => {
                const out: Record<string, unknown> = { ...box };
                for (const k of Object.keys(p.box) as (keyof Box)[]) if (p.box[k] !== view[k]) out[k] = p.box[k];
                return { ...p, box: out as unknown as Box };
              });
              return pieces(env, c, back);
            }
          }
        }
      }
    }
  }
  return { kind: 'closed' };
}

function pieces(env: ClassEnv, c: PacketClass, boxes: { box: Box; in?: string; mark?: number }[]): Check {
  const out: PacketClass[] = [];
  for (const b of boxes) {
    const p = pieceClass(env, c, b);
    if (p) out.push(p);
  }
  return { kind: 'split', pieces: out };
}

/** The lo cut of a box from outside whose representative routing would drop as a martian (see checkClass). */
function loCut(env: ClassEnv, c: PacketClass, box: Box): { box: Box; in?: string }[] | null {
  if (box.from !== 'outside' || box.ifaces.includes('lo') || c.input.in === 'lo') return null;
  const loop = env.family === 4 ? { lo: 0x7f000000n, hi: 0x7fffffffn } : { lo: 1n, hi: 1n };
  const martian =
    contains(loop, box.src) || contains(loop, box.dst) || env.nodeAddrs.some(n => box.src.lo === n && box.src.hi === n);
  if (!martian) return null;
  const a = ifaceAnswer(box, c.input, env.uplink, { negated: false, value: { name: 'lo', wildcard: false } });
  return a.kind === 'split' ? a.boxes : null;
}
