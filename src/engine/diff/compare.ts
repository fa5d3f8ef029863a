/**
 * Comparing one class's traces under the two rulesets. A trace's outcomes are folded into *fates*: the
 * outcomes that agree on disposition, DNAT target, SNAT/masquerade, reject type and assumptions (and, when
 * asked, on the rules matched, compared by their text so that moving a rule is not a change), with their
 * exact probabilities summed. Two sides differ when their fates or the fates' probabilities differ.
 */
import type { Rule, Ruleset } from '../model.ts';
import type { Trace, TraceOutcome, TraceStep } from '../eval/trace-types.ts';
import { type Rational, add, format as formatRational, toNumber } from '../rational.ts';
import { chainKey, normalizedRule, ruleTextSet, tableByName } from './normalize.ts';
import { ruleText as printedRule } from '../iptables/rule-text.ts';
import type { ChangeAspect, DiffFate, DiffGroupKey, DiffRuleRef } from './types.ts';

export interface Side {
  readonly rs: Ruleset;
  readonly other: Ruleset;
}

/** The engine writes probabilities reduced, so reading one back needs no gcd. */
function parseExact(s: string): Rational {
  const [n, d] = s.split('/');
  return { num: BigInt(n ?? '0'), den: BigInt(d ?? '1') };
}

export function ruleAt(
  rs: Ruleset,
  s: { table: string; chain: string; rule: number; family?: string },
): Rule | undefined {
  // nftables steps name the table and its family apart; nft tables are keyed `family name`.
  const t = (s.family !== undefined ? rs.tables.get(`${s.family} ${s.table}`) : undefined) ?? tableByName(rs, s.table);
  return t?.chains.get(s.chain)?.rules[s.rule - 1];
}

interface Folded {
  readonly fate: Omit<DiffFate, 'probabilityExact' | 'probability'>;
  prob: Rational;
}

function fold(trace: Trace, rs: Ruleset, paths: boolean): Map<string, Folded> {
  const out = new Map<string, Folded>();
  for (const o of trace.outcomes) {
    const assumptions = o.assumptions.map(a => `${a.table} ${a.chain}: ${a.assumed} (${a.reason})`);
    const path = paths ? o.steps.map(s => `${s.table} ${s.chain}: ${ruleText(rs, s)}`) : undefined;
    // A packet that is dropped or rejected goes nowhere: where it would have been translated to is not
    // part of its fate (a martian dropped after DNAT fares the same whichever endpoint DNAT chose).
    const gone = o.disposition === 'dropped' || o.disposition === 'rejected';
    const [dnat, snat, masquerade] = gone ? [null, null, false] : [o.dnat, o.snat, o.masquerade];
    const fate = {
      disposition: o.disposition,
      dnat,
      snat,
      masquerade,
      rejectWith: o.rejectWith,
      reason: o.reason,
      assumptions,
      ...(path ? { path } : {}),
    };
    const key = JSON.stringify([o.disposition, dnat, snat, masquerade, o.rejectWith, assumptions, path ?? null]);
    const prev = out.get(key);
    if (prev) prev.prob = add(prev.prob, parseExact(o.probabilityExact));
    else out.set(key, { fate, prob: parseExact(o.probabilityExact) });
  }
  return out;
}

function ruleText(rs: Ruleset, s: TraceStep): string {
  const r = ruleAt(rs, s);
  return r ? normalizedRule(r) : `rule ${s.rule}`;
}

function toFates(m: Map<string, Folded>): DiffFate[] {
  return [...m.values()]
    .map(f => ({ probabilityExact: formatRational(f.prob), probability: toNumber(f.prob), ...f.fate }))
    .sort((a, b) => b.probability - a.probability || JSON.stringify(a).localeCompare(JSON.stringify(b)));
}

