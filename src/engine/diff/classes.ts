/**
 * Packet classes of one context: the cross product of each dimension's atoms (source and destination
 * address, protocol, ports or ICMP type, incoming interface, mark, connection state, session affinity),
 * cut at every constant the context's rules test. Within a class every one of those rules answers the same
 * for every packet, so one representative packet stands for the class. A context whose product is too
 * large is varied one dimension at a time instead, and the report says so.
 */
import type { Rule } from '../model.ts';
import type { Family } from '../net/addr.ts';
import { ifaceMatches } from '../matches/iface.ts';
import { hasPorts, protoName } from '../net/proto.ts';
import type { PacketInput } from '../eval/packet-spec.ts';
import { formatAddr } from '../net/addr.ts';
import type { Ctx } from './contexts.ts';
import { type RuleFacts, ruleFacts } from './facts.ts';
import {
  PORT_SPACE,
  type Span,
  addrRepresentative,
  addrSpace,
  atoms,
  formatAddrSpan,
  formatPortSpan,
  representative,
  valueAddr,
} from './space.ts';
import type { ClassExtent } from './types.ts';
import { type Box, type ProtoSet, boxExtent, boxInput, wholeBox } from './box.ts';

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

/** Classes one context may produce before it is varied one dimension at a time. */
export const MAX_CLASSES_PER_CONTEXT = 2048;

const PREFERRED_DST: Record<Family, bigint[]> = { 4: [0xc633640an], 6: [0x20010db8010000000000000000000010n] };
const PREFERRED_SRC: Record<Family, bigint[]> = { 4: [0xcb00710an], 6: [0x20010db8020000000000000000000010n] };
const PREFERRED_DPORT = [80n, 443n, 53n, 8080n, 1024n];
const PREFERRED_SPORT = [40000n];
const OTHER_PROTOS: Record<Family, number[]> = { 4: [6, 17, 1, 132, 47], 6: [6, 17, 58, 132, 47] };
const REST_IFACES = ['eth0', 'ens3', 'enp0s1', 'wan0'];

interface Dim<T> {
  readonly values: readonly { readonly value: T; readonly label: string | null; readonly span: Span }[];
}

function addrDim(
  env: ClassEnv,
  bounds: Span,
  cuts: Span[],
  preferred: bigint[],
  skip: readonly bigint[] = [],
): Dim<string> {
  return {
    values: atoms(bounds, cuts)
      .filter(a => !(a.lo === a.hi && skip.includes(a.lo)))
      .map(a => ({
        value: formatAddr(valueAddr(env.family, addrRepresentative(env.family, a, preferred))),
        label: formatAddrSpan(env.family, a),
        span: a,
      })),
  };
}

function portDim(bounds: Span, cuts: Span[], preferred: bigint[]): Dim<number> {
  return {
    values: atoms(bounds, cuts).map(a => ({
      value: Number(representative(a, preferred)),
      label: formatPortSpan(a),
      span: a,
    })),
  };
}

export function fromOptions(ctx: Ctx): ('outside' | 'local')[] {
  if (ctx.hook === 'FORWARD' || (ctx.hook === 'PREROUTING' && ctx.table === 'nat')) return ['outside'];
  if (ctx.hook === 'OUTPUT') return ['local'];
  return ['outside', 'local'];
}

