/**
 * nftables rules against a class's box (refine.ts): the small dispatch over the facts each expression
 * module states (nft-program/program.ts `FieldFact`, `Lookup`, `Op.diff`). A rule is a list of operations; each
 * test looks its key up in elements (a set, a map, one value, a prefix, a range), and each element is a
 * product of intervals, one per concatenated part. A part answers for a whole box: every packet's value is
 * inside (`all`), none is (`none`), it is the same for every packet without our knowing which (`uniform`:
 * the family, a value the class's path set, a numgen draw), or the box must be cut (`split`). A test whose
 * every element answers all, none or uniform answers alike for the whole box; otherwise the first cut is
 * returned, and refinement goes on with the pieces. What no module states facts for is `open`: the class is
 * unproven and the report approximate, never "identical".
 */
import type { Rule } from '../model.ts';
import type { FieldFact, Lookup } from '../nft-program/program.ts';
import type { Scalar } from '../nft-program/types.ts';
import type { PacketInput } from '../eval/packet-spec.ts';
import { hasPorts } from '../net/proto.ts';
import { ifaceMatches } from '../matches/iface.ts';
import type { Box } from './box.ts';
import { PORT_SPACE, type Span, atoms, contains, intersect } from './space.ts';

export type Piece = { box: Box; in?: string; mark?: number };

/** How refine.ts cuts a box on a protocol, an interface pattern and a mark test (shared with iptables rules). */
export interface Cutters {
  proto(box: Box, value: number): Answer;
  iface(box: Box, input: PacketInput, uplink: string, pattern: string): Answer;
  mark(box: Box, input: PacketInput, test: { value: number; mask: number }): Answer;
}

export type Answer =
  { kind: 'none' } | { kind: 'const' } | { kind: 'split'; boxes: Piece[] } | { kind: 'open'; reason: string };

type Rel = { kind: 'all' } | { kind: 'none' } | { kind: 'uniform' } | Extract<Answer, { kind: 'split' | 'open' }>;

const ALL: Rel = { kind: 'all' };
const NONE: Rel = { kind: 'none' };
const UNIFORM: Rel = { kind: 'uniform' };
const open = (reason: string): Rel => ({ kind: 'open', reason });
/** Protocols whose first four transport bytes are ports (`th`; payload.ts PORT_PROTOS). */
const PORT_PROTOS = [6, 17, 132, 33, 136];
/** include/uapi/linux/netfilter/nf_conntrack_common.h: the ct state bits. */
const STATE_BITS: readonly [bigint, string][] = [
  [1n, 'INVALID'],
  [2n, 'ESTABLISHED'],
  [4n, 'RELATED'],
  [8n, 'NEW'],
  [64n, 'UNTRACKED'],
];

interface State {
  readonly box: Box;
  /** The box as the rule sees it (after a NAT binding, the translated fields are single values). */
  readonly view: Box;
  readonly input: PacketInput;
  readonly uplink: string;
  readonly family: 4 | 6;
  readonly cut: Cutters;
}

function fromAnswer(a: Answer): Rel {
  return a.kind === 'const' ? UNIFORM : a.kind === 'none' ? NONE : a;
}

function spanRel(b: Box, field: 'src' | 'dst' | 'sport' | 'dport', have: Span, lo: Scalar, hi: Scalar): Rel {
  if (typeof lo !== 'bigint' || typeof hi !== 'bigint') return open(`a ${field} compared with a name`);
  const want = { lo, hi };
  if (contains(want, have)) return ALL;
  if (!intersect(want, have)) return NONE;
  return { kind: 'split', boxes: atoms(have, [want]).map(a => ({ box: { ...b, [field]: a } })) };
}

function portRel(f: Extract<FieldFact, { kind: 'port' }>, s: State, lo: Scalar, hi: Scalar): Rel {
  const b = f.original ? s.box : s.view;
  const p = b.proto;
  if (!('only' in p)) {
    // Cut the protocol first: the next protocol whose header has this port that the box still holds.
    const next = (f.protos ?? PORT_PROTOS).find(x => !p.except.includes(x));
    if (next === undefined) return f.protos ? NONE : open('th ports of protocols without ports');
    return fromAnswer(s.cut.proto(b, next));
  }
  if (f.protos && !f.protos.includes(p.only)) return NONE;
  if (!hasPorts(p.only)) return f.protos ? NONE : open(`th ${f.field} of protocol ${p.only} reads other header bytes`);
  return spanRel(b, f.field, b[f.field] ?? PORT_SPACE, lo, hi);
}