const PROJECTIONS: readonly [ChangeAspect, (f: DiffFate) => string][] = [
  ['disposition', f => f.disposition],
  ['dnat', f => f.dnat ?? '-'],
  ['snat', f => f.snat ?? '-'],
  ['masquerade', f => String(f.masquerade)],
  ['reject', f => f.rejectWith ?? '-'],
  ['unknown', f => f.assumptions.join(';')],
  ['path', f => (f.path ?? []).join(';')],
];

/**
 * Sums per key, left unreduced: with ten endpoints a probability's denominator is a product of ten 2^31
 * terms, and reducing every sum (a bigint gcd) would cost more than the traces. Sums are compared by
 * cross-multiplying instead.
 */
function project(fates: readonly DiffFate[], key: (f: DiffFate) => string): Map<string, Rational> {
  const m = new Map<string, Rational>();
  for (const f of fates) {
    const k = key(f);
    const p = parseExact(f.probabilityExact);
    const prev = m.get(k);
    m.set(k, prev ? { num: prev.num * p.den + p.num * prev.den, den: prev.den * p.den } : p);
  }
  return m;
}

function sameProbability(p: Rational, q: Rational): boolean {
  return p.num * q.den === q.num * p.den;
}

/** The aspects in which two fate lists differ; empty when they are the same. */
export function compareFates(a: readonly DiffFate[], b: readonly DiffFate[]): ChangeAspect[] {
  // Most classes fare the same, and fates are listed in a canonical order: equal lists, nothing to name.
  if (JSON.stringify(a) === JSON.stringify(b)) return [];
  const aspects = new Set<ChangeAspect>();
  // Translations only matter for packets that get somewhere: that a packet is now dropped is the
  // disposition's change, not a lost DNAT as well.
  const delivered = (fs: readonly DiffFate[]) =>
    fs.filter(f => f.disposition !== 'dropped' && f.disposition !== 'rejected');
  const [da, db] = [delivered(a), delivered(b)];
  for (const [aspect, key] of PROJECTIONS) {
    const translation = aspect === 'dnat' || aspect === 'snat' || aspect === 'masquerade';
    if (translation && (!da.length || !db.length)) continue;
    const x = project(translation ? da : a, key);
    const y = project(translation ? db : b, key);
    const keys = new Set([...x.keys(), ...y.keys()]);
    const differ = [...keys].some(k => !x.has(k) || !y.has(k));
    const reweighted = [...keys].some(k => {
      const p = x.get(k);
      const q = y.get(k);
      return p && q && !sameProbability(p, q);
    });
    if (differ) aspects.add(aspect);
    // New values shift the others' weights (masqueraded or not); that is the value change, not a new
    // probability. Where a packet is sent is the exception: an added endpoint re-weights the old ones.
    if (reweighted && (!differ || aspect === 'dnat')) aspects.add('probability');
  }
  const order: ChangeAspect[] = [
    'disposition',
    'dnat',
    'probability',
    'snat',
    'masquerade',
    'reject',
    'unknown',
    'path',
  ];
  return order.filter(x => aspects.has(x));
}

export function fatesOf(trace: Trace, rs: Ruleset, paths: boolean): DiffFate[] {
  return toFates(fold(trace, rs, paths));
}

/** kube-proxy names a Service port `namespace/name:port` (or `namespace/name`) in its rule comments. */
const SERVICE_RE = /(?:^|\s)([a-z0-9](?:[-a-z0-9]*[a-z0-9])?\/[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?::[-a-z0-9]+)?)(?=\s|$)/;

export function serviceOf(comment: string | null): string | null {
  return comment ? (SERVICE_RE.exec(comment)?.[1] ?? null) : null;
}

/**
 * kube-proxy's nftables chains name their Service port (`service-HASH-ns/name/tcp/p80`, `external-…`,
 * `endpoint-HASH-ns/name/tcp/p80__10.0.0.1/80`, `firewall-…`; pkg/proxy/nftables/proxier.go
 * `servicePortChainNameBase`): `ns/name:p80`, as its iptables comments write it.
 */