/** The representative packets of a context, with what each one stands for. */
export function classesOf(
  ctx: Ctx,
  rules: Iterable<Rule>,
  env: ClassEnv,
): { classes: PacketClass[]; degraded: boolean } {
  const facts: RuleFacts[] = [...rules].map(r => ruleFacts(r, env.family));
  const space = addrSpace(env.family);
  const nodeCuts = env.nodeAddrs.map(n => ({ lo: n, hi: n }));
  const addrtype = facts.some(f => f.addrtype);
  // Destinations: the node's addresses only, behind `--dst-type LOCAL`; else the atoms of every constant.
  let dst: Dim<string>;
  const loopback = env.family === 4 ? 0x7f000001n : 1n;
  const loopbackLabel = env.family === 4 ? '127.0.0.0/8' : '::1';
  const loopSpan = env.family === 4 ? { lo: 0x7f000000n, hi: 0x7fffffffn } : { lo: 1n, hi: 1n };
  const addrValue = (n: bigint) => ({
    value: formatAddr(valueAddr(env.family, n)),
    label: n === loopback ? loopbackLabel : formatAddr(valueAddr(env.family, n)),
    span: n === loopback ? loopSpan : { lo: n, hi: n },
  });
  if (ctx.dstLocal) {
    // `--dst-type LOCAL` is every address of the node, loopback included (localhost NodePorts).
    dst = { values: [...env.nodeAddrs, loopback].map(addrValue) };
  } else {
    // Routing is a test too: local delivery, loopback and each route send a packet another way.
    const cuts = [
      ...facts.flatMap(f => [...(f.dst ? [f.dst.value] : []), ...f.dstCuts]),
      ...nodeCuts,
      ...env.routeCuts,
    ];
    dst = addrDim(env, ctx.dst ?? space, cuts, PREFERRED_DST[env.family]);
  }
  const srcCuts = [...facts.flatMap(f => [...(f.src ? [f.src.value] : []), ...f.srcCuts]), ...env.srcRouteCuts];
  if (addrtype) srcCuts.push(...nodeCuts);
  // A packet from outside never carries one of the node's addresses (the kernel drops it as a martian).
  const srcOutside = addrDim(env, ctx.src ?? space, srcCuts, PREFERRED_SRC[env.family], env.nodeAddrs);
  // A process on the node sends from one of the node's addresses or from loopback.
  const srcLocal: Dim<string> = env.nodeAddrs.length
    ? { values: [...env.nodeAddrs, loopback].map(addrValue) }
    : srcOutside;
  // Protocols named, plus one they do not name; any protocol stands for all when none is named.
  const named = new Set<number>();
  for (const f of facts) if (f.proto) named.add(f.proto.value);
  let protos: number[];
  if (ctx.proto !== null) protos = [ctx.proto];
  else if (named.size === 0) protos = [6];
  else protos = [...named, ...OTHER_PROTOS[env.family].filter(p => !named.has(p)).slice(0, 1)];
  const ifaceNames = [...new Set(facts.flatMap(f => (f.inIface ? [f.inIface.value.name] : [])))];
  const patterns = ifaceNames;
  const rest = [env.uplink, ...REST_IFACES].find(n => !patterns.some(p => ifaceMatches(p, n)));
  const ifaces: (string | undefined)[] =
    ctx.inIface !== null
      ? [ctx.inIface]
      : [
          ...patterns.map(p => (p.endsWith('+') ? `${p.slice(0, -1)}0` : p)),
          ...(rest === env.uplink || rest === undefined ? [undefined] : [rest]),
        ];
  const markSet = new Set<number>([0]);
  for (const f of facts) for (const m of f.marks) markSet.add(m.value).add((m.value ^ (m.mask & -m.mask)) >>> 0);
  const states = [
    'NEW',
    ...['ESTABLISHED', 'RELATED', 'INVALID', 'UNTRACKED'].filter(s => facts.some(f => f.ctstates.includes(s))),
  ];
  const lists = [...new Set(facts.flatMap(f => f.recentLists))];
  const affinities: string[][] = [[], ...lists.map(l => [l])];

  // Per protocol: destination and source ports, or ICMP types.
  type Label = { readonly value: number; readonly label: string | null; readonly span: Span };
  interface L4 {
    readonly proto: number;
    readonly dport: Label | null;
    readonly sport: Label | null;
    readonly icmp: readonly [number, number] | null;
  }
  const l4 = protos.flatMap((p): L4[] => {
    const mine = facts.filter(f => !f.proto || f.proto.value === p || f.proto.negated);
    if (hasPorts(p)) {
      const dports = portDim(
        p === ctx.proto && ctx.dport ? ctx.dport : PORT_SPACE,
        mine.flatMap(f => f.dports.flatMap(d => d.value)),
        PREFERRED_DPORT,
      );
      const sports = portDim(
        PORT_SPACE,
        mine.flatMap(f => f.sports.flatMap(d => d.value)),
        PREFERRED_SPORT,
      );
      return dports.values.flatMap(d => sports.values.map(s => ({ proto: p, dport: d, sport: s, icmp: null })));
    }
    if (p === 1 || p === 58) {
      const types = new Map<string, [number, number]>([[p === 1 ? '8/0' : '128/0', p === 1 ? [8, 0] : [128, 0]]]);
      for (const f of mine) for (const t of f.icmpTypes) types.set(`${t[0]}/${t[1]}`, [t[0], t[1]]);
      return [...types.values()].map(t => ({ proto: p, dport: null, sport: null, icmp: t }));
    }
    return [{ proto: p, dport: null, sport: null, icmp: null }];
  });
  const icmpNamed = new Set(facts.flatMap(f => f.icmpTypes.map(([t, c]) => `${t}/${c}`)));
  const ifaceKnown = ifaceNames;
  const markKnown = [
    ...new Map(facts.flatMap(f => f.marks.map(m => [`${m.value}/${m.mask}`, [m.value, m.mask] as const]))).values(),
  ];

  /** The box a cross-product class stands for: each dimension's atom, the protocols the rules do not name as one. */
  const boxOf = (
    from: 'outside' | 'local',
    l: L4,
    d: Dim<string>['values'][number],
    s: Dim<string>['values'][number],
  ): Box => {
    const other = ctx.proto === null && !named.has(l.proto);
    const proto: ProtoSet = other ? { except: [...named] } : { only: l.proto };
    const key = l.icmp ? `${l.icmp[0]}/${l.icmp[1]}` : null;
    return {
      from,
      src: s.span,
      dst: d.span,
      proto,
      sport: other ? null : (l.sport?.span ?? null),
      dport: other ? null : (l.dport?.span ?? null),
      icmp: other || key === null ? null : icmpNamed.has(key) ? { only: key } : { except: [...icmpNamed] },
      ifaces: ifaceKnown,
      marks: markKnown,
      lists,
    };
  };
  const out: PacketClass[] = [];
  const emit = (
    from: 'outside' | 'local',
    l: L4,
    d: Dim<string>['values'][number],
    s: Dim<string>['values'][number],
    iface: string | undefined,
    mark: number,
    state: string,
    aff: string[],
  ) => {
    const input: Record<string, unknown> = { protocol: protoName(l.proto), src: s.value, dst: d.value, from };
    if (l.dport) input.dport = l.dport.value;
    if (l.sport) input.sport = l.sport.value;
    if (l.icmp) {
      input.icmpType = l.icmp[0];
      input.icmpCode = l.icmp[1];
    }
    if (from === 'outside' && iface !== undefined) input.in = iface;
    if (from === 'local' && mark !== 0) input.mark = mark;
    if (state !== 'NEW') input.ctstate = state;
    const box = boxOf(from, l, d, s);
    out.push({
      input: input as unknown as PacketInput,
      affinity: aff,
      origin: 'changed',
      box,
      extent: boxExtent(env.family, box, input as unknown as PacketInput, aff, env.uplink),
    });
  };
  const froms = fromOptions(ctx);
  const marksFor = (from: string) => (from === 'local' ? [...markSet] : [0]);
  const ifacesFor = (from: string) => (from === 'outside' ? ifaces : [undefined]);
  const srcFor = (from: string) => (from === 'local' ? srcLocal : srcOutside).values;
  let size = 0;
  for (const f of froms)
    size +=
      l4.length *
      dst.values.length *
      srcFor(f).length *
      ifacesFor(f).length *
      marksFor(f).length *
      states.length *
      affinities.length;
  if (size <= MAX_CLASSES_PER_CONTEXT) {
    for (const f of froms)
      for (const l of l4)
        for (const d of dst.values)
          for (const s of srcFor(f))
            for (const i of ifacesFor(f))
              for (const m of marksFor(f))
                for (const st of states) for (const a of affinities) emit(f, l, d, s, i, m, st, a);
    return { classes: out, degraded: false };
  }
  // Too many combinations to enumerate: start from the context's whole box (per origin, and per address
  // where the origin fixes it) and let refine.ts split it where the rules on its paths tell packets apart.
  for (const f of froms) {
    const dsts = ctx.dstLocal ? dst.values.map(d => d.span) : [ctx.dst ?? space];
    const srcs = f === 'local' && env.nodeAddrs.length ? srcLocal.values.map(s => s.span) : [ctx.src ?? space];
    for (const d of dsts) {
      for (const s of srcs) {
        const box: Box = {
          ...wholeBox(env.family, f, { src: s, dst: d, proto: ctx.proto, dport: ctx.dport }),
          ifaces: f === 'outside' && ctx.inIface !== null ? [ctx.inIface] : [],
        };
        const input = boxInput(env.family, box, null, {
          in: f === 'outside' && ctx.inIface !== null ? ctx.inIface : undefined,
        });
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
  }
  return { classes: out, degraded: true };
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