function protoRel(b: Box, s: State, lo: Scalar, hi: Scalar): Rel {
  if (typeof lo !== 'bigint' || typeof hi !== 'bigint') return open('a protocol compared with a name');
  const p = b.proto;
  if ('only' in p) return BigInt(p.only) >= lo && BigInt(p.only) <= hi ? ALL : NONE;
  for (let v = lo; v <= hi && v <= 255n; v++)
    if (!p.except.includes(Number(v))) return fromAnswer(s.cut.proto(b, Number(v)));
  return NONE;
}

function ifaceRel(s: State, lo: Scalar, hi: Scalar): Rel {
  if (s.box.from !== 'outside') return UNIFORM;
  if (typeof lo !== 'string' || typeof hi !== 'string') return open('an interface compared with a number');
  // sets.ts writes `eth*` as the interval [eth, eth\uffff]; iptables' patterns write it `eth+`.
  const pattern = lo === hi ? lo : hi === `${lo}\uffff` ? `${lo}+` : null;
  if (pattern === null || pattern === '' || pattern === '+') return open('an interface name range');
  if (s.box.ifaces.includes(pattern)) return ifaceMatches(pattern, s.input.in ?? s.uplink) ? ALL : NONE;
  return fromAnswer(s.cut.iface(s.box, s.input, s.uplink, pattern));
}

function icmpRel(f: Extract<FieldFact, { kind: 'icmp' }>, s: State, lo: Scalar, hi: Scalar): Rel {
  const b = s.view;
  const p = b.proto;
  if (!('only' in p)) return p.except.includes(f.proto) ? NONE : fromAnswer(s.cut.proto(b, f.proto));
  if (p.only !== f.proto) return NONE;
  if (typeof lo !== 'bigint' || lo !== hi) return open('an ICMP type range');
  const icmp = b.icmp ?? { except: [] };
  const key = `${lo}/0`;
  if ('only' in icmp) return icmp.only.split('/')[0] === String(lo) ? ALL : NONE;
  if (icmp.except.includes(key)) return NONE;
  return {
    kind: 'split',
    boxes: [{ box: { ...b, icmp: { only: key } } }, { box: { ...b, icmp: { except: [...icmp.except, key] } } }],
  };
}

function partRel(f: FieldFact, s: State, lo: Scalar, hi: Scalar): Rel {
  switch (f.kind) {
    case 'addr': {
      if (f.family !== s.family) return NONE; // the header is absent: nft's implicit family dependency
      const b = f.original ? s.box : s.view;
      return spanRel(b, f.field, b[f.field], lo, hi);
    }
    case 'port':
      return portRel(f, s, lo, hi);
    case 'proto':
      return protoRel(s.view, s, lo, hi);
    case 'iface':
      return f.dir === 'in' ? ifaceRel(s, lo, hi) : UNIFORM;
    case 'mark':
      if (s.box.from !== 'local') return UNIFORM;
      if (typeof lo !== 'bigint' || lo !== hi) return open('a mark range');
      return fromAnswer(s.cut.mark(s.box, s.input, { value: Number(lo), mask: Number(f.mask) }));
    case 'icmp':
      return icmpRel(f, s, lo, hi);
    case 'ctstate':
    case 'addrtype':
    case 'uniform':
      return UNIFORM;
    case 'open':
      return open(f.why);
  }
}

function elemRel(facts: readonly FieldFact[], key: readonly (readonly [Scalar, Scalar])[], s: State): Rel {
  if (key.length !== facts.length) return open('a set whose key the diff cannot read');
  let pending: Rel | null = null;
  let uniform = false;
  for (let i = 0; i < key.length; i++) {
    const r = partRel(facts[i]!, s, key[i]![0], key[i]![1]);
    if (r.kind === 'none') return NONE;
    if (r.kind === 'split' || r.kind === 'open') pending ??= r;
    else if (r.kind === 'uniform') uniform = true;
  }
  return pending ?? (uniform ? UNIFORM : ALL);
}

