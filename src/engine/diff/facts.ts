/**
 * What one rule says about packets, in the terms the class analysis needs: the constants it tests (address
 * and port intervals, protocols, interfaces, marks, connection states) and the packet fields its target
 * rewrites. Header checks come from the compiled rule; everything else is each module's own answer from its
 * compiled instance (`diffFacts` of a match module, `diffWrites` of a target: matches/knowledge.ts), added up
 * here. A module whose tests the classes do not cut (`diffFacts: 'opaque'`) is listed in `unsplit`, which
 * leaves every class meeting the rule open.
 */
import type { Family } from '../net/addr.ts';
import type { IfacePattern, IpMatch, MatchInstance, Rule, TargetInstance } from '../model.ts';
import type { MatchFacts, Neg, TestedField, Write } from '../matches/knowledge.ts';
import { type Span, netSpan } from './space.ts';

export type { Neg, Write } from '../matches/knowledge.ts';

export interface RuleFacts {
  readonly src: Neg<Span> | null;
  readonly dst: Neg<Span> | null;
  readonly proto: Neg<number> | null;
  readonly inIface: Neg<IfacePattern> | null;
  readonly outIface: Neg<IfacePattern> | null;
  /** Each port test is a list of ranges, any of which matches (multiport), possibly negated as a whole. */
  readonly dports: readonly Neg<readonly Span[]>[];
  readonly sports: readonly Neg<readonly Span[]>[];
  /** Further address constants (iprange, conntrack original tuple) that cut the src / dst spaces. */
  readonly srcCuts: readonly Span[];
  readonly dstCuts: readonly Span[];
  /** `addrtype --dst-type LOCAL` and friends: the node's addresses matter. */
  readonly addrtype: boolean;
  /** A positive `--dst-type LOCAL`: the rule only matches packets to the node. */
  readonly dstLocal: boolean;
  /** `-m mark --mark value/mask` tests of the packet mark. */
  readonly marks: readonly { readonly value: number; readonly mask: number }[];
  readonly ctstates: readonly string[];
  readonly icmpTypes: readonly (readonly [number, number])[];
  /** `-m recent --rcheck/--update` lists: the client's affinity entries matter. */
  readonly recentLists: readonly string[];
  /** Match modules whose constants the classes do not split on (length, ttl, owner, u32, …), once each. */
  readonly unsplit: readonly string[];
  /** A constant is not an interval (a non-contiguous mask): its atoms are approximate. */
  readonly inexact: boolean;
  readonly writes: readonly Write[];
  /** Whether the rule tests a field at all (used to find which rewrites can reach a changed rule). */
  readonly tests: ReadonlySet<TestedField>;
}

const cache = new WeakMap<Rule, RuleFacts>();
/**
 * At most this many rules' facts stay cached; one more forgets the oldest (recomputed, the same, if asked
 * again). A comparison whose classes reach every rule of two 320k-rule dumps cached the facts of all of
 * them, some 0.4 GB (issue 12: under 1 GB whatever the inputs), like the compiled rules they are read from
 * (`MAX_COMPILED_PER_TABLE`, iptables/rule-node.ts).
 */
export const MAX_CACHED_FACTS = 65_536;
const cachedOrder: (Rule | undefined)[] = [];
let cachedNext = 0;

function remember(rule: Rule, facts: RuleFacts): void {
  const old = cachedOrder[cachedNext];
  if (old) cache.delete(old);
  cachedOrder[cachedNext] = rule;
  cachedNext = (cachedNext + 1) % MAX_CACHED_FACTS;
  cache.set(rule, facts);
}

/** Every module's facts, and the modules that have none the classes can use. */
function matchFacts(matches: readonly MatchInstance[], family: Family): { parts: MatchFacts[]; unsplit: string[] } {
  const parts: MatchFacts[] = [];
  const unsplit: string[] = [];
  for (const m of matches) {
    const hook = m.module.diffFacts;
    if (hook !== 'opaque') parts.push(hook(m.spec, m.options, family));
    else if (!unsplit.includes(m.module.name)) unsplit.push(m.module.name);
  }
  return { parts, unsplit };
}

function targetWrites(t: TargetInstance | null): readonly Write[] {
  return t?.kind === 'target' ? t.module.diffWrites(t.spec, t.options) : [];
}

/** The header check of an address as an interval; a non-contiguous mask makes the facts inexact. */
function headerSpan(n: IpMatch['src']): { span: Neg<Span> | null; exact: boolean } {
  if (!n) return { span: null, exact: true };
  const s = netSpan(n.value);
  return { span: { negated: n.negated, value: { lo: s.lo, hi: s.hi } }, exact: s.exact };
}

function unique<T>(lists: readonly (readonly T[] | undefined)[]): T[] {
  const out: T[] = [];
  for (const l of lists) for (const x of l ?? []) if (!out.includes(x)) out.push(x);
  return out;
}

export function ruleFacts(rule: Rule, family: Family): RuleFacts {
  const cached = cache.get(rule);
  if (cached) return cached;
  const ip = rule.ip;
  const { parts, unsplit } = matchFacts(rule.matches, family);
  const src = headerSpan(ip.src);
  const dst = headerSpan(ip.dst);
  const dports = parts.flatMap(p => p.dports ?? []);
  const sports = parts.flatMap(p => p.sports ?? []);
  const tests = new Set<TestedField>(parts.flatMap(p => p.tests ?? []));
  if (ip.src || sports.length) tests.add('src');
  if (ip.dst || dports.length) tests.add('dst');
  if (ip.outIface) tests.add('out');
  const facts: RuleFacts = {
    src: src.span,
    dst: dst.span,
    proto: ip.proto ?? null,
    inIface: ip.inIface ?? null,
    outIface: ip.outIface ?? null,
    dports,
    sports,
    srcCuts: parts.flatMap(p => p.srcCuts ?? []),
    dstCuts: parts.flatMap(p => p.dstCuts ?? []),
    addrtype: parts.some(p => p.addrtype),
    dstLocal: parts.some(p => p.dstLocal),
    marks: parts.flatMap(p => p.marks ?? []),
    ctstates: unique(parts.map(p => p.ctstates)),
    icmpTypes: parts.flatMap(p => p.icmpTypes ?? []),
    recentLists: parts.flatMap(p => p.recentLists ?? []),
    unsplit,
    inexact: !src.exact || !dst.exact,
    writes: targetWrites(rule.target),
    tests,
  };
  remember(rule, facts);
  return facts;
}
