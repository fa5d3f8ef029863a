/**
 * Header boxes: what one packet class stands for, one set per packet field (addresses and ports as
 * intervals, the protocol as one number or "every protocol but these", the ICMP type likewise, the
 * incoming interface, mark, conntrack state and `-m recent` lists as the values the class was cut
 * against). A class's representative packet lies in its box. Per-field interval sets are how fffuu
 * (Diekmann et al., "Verified iptables firewall analysis") and ITVal represent header spaces; refine.ts
 * uses them to prove that every packet of a box fares like its representative.
 */
import type { Family } from '../net/addr.ts';
import { formatAddr, parseAddr } from '../net/addr.ts';
import { hasPorts, protoName } from '../net/proto.ts';
import type { PacketInput } from '../eval/packet-spec.ts';
import {
  PORT_SPACE,
  type Span,
  addrRepresentative,
  addrSpace,
  addrValue,
  formatAddrSpan,
  formatPortSpan,
  representative,
  valueAddr,
} from './space.ts';
import type { ClassExtent } from './types.ts';

export type ProtoSet = { readonly only: number } | { readonly except: readonly number[] };
export type IcmpSet = { readonly only: string } | { readonly except: readonly string[] };

export interface Box {
  readonly from: 'outside' | 'local';
  readonly src: Span;
  readonly dst: Span;
  readonly proto: ProtoSet;
  /** Port intervals; null when the class's protocol has no ports (or stands for several protocols). */
  readonly sport: Span | null;
  readonly dport: Span | null;
  /** ICMP type/code (`8/0`) for ICMP classes, else null. */
  readonly icmp: IcmpSet | null;
  /** Outside packets: the interface patterns the class was cut against (the representative is the input's). */
  readonly ifaces: readonly string[];
  /** Local packets: the mark tests (value, mask) the class was cut against. */
  readonly marks: readonly (readonly [number, number])[];
  /** `-m recent` lists the class was cut against (membership is the input's affinity). */
  readonly lists: readonly string[];
}

const PREFERRED_DST: Record<Family, bigint[]> = { 4: [0xc633640an], 6: [0x20010db8010000000000000000000010n] };
const PREFERRED_SRC: Record<Family, bigint[]> = { 4: [0xcb00710an], 6: [0x20010db8020000000000000000000010n] };
const PREFERRED_DPORT = [80n, 443n, 53n, 8080n, 1024n];
const PREFERRED_SPORT = [40000n];
/** Representatives for "every protocol but …", portless first so the class needs no port. */
const OTHER_PROTOS: Record<Family, number[]> = { 4: [47, 50, 17, 6, 1, 132, 51], 6: [47, 50, 17, 6, 58, 132, 51] };
const ICMP_TYPES = ['8/0', '0/0', '3/0', '11/0', '13/0', '5/0', '4/0', '12/0', '14/0'];
const ICMP6_TYPES = ['128/0', '129/0', '1/0', '3/0', '135/0', '136/0', '2/0', '4/0'];

export function protoRep(family: Family, p: ProtoSet): number | null {
  if ('only' in p) return p.only;
  return OTHER_PROTOS[family].find(x => !p.except.includes(x)) ?? null;
}

export function icmpRep(family: Family, s: IcmpSet): string | null {
  if ('only' in s) return s.only;
  return (family === 4 ? ICMP_TYPES : ICMP6_TYPES).find(x => !s.except.includes(x)) ?? null;
}

function inSpan(s: Span | null, n: bigint | undefined): boolean {
  return s !== null && n !== undefined && s.lo <= n && n <= s.hi;
}

function addrOf(text: string | undefined, family: Family): bigint | undefined {
  const a = text ? parseAddr(text) : null;
  return a && a.v === family ? addrValue(a) : undefined;
}

/**
 * The packet that stands for a box: the previous representative where it still lies inside, else an
 * ordinary value of each interval (space.ts `representative`). Null when no packet of the box can be
 * written (a protocol set with no representative left).
 */
export function boxInput(
  family: Family,
  box: Box,
  prev: PacketInput | null,
  extra: { in?: string; mark?: number; ctstate?: string },
): PacketInput | null {
  const proto = protoRep(family, box.proto);
  if (proto === null) return null;
  const pick = (s: Span, pref: bigint[], old: string | undefined) => {
    const o = addrOf(old, family);
    const v = o !== undefined && inSpan(s, o) ? o : addrRepresentative(family, s, pref);
    return formatAddr(valueAddr(family, v));
  };
  const input: Record<string, unknown> = {
    protocol: protoName(proto),
    src: pick(box.src, PREFERRED_SRC[family], prev?.src),
    dst: pick(box.dst, PREFERRED_DST[family], prev?.dst),
    from: box.from,
  };
  if (hasPorts(proto)) {
    const port = (s: Span | null, pref: bigint[], old: number | undefined) =>
      s && old !== undefined && inSpan(s, BigInt(old)) ? old : Number(representative(s ?? PORT_SPACE, pref));
    input.dport = port(box.dport, PREFERRED_DPORT, prev?.dport);
    input.sport = port(box.sport, PREFERRED_SPORT, prev?.sport);
  }
  if (proto === 1 || proto === 58) {
    const t = box.icmp ? icmpRep(family, box.icmp) : proto === 1 ? '8/0' : '128/0';
    if (t === null) return null;
    const [type, code] = t.split('/').map(Number);
    input.icmpType = type;
    input.icmpCode = code;
  }
  if (box.from === 'outside' && extra.in !== undefined) input.in = extra.in;
  if (box.from === 'local' && extra.mark) input.mark = extra.mark;
  if (extra.ctstate && extra.ctstate !== 'NEW') input.ctstate = extra.ctstate;
  return input as unknown as PacketInput;
}

