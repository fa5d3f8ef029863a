/**
 * The review-shaped summary of a diff report: one sentence per affected Service or chain, in the words a
 * reviewer uses ("default/svc1:http lost endpoint 10.10.1.11:80; its traffic now all goes to
 * 10.10.4.12:80", "a new DROP rule in filter INPUT now drops tcp from 198.51.100.0/24", "the policy of
 * filter FORWARD changed from ACCEPT to DROP"). Computed from the report's classes and fates, which the
 * traces gave, and from what the rulesets' model already says (chain policies, targets, kube-proxy's
 * `ns/name:port -> endpoint` comments and nftables endpoint chain names); it reads no rule text.
 * Every sentence is a summary of classes the report lists, so it claims nothing the classes do not show.
 */
import type { Ruleset } from '../model.ts';
import { formatPercent } from '../present.ts';
import { ruleAt } from './compare.ts';
import { ruleMentions } from '../iptables/rule-text.ts';
import { targetName } from './graph.ts';
import type {
  ChainChange,
  ClassExtent,
  ClassChange,
  DiffFate,
  DiffGroup,
  DiffHeadline,
  DiffHeadlineRule,
  DiffReport,
  DiffRuleRef,
} from './types.ts';

type Report = Omit<DiffReport, 'headlines'>;

const DELIVERED = new Set(['local', 'forwarded', 'output']);

function delivered(fates: readonly DiffFate[]): DiffFate[] {
  return fates.filter(f => DELIVERED.has(f.disposition));
}

function share(fates: readonly DiffFate[], keep: (f: DiffFate) => boolean): number {
  return fates.filter(keep).reduce((s, f) => s + f.probability, 0);
}

/** Where a class's delivered packets are DNATed to, with each target's share (null: not DNATed). */
function endpoints(fates: readonly DiffFate[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const f of delivered(fates)) if (f.dnat) m.set(f.dnat, (m.get(f.dnat) ?? 0) + f.probability);
  return m;
}