export function nftServiceOf(chain: string): string | null {
  const m = /^(?:service|external|endpoint|firewall)-[A-Z0-9]{8}-([^/]+)\/([^/]+)\/[^/]+\/([^_/]+)/.exec(chain);
  return m ? `${m[1]}/${m[2]}:${m[3]}` : null;
}

function stepsOf(outcomes: readonly TraceOutcome[]): TraceStep[] {
  const seen = new Set<string>();
  const out: TraceStep[] = [];
  for (const o of outcomes) {
    for (const s of o.steps) {
      const k = `${s.table} ${s.chain} ${s.rule}`;
      if (!seen.has(k)) {
        seen.add(k);
        out.push(s);
      }
    }
  }
  return out;
}

function ref(rs: Ruleset, s: TraceStep): DiffRuleRef {
  const r = ruleAt(rs, s);
  return {
    file: rs.file,
    line: s.line,
    table: s.table,
    chain: s.chain,
    rule: s.rule,
    text: r ? printedRule(r) : '',
  };
}

/**
 * The Service a class's packets are about (the first kube-proxy comment on their paths), else the chain of
 * the first rule responsible for the change, else the first changed chain they entered.
 */
export function groupOf(
  sides: readonly { rs: Ruleset; trace: Trace }[],
  changed: ReadonlySet<string>,
  responsible: readonly DiffRuleRef[],
): DiffGroupKey {
  for (const { rs, trace } of sides) {
    for (const s of stepsOf(trace.outcomes)) {
      const name = serviceOf(ruleAt(rs, s)?.comment ?? null) ?? nftServiceOf(s.chain);
      if (name) return { kind: 'service', name };
    }
  }
  const r = responsible[0];
  if (r) return { kind: 'chain', table: r.table, chain: r.chain };
  // Else the first changed chain the packets entered (a policy decides without any rule matching).
  let first: { table: string; chain: string } | null = null;
  for (const { trace } of sides) {
    for (const o of trace.outcomes) {
      for (const e of o.events) {
        if (e.kind !== 'chain') continue;
        if (changed.has(chainKey(e.table, e.chain))) return { kind: 'chain', table: e.table, chain: e.chain };
        first ??= e;
      }
    }
  }
  return first
    ? { kind: 'chain', table: first.table, chain: first.chain }
    : { kind: 'chain', table: '-', chain: 'routing' };
}

const textSets = new WeakMap<Ruleset, Map<string, Set<string>>>();

function otherTexts(other: Ruleset, table: string, chain: string): Set<string> | null {
  let byChain = textSets.get(other);
  if (!byChain) textSets.set(other, (byChain = new Map()));
  const k = chainKey(table, chain);
  let set = byChain.get(k);
  if (set === undefined) {
    const c = tableByName(other, table)?.chains.get(chain);
    if (!c) return null;
    byChain.set(k, (set = ruleTextSet(c)));
  }
  return set;
}

/**
 * The rules that make the difference on one side: those on the class's paths, in changed chains, whose
 * text the other side's chain lacks. When a change only moved rules, the changed chains' rules it matched.
 */
export function responsibleRules(
  side: Side,
  trace: Trace,
  changed: ReadonlySet<string>,
): { differing: DiffRuleRef[]; inChanged: DiffRuleRef[] } {
  const differing: DiffRuleRef[] = [];
  const inChanged: DiffRuleRef[] = [];
  for (const s of stepsOf(trace.outcomes)) {
    if (!changed.has(chainKey(s.table, s.chain))) continue;
    inChanged.push(ref(side.rs, s));
    const r = ruleAt(side.rs, s);
    const texts = otherTexts(side.other, s.table, s.chain);
    if (!r || !texts || !texts.has(normalizedRule(r))) differing.push(ref(side.rs, s));
  }
  return { differing, inChanged };
}