/** One lookup over a box, before negation. */
function lookupRel(t: Lookup, s: State): Rel {
  const facts = t.key.facts;
  if (!facts) return open(`${t.key.text} is not read by the diff`);
  if (t.mask !== undefined)
    return facts.every(f => f.kind === 'ctstate' || f.kind === 'uniform')
      ? UNIFORM
      : open(`${t.key.text}: a flag test`);
  let all = false;
  let uniform = false;
  for (const e of t.elems) {
    const r = elemRel(facts, e.key, s);
    if (r.kind === 'split' || r.kind === 'open') return r;
    if (r.kind === 'all') all = true;
    else if (r.kind === 'uniform') uniform = true;
  }
  // A dynamic set's live elements are the class's (its affinity), alike for all its packets.
  if (t.dynamic !== undefined) return all ? ALL : UNIFORM;
  if (!all && !uniform) return NONE;
  // A map gives one element's data: it is the same for the whole box when no element is cut.
  return all && !t.data ? ALL : UNIFORM;
}

/** A rule's answer for a box: the first test no packet passes settles it; else the first cut; else alike. */
export function nftAnswer(
  rule: Rule,
  box: Box,
  view: Box,
  input: PacketInput,
  uplink: string,
  family: 4 | 6,
  cut: Cutters,
): Answer {
  const s: State = { box, view, input, uplink, family, cut };
  const where = `${rule.chain} line ${rule.line + 1}`;
  let pending: { a: Answer; action: boolean } | null = null;
  for (const op of rule.nft?.ops ?? []) {
    if (!op.diff) {
      pending ??= { a: { kind: 'open', reason: `${op.text} (${where}) is not read by the diff` }, action: !op.isMatch };
      continue;
    }
    for (const t of op.diff.tests) {
      let r = lookupRel(t, s);
      if (t.negated) r = r.kind === 'all' ? NONE : r.kind === 'none' ? ALL : r;
      // A test no packet of the box passes ends the rule for all of them; what an earlier action looked up
      // still happened, so its cut still counts.
      if (r.kind === 'none') return pending?.action ? pending.a : { kind: 'none' };
      if (r.kind === 'split') pending ??= { a: r, action: !op.isMatch };
      else if (r.kind === 'open')
        pending ??= { a: { kind: 'open', reason: `${r.reason} (${where})` }, action: !op.isMatch };
    }
  }
  return pending?.a ?? { kind: 'const' };
}

export interface NftExtras {
  /** Conntrack states the rule names (the class is one state; others are other classes), plus ESTABLISHED. */
  readonly ctstates: readonly string[];
  /** Dynamic sets it looks up: membership is the class's affinity. */
  readonly recentLists: readonly string[];
  /** `fib … type`: the node's addresses matter. */
  readonly addrtype: boolean;
}

const extras = new WeakMap<Rule, NftExtras>();

/** What a rule adds to a class besides cuts: states and affinities to try, and whether address types matter. */
export function nftExtras(rule: Rule): NftExtras {
  const hit = extras.get(rule);
  if (hit) return hit;
  const ctstates = new Set<string>();
  const lists = new Set<string>();
  let addrtype = false;
  for (const op of rule.nft?.ops ?? []) {
    for (const t of op.diff?.tests ?? []) {
      if (t.dynamic !== undefined) lists.add(t.dynamic);
      const facts = t.key.facts ?? [];
      if (facts.some(f => f.kind === 'addrtype')) addrtype = true;
      const i = facts.findIndex(f => f.kind === 'ctstate');
      if (i < 0) continue;
      ctstates.add('ESTABLISHED');
      const bits = new Set<bigint>();
      if (t.mask !== undefined) bits.add(t.mask);
      for (const e of t.elems) {
        const [lo, hi] = e.key[i] ?? [];
        if (typeof lo === 'bigint' && lo === hi) bits.add(lo);
      }
      for (const b of bits) for (const [bit, name] of STATE_BITS) if ((b & bit) !== 0n) ctstates.add(name);
    }
  }
  const out = { ctstates: [...ctstates], recentLists: [...lists], addrtype };
  extras.set(rule, out);
  return out;
}