export function protoLabel(p: ProtoSet): string {
  if ('only' in p) return protoName(p.only);
  return p.except.length ? `any but ${p.except.map(protoName).join(', ')}` : 'any';
}

/** The extent a report shows for a box (every dimension the class stands for). */
export function boxExtent(
  family: Family,
  box: Box,
  input: PacketInput,
  affinity: readonly string[],
  uplink: string,
): ClassExtent {
  const proto = 'only' in box.proto ? box.proto.only : null;
  const ports = proto !== null && hasPorts(proto);
  const icmp = box.icmp
    ? 'only' in box.icmp
      ? `type ${box.icmp.only}`
      : box.icmp.except.length
        ? `type any but ${box.icmp.except.join(', ')}`
        : 'any type'
    : null;
  return {
    from: box.from,
    protocol: protoLabel(box.proto),
    src: formatAddrSpan(family, box.src),
    dst: formatAddrSpan(family, box.dst),
    sport: ports ? formatPortSpan(box.sport ?? PORT_SPACE) : null,
    dport: ports ? formatPortSpan(box.dport ?? PORT_SPACE) : icmp,
    in: box.from === 'outside' ? (input.in ?? uplink) : null,
    mark: box.from === 'local' ? `0x${Number(input.mark ?? 0).toString(16)}` : null,
    ctstate: input.ctstate ?? 'NEW',
    affinity,
  };
}

/** A box over the whole space of one origin, for the given bounds. */
export function wholeBox(
  family: Family,
  from: 'outside' | 'local',
  bounds: { src?: Span | null; dst?: Span | null; proto?: number | null; dport?: Span | null },
): Box {
  const space = addrSpace(family);
  const proto: ProtoSet = bounds.proto !== null && bounds.proto !== undefined ? { only: bounds.proto } : { except: [] };
  const only = 'only' in proto ? proto.only : null;
  return {
    from,
    src: bounds.src ?? space,
    dst: bounds.dst ?? space,
    proto,
    sport: only !== null && hasPorts(only) ? PORT_SPACE : null,
    dport: only !== null && hasPorts(only) ? (bounds.dport ?? PORT_SPACE) : null,
    icmp: only === 1 || only === 58 ? { except: [] } : null,
    ifaces: [],
    marks: [],
    lists: [],
  };
}

/** A stable identity of a box with its representative's non-interval fields. */
export function boxId(box: Box, input: PacketInput, affinity: readonly string[]): string {
  const s = (x: Span | null) => (x ? `${x.lo}-${x.hi}` : '*');
  const p = 'only' in box.proto ? `=${box.proto.only}` : `!${box.proto.except.join(',')}`;
  const i = box.icmp ? ('only' in box.icmp ? `=${box.icmp.only}` : `!${box.icmp.except.join(',')}`) : '';
  const known = [box.ifaces.join(','), box.marks.map(([v, m]) => `${v}/${m}`).join(','), box.lists.join(',')].join(';');
  return [
    box.from,
    s(box.src),
    s(box.dst),
    p,
    s(box.sport),
    s(box.dport),
    i,
    input.in ?? '',
    input.mark ?? 0,
    input.ctstate ?? 'NEW',
    affinity.join(','),
    known,
  ].join('|');
}

const SPAN_FIELDS = ['src', 'dst', 'sport', 'dport'] as const;

/**
 * Two boxes that differ in one interval field only, where their intervals touch, as one box; else null.
 * Used to show adjacent classes that changed the same way as one range.
 */
export function mergeBoxes(a: Box, b: Box): Box | null {
  let field: (typeof SPAN_FIELDS)[number] | null = null;
  for (const f of SPAN_FIELDS) {
    const x = a[f];
    const y = b[f];
    if (x === y || (x && y && x.lo === y.lo && x.hi === y.hi)) continue;
    if (field || !x || !y) return null;
    field = f;
  }
  if (
    !field ||
    a.from !== b.from ||
    JSON.stringify([a.proto, a.icmp, a.ifaces, a.marks, a.lists]) !==
      JSON.stringify([b.proto, b.icmp, b.ifaces, b.marks, b.lists])
  )
    return null;
  const x = a[field]!;
  const y = b[field]!;
  if (x.hi + 1n === y.lo) return { ...a, [field]: { lo: x.lo, hi: y.hi } };
  if (y.hi + 1n === x.lo) return { ...a, [field]: { lo: y.lo, hi: x.hi } };
  return null;
}

/** Whether a box holds a single sampled packet (its extent fields are single values). */
export function boxHolds(
  family: Family,
  box: Box,
  p: { from: string; protocol: string; src: string; dst: string; sport: string | null; dport: string | null },
): boolean {
  const addr = (t: string) => {
    const a = parseAddr(t);
    return a && a.v === family ? addrValue(a) : null;
  };
  const inside = (s: Span | null, v: bigint | null) => v !== null && (s === null || (s.lo <= v && v <= s.hi));
  const proto =
    'only' in box.proto
      ? protoName(box.proto.only) === p.protocol
      : !box.proto.except.some(x => protoName(x) === p.protocol);
  const port = (s: Span | null, t: string | null) =>
    t === null || s === null || inside(s, /^\d+$/.test(t) ? BigInt(t) : null);
  return (
    box.from === p.from &&
    proto &&
    inside(box.src, addr(p.src)) &&
    inside(box.dst, addr(p.dst)) &&
    port(box.sport, p.sport) &&
    port(box.dport, p.dport)
  );
}