/** `a`, `a and b`, `a, b and 3 more`. */
export function listWords(items: readonly string[], max = 3, noun = ''): string {
  if (items.length <= max) {
    return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
  }
  const rest = items.length - max;
  return `${items.slice(0, max).join(', ')} and ${rest} more${noun ? ` ${noun}${rest === 1 ? '' : 's'}` : ''}`;
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** The destinations of some classes, `10.200.1.116:80`, as their extents give them (ranges kept). */
function destinations(cs: readonly ClassChange[]): string[] {
  const out = new Set<string>();
  for (const c of cs) {
    const e = c.class.extent;
    const port = e.dport && e.dport !== 'any' ? (e.dport.startsWith('type') ? ` (${e.dport})` : `:${e.dport}`) : '';
    out.add(e.dst === 'any' ? `port ${e.dport ?? 'any'}` : `${e.dst}${port}`);
  }
  return [...out];
}

/** `from outside the node`, `from the node` or '' when both. */
function origin(cs: readonly ClassChange[]): string {
  const froms = new Set(cs.map(c => c.class.extent.from));
  if (froms.size !== 1) return '';
  if (froms.has('local')) return 'from the node';
  const srcs = new Set(cs.map(c => c.class.extent.src));
  const [src] = srcs;
  return srcs.size === 1 && src !== 'any' ? `from ${src}` : 'from outside the node';
}

/**
 * What a group of alike classes share, field by field: a field the classes disagree on is left out (`any`),
 * so a rule that never looks at the source does not read as if it were about the first class's source range.
 */
function sharedExtent(cs: readonly ClassChange[]): ClassExtent {
  const first = cs[0]!.class.extent;
  const same = <K extends 'src' | 'dst' | 'dport' | 'protocol'>(k: K) =>
    cs.every(c => c.class.extent[k] === first[k]) ? first[k] : 'any';
  const from = cs.every(c => c.class.extent.from === first.from) ? first.from : 'outside';
  return { ...first, src: same('src'), dst: same('dst'), dport: same('dport'), protocol: same('protocol'), from };
}

/** Packets in a few words: `tcp from 198.51.100.0/24 to node(eth0):22`. */
function packetWords(cs: readonly ClassChange[]): string {
  const e = sharedExtent(cs);
  const proto = e.protocol.startsWith('any but ') ? `packets other than ${e.protocol.slice(8)}` : e.protocol;
  const parts: string[] = [e.protocol === 'any' ? 'packets' : proto];
  if (e.src !== 'any') parts.push(`from ${e.src}`);
  else if (e.from === 'local') parts.push('from the node');
  const port = e.dport && e.dport !== 'any' ? e.dport : null;
  const type = port?.startsWith('type') ? ` (${port})` : null;
  if (e.dst !== 'any') parts.push(`to ${e.dst}${type ?? (port ? `:${port}` : '')}`);
  else if (port) parts.push(type ? `to any address${type}` : `to port ${port}`);
  return parts.join(' ');
}

function classesWords(cs: readonly ClassChange[]): string {
  return cs.length ? packetWords(cs) : '';
}

const VERB: Record<string, string> = {
  dropped: 'drops',
  rejected: 'rejects',
  local: 'delivers locally',
  forwarded: 'forwards',
  output: 'sends out',
  unknown: 'cannot decide',
};

/** The dominant new disposition of a class (the largest share). */
function mainDisposition(fates: readonly DiffFate[]): string {
  const by = new Map<string, number>();
  for (const f of fates) by.set(f.disposition, (by.get(f.disposition) ?? 0) + f.probability);
  return [...by].sort((a, b) => b[1] - a[1])[0]?.[0] ?? 'unknown';
}

/** The old fate in the brackets of a headline: `(was delivered locally)`. */
const WAS: Record<string, string> = {
  local: 'delivered locally',
  output: 'sent out',
};

/**
 * What happens to a group of alike classes' packets now (read off the first; the packets named are what the
 * group shares), in a verb phrase, with the old fate in brackets.
 */
function effect(group: readonly ClassChange[]): string {
  const c = group[0]!;
  const [oldD, newD] = [deliveredShare(c.old), deliveredShare(c.new)];
  const was = mainDisposition(c.old);
  if (newD < oldD - 1e-12 || oldD < newD - 1e-12 || c.aspects.includes('disposition')) {
    const now = mainDisposition(c.new);
    const part = newD > 1e-12 && newD < 1 - 1e-12 && !DELIVERED.has(now) ? `${formatPercent(1 - newD)} of ` : '';
    return `now ${VERB[now] ?? now} ${part}${classesWords(group)}${now !== was ? ` (was ${WAS[was] ?? was})` : ''}`;
  }
  const [o, n] = [endpoints(c.old), endpoints(c.new)];
  if (c.aspects.includes('dnat')) return `now sends ${classesWords(group)} to ${splitWords(n)} (was ${splitWords(o)})`;
  const [om, nm] = [share(c.old, f => f.masquerade), share(c.new, f => f.masquerade)];
  if (om !== nm)
    return nm > om ? `now masquerades ${classesWords(group)}` : `no longer masquerades ${classesWords(group)}`;
  if (c.aspects.includes('snat')) return `now changes the source NAT of ${classesWords(group)}`;
  return `changes how ${classesWords(group)} fare (${c.aspects.join(', ')})`;
}

/** `10.10.4.12:80` alone, or `10.10.1.11:80 50%, 10.10.4.12:80 50%`. */
function splitWords(m: ReadonlyMap<string, number>): string {
  const xs = [...m].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const total = xs.reduce((s, [, p]) => s + p, 0);
  if (xs.length === 1) return xs[0]![0];
  if (!xs.length) return 'nowhere';
  return listWords(
    xs.map(([ep, p]) => `${ep} ${formatPercent(total > 0 ? p / total : 0)}`),
    4,
    'endpoint',
  );
}

/** The new split of a Service's traffic, when every changed class that is DNATed shares one. */
function commonSplit(cs: readonly ClassChange[]): ReadonlyMap<string, number> | null {
  let key: string | null = null;
  let split: Map<string, number> | null = null;
  for (const c of cs) {
    const m = endpoints(c.new);
    if (!m.size) continue;
    const total = [...m.values()].reduce((s, p) => s + p, 0);
    const norm = new Map([...m].map(([k, p]) => [k, p / total] as const));
    const k = JSON.stringify([...norm].map(([ep, p]) => [ep, p.toFixed(9)]).sort());
    if (key === null) [key, split] = [k, norm];
    else if (k !== key) return null;
  }
  return split;
}

const written = new WeakMap<Ruleset, Map<string, Map<string, Set<string>>>>();

/**
 * The endpoints kube-proxy writes in a ruleset for the Services asked about, per Service port
 * (`ns/name:port -> 10.10.1.11:80` comments) and, for nftables mode, per Service
 * (`endpoint-HASH-ns/name/tcp/p80__10.10.1.11/80` chains, kube-proxy nftables/proxier.go; keyed `ns/name`).
 * One pass per ruleset; only rules whose words name one of those Services and an arrow are compiled to
 * read their comment (a 320k-rule dump has 100k endpoint comments: compiling them all cost a second and
 * 400 MB).
 */
function endpointIndex(rs: Ruleset, services: readonly string[]): Map<string, Set<string>> {
  const memoKey = services.join('\n');
  let memo = written.get(rs);
  if (!memo) written.set(rs, (memo = new Map()));
  let index = memo.get(memoKey);
  if (index) return index;
  index = new Map();
  const add = (key: string, ep: string) => {
    const set = index!.get(key);
    if (set) set.add(ep);
    else index!.set(key, new Set([ep]));
  };
  const names = [...new Set(services.map(s => s.split(':')[0]!))];
  for (const t of rs.tables.values()) {
    for (const c of t.chains.values()) {
      const m = /^endpoint-[A-Z0-9]+-([^/]+\/[^/]+)\/[^/]+\/[^_]+__(.+)\/(\d+)$/.exec(c.name);
      if (m) add(m[1]!, m[2]!.split('.').length > 4 ? `[${m[2]!.replace(/\./g, ':')}]:${m[3]}` : `${m[2]}:${m[3]}`);
      for (const r of c.rules) {
        if (!ruleMentions(r, ' -> ') || !names.some(n => ruleMentions(r, n))) continue;
        const arrow = r.comment?.indexOf(' -> ') ?? -1;
        if (arrow > 0) add(r.comment!.slice(0, arrow), r.comment!.slice(arrow + 4).trim());
      }
    }
  }
  memo.set(memoKey, index);
  return index;
}

/** Endpoints kube-proxy still writes for a Service port (or, in nftables mode, for its Service). */
function writtenEndpoints(rs: Ruleset, service: string, services: readonly string[]): Set<string> {
  const index = endpointIndex(rs, services);
  return new Set([...(index.get(service) ?? []), ...(index.get(service.split(':')[0]!) ?? [])]);
}

function lines(cs: readonly ClassChange[]): DiffHeadlineRule[] {
  const seen = new Map<string, DiffHeadlineRule>();
  for (const c of cs) {
    for (const [side, list] of [['old', c.oldRules] as const, ['new', c.newRules] as const])
      for (const r of list) seen.set(`${side} ${r.file}:${r.line}`, { ...r, side });
  }
  return [...seen.values()];
}

/** A changed class with its index in the report's `changes`. */
interface Item {
  readonly i: number;
  readonly c: ClassChange;
}

function itemsOf(report: Report, g: DiffGroup): Item[] {
  return g.changes.map(i => ({ i, c: report.changes[i]! }));
}

function byKey(items: readonly Item[], key: (c: ClassChange) => string): Item[][] {
  const m = new Map<string, Item[]>();
  for (const it of items) {
    const k = key(it.c);
    const list = m.get(k);
    if (list) list.push(it);
    else m.set(k, [it]);
  }
  return [...m.values()];
}

function headline(kind: DiffHeadline['kind'], subject: string, text: string, items: readonly Item[]): DiffHeadline {
  return { kind, subject, text, changes: items.map(x => x.i), rules: lines(items.map(x => x.c)) };
}

/** Which endpoints a Service's changed classes lost and gained, and where its traffic goes now. */
function endpointHeadline(
  name: string,
  items: readonly Item[],
  newRs: Ruleset,
  services: readonly string[],
): DiffHeadline | null {
  const cs = items.map(x => x.c);
  const before = new Set(cs.flatMap(c => [...endpoints(c.old).keys()]));
  const after = new Set(cs.flatMap(c => [...endpoints(c.new).keys()]));
  const lost = [...before].filter(e => !after.has(e)).sort();
  const gained = [...after].filter(e => !before.has(e)).sort();
  const parts: string[] = [];
  if (lost.length) {
    // Lost for good only when kube-proxy no longer writes the endpoint for the Service at all; otherwise
    // only these clients stopped reaching it (externalTrafficPolicy: Local, a topology change).
    const written = writtenEndpoints(newRs, name, services);
    const gone = lost.filter(e => !written.has(e));
    const kept = lost.filter(e => written.has(e));
    if (gone.length) parts.push(`${name} lost endpoint${gone.length === 1 ? '' : 's'} ${listWords(gone)}`);
    if (kept.length) {
      const verb = kept.length === 1 ? 'receives' : 'receive';
      const whom = origin(cs) || 'from these clients';
      parts.push(`${gone.length ? '' : `${name}: `}${listWords(kept)} no longer ${verb} its traffic ${whom}`);
    }
  }
  if (gained.length)
    parts.push(
      `${parts.length ? '' : `${name} `}gained endpoint${gained.length === 1 ? '' : 's'} ${listWords(gained)}`,
    );
  if (!parts.length) parts.push(`${name}'s endpoints are weighted differently`);
  const split = commonSplit(cs);
  const now = !split
    ? 'its traffic is now split differently for different clients'
    : split.size === 1
      ? `its traffic now all goes to ${[...split.keys()][0]}`
      : split.size === 0
        ? 'its traffic is no longer DNATed'
        : `its traffic is now split ${splitWords(split)}`;
  return headline('endpoints', name, `${parts.join(' and ')}; ${now}`, items);
}

/** How a Service's class changed: its packets moved between endpoints, lost their DNAT, or another fate change. */
function serviceKind(c: ClassChange): string {
  const [oldD, newD] = [deliveredShare(c.old), deliveredShare(c.new)];
  if (Math.abs(oldD - newD) > 1e-12 || c.aspects.includes('disposition')) return effectKind(c);
  const [o, n] = [endpoints(c.old).size, endpoints(c.new).size];
  if (o > 0 && n === 0) return 'undnat';
  if ((c.aspects.includes('dnat') || c.aspects.includes('probability')) && n > 0) return 'moved';
  return effectKind(c);
}

function serviceHeadlines(report: Report, g: DiffGroup, newRs: Ruleset, name: string): DiffHeadline[] {
  const out: DiffHeadline[] = [];
  for (const list of byKey(itemsOf(report, g), serviceKind)) {
    const kind = serviceKind(list[0]!.c);
    const cs = list.map(x => x.c);
    if (kind === 'moved') {
      const ep = endpointHeadline(name, list, newRs, report.services);
      if (ep) out.push(ep);
      continue;
    }
    const whom = origin(cs);
    const dests = listWords(destinations(cs), 3, 'destination');
    if (kind === 'undnat') {
      const text = `${name} no longer DNATs its traffic${whom ? ` ${whom}` : ''} to ${dests}: it goes on as addressed`;
      out.push(headline('endpoints', name, text, list));
      continue;
    }
    const { verb, tail } = kindVerb(kind, list);
    const text = `${name} ${verb} its traffic${whom ? ` ${whom}` : ''} to ${dests}${tail}`;
    out.push(headline(kind.startsWith('disposition') ? 'disposition' : 'translation', name, text, list));
  }
  return out;
}

function deliveredShare(fates: readonly DiffFate[]): number {
  return share(fates, f => DELIVERED.has(f.disposition));
}

function effectKind(c: ClassChange): string {
  const [oldD, newD] = [deliveredShare(c.old), deliveredShare(c.new)];
  if (newD < oldD - 1e-12) return `disposition:${mainDisposition(c.new)}:${newD > 1e-12 ? 'part' : 'all'}`;
  if (newD > oldD + 1e-12) return `disposition:through:${mainDisposition(c.old)}`;
  if (c.aspects.includes('disposition')) return `disposition:${mainDisposition(c.new)}:all`;
  const [om, nm] = [share(c.old, f => f.masquerade), share(c.new, f => f.masquerade)];
  if (nm > om) return 'masq:on';
  if (nm < om) return 'masq:off';
  return `other:${c.aspects.join(',')}`;
}

/** The verb for a kind of change (effectKind), and what to add after the packets it names. */
function kindVerb(kind: string, list: readonly Item[]): { verb: string; tail: string } {
  const [k, a, b] = kind.split(':');
  if (k === 'disposition' && a === 'through') return { verb: 'now lets', tail: ` through (they were ${b})` };
  if (k === 'disposition') return { verb: `now ${VERB[a!] ?? a}${b === 'part' ? ' part of' : ''}`, tail: '' };
  if (k === 'masq') return { verb: a === 'on' ? 'now masquerades' : 'no longer masquerades', tail: '' };
  return { verb: 'now changes', tail: ` (${[...new Set(list.flatMap(x => x.c.aspects))].join(', ')})` };
}

/** The rules on one side only that a group's classes cross, with their targets. */
function ruleChange(cs: readonly ClassChange[], rs: readonly [Ruleset, Ruleset]): string | null {
  const named = (refs: readonly DiffRuleRef[], side: 0 | 1) => refs.map(r => ({ r, t: targetOf(rs[side], r) }));
  const added = named(
    cs.flatMap(c => c.newRules),
    1,
  );
  const removed = named(
    cs.flatMap(c => c.oldRules),
    0,
  );
  const first = cs[0];
  if (!first) return null;
  const where = (r: DiffRuleRef) => `${r.table} ${r.chain}`;
  const addedT = [...new Set(added.map(x => x.t))];
  const removedT = [...new Set(removed.map(x => x.t))];
  // A rule without an iptables target (an nft rule) is just "a new rule".
  const kinds = (ts: string[]) => (ts.every(t => t === 'rule') ? '' : `${listWords(ts)} `);
  if (added.length && !removed.length)
    return `a new ${kinds(addedT)}rule in ${where(added[0]!.r)} (line ${added[0]!.r.line})`;
  if (removed.length && !added.length)
    return `removing the ${kinds(removedT)}rule from ${where(removed[0]!.r)} (old line ${removed[0]!.r.line})`;
  if (added.length) return `the changed ${where(added[0]!.r)} rule (line ${added[0]!.r.line})`;
  return null;
}

function targetOf(rs: Ruleset, r: DiffRuleRef): string {
  const rule = ruleAt(rs, r);
  return (rule && targetName(rule)) ?? 'rule';
}

function chainHeadlines(report: Report, g: DiffGroup, rs: readonly [Ruleset, Ruleset]): DiffHeadline[] {
  if (g.key.kind !== 'chain') return [];
  const { table, chain } = g.key;
  const items = itemsOf(report, g);
  const policy = report.changedChains.find(c => c.table === table && c.chain === chain && c.change === 'policy');
  // A policy change leaves the chain's rules alone: the rules the classes matched there are no cause.
  const rules = policy
    ? null
    : ruleChange(
        items.map(x => x.c),
        rs,
      );
  const cause = rules ?? (policy ? `${policySentence(policy, rs)}:` : `the changes to ${table} ${chain}`);
  return byKey(items, effectKind).map(list => {
    const more =
      list.length > 1 ? `, and ${plural(list.length - 1, 'more packet class', 'more packet classes')} alike` : '';
    const kind = policy && !rules ? 'policy' : 'rules';
    return headline(kind, `${table} ${chain}`, `${cause} ${effect(list.map(x => x.c))}${more}`, list);
  });
}

function policySentence(c: ChainChange, rs: readonly [Ruleset, Ruleset]): string {
  const [a, b] = rs.map(r => r.tables.get(c.table)?.chains.get(c.chain)?.policy ?? 'none');
  return `the policy of ${c.table} ${c.chain} changed from ${a} to ${b}`;
}

/** Policy changes no group is about: a sentence of their own. */
function policyHeadlines(report: Report, rs: readonly [Ruleset, Ruleset]): DiffHeadline[] {
  return report.changedChains
    .filter(c => c.change === 'policy')
    .map(c => {
      const affected = report.changes.flatMap((x, i) =>
        x.group.kind === 'chain' && x.group.table === c.table && x.group.chain === c.chain ? [{ i, c: x }] : [],
      );
      const tail = affected.length ? '' : report.changes.length ? '' : ': no packet’s fate depends on it';
      return headline('policy', `${c.table} ${c.chain}`, `${policySentence(c, rs)}${tail}`, affected);
    });
}

/** The headlines of a report: Services first (in the report's order), then chains, then policy changes. */
export function diffHeadlines(report: Report, oldRs: Ruleset, newRs: Ruleset): DiffHeadline[] {
  const rs = [oldRs, newRs] as const;
  const out: DiffHeadline[] = [];
  for (const g of report.groups)
    out.push(
      ...(g.key.kind === 'service' ? serviceHeadlines(report, g, newRs, g.key.name) : chainHeadlines(report, g, rs)),
    );
  // A policy change is the cause of what the Services' sentences say: it comes first.
  const told = new Set(out.filter(h => h.kind === 'policy').map(h => h.subject));
  const all = [...policyHeadlines(report, rs).filter(p => !told.has(p.subject)), ...out];
  return [...all.filter(h => h.kind === 'policy'), ...all.filter(h => h.kind !== 'policy')];
}
