/**
 * What one rule says about packets, in the terms the class analysis needs: the constants it tests (address
 * and port intervals, protocols, interfaces, marks, connection states) and the packet fields its target
 * rewrites. Header checks come from the compiled rule; module options and target options are read from the
 * rule's words, so that reading a rule here never depends on one module's internal spec shape.
 */
import type { Family } from '../net/addr.ts';
import { parseNet } from '../net/addr.ts';
import type { IfacePattern, Rule } from '../model.ts';
import { tokenizeLine } from '../iptables/tokenize.ts';
import { icmpTypeByName } from '../matches/icmp.ts';
import { parseMarkMask, parsePortRange } from '../matches/util.ts';
import { parseAddrRange } from '../net/addr.ts';
import { parseNatRange } from '../targets/nat.ts';
import { type Span, addrValue, netSpan } from './space.ts';

export interface Neg<T> {
  readonly negated: boolean;
  readonly value: T;
}

/** A packet field a target rewrites; `to` is the new value's interval when the rule names it. */
export type Write =
  | { readonly field: 'dst' | 'src'; readonly to: Span | null; readonly ports: Span | null }
  | { readonly field: 'mark' | 'ctmark' | 'ctstate' };

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
  /** Match modules whose constants the classes do not split on (length, ttl, owner, u32, …). */
  readonly unsplit: readonly string[];
  /** A constant is not an interval (a non-contiguous mask): its atoms are approximate. */
  readonly inexact: boolean;
  readonly writes: readonly Write[];
  /** Whether the rule tests a field at all (used to find which rewrites can reach a changed rule). */
  readonly tests: ReadonlySet<'src' | 'dst' | 'mark' | 'ctmark' | 'ctstate' | 'out'>;
}

/** Modules whose every test is captured by the dimensions above, or that the evaluator enumerates. */
const SPLIT_MODULES = new Set([
  'tcp',
  'udp',
  'udplite',
  'sctp',
  'multiport',
  'comment',
  'mark',
  'connmark',
  'conntrack',
  'state',
  'addrtype',
  'iprange',
  'icmp',
  'icmp6',
  'icmpv6',
  'ipv6-icmp',
  'statistic',
  'recent',
  'limit',
  'hashlimit',
  'connlimit',
  'nfacct',
]);

const cache = new WeakMap<Rule, RuleFacts>();

function portList(text: string): Span[] {
  const out: Span[] = [];
  for (const item of text.split(',')) {
    const r = parsePortRange(item.replace('-', ':'));
    if (r) out.push({ lo: BigInt(r.from), hi: BigInt(r.to) });
  }
  return out;
}

function addrSpan(text: string, family: Family): { span: Span; exact: boolean } | null {
  const net = parseNet(text);
  if (!net || net.v !== family) return null;
  const s = netSpan(net);
  return { span: { lo: s.lo, hi: s.hi }, exact: s.exact };
}

function natWrite(field: 'dst' | 'src', text: string | undefined): Write {
  const r = text ? parseNatRange(text) : null;
  const to = r?.from && r.to ? { lo: addrValue(r.from), hi: addrValue(r.to) } : null;
  const ports = r && r.portFrom !== null && r.portTo !== null ? { lo: BigInt(r.portFrom), hi: BigInt(r.portTo) } : null;
  return { field, to, ports };
}

/** The fields a target rewrites, from its name and options (`xt_nat.c`, `xt_mark.c`, `xt_connmark.c`, `xt_CT.c`). */
function targetWrites(name: string, opts: Map<string, string>): Write[] {
  switch (name) {
    case 'DNAT':
      return [natWrite('dst', opts.get('--to-destination') ?? opts.get('--to'))];
    case 'REDIRECT': {
      const p = opts.get('--to-ports');
      return [{ field: 'dst', to: null, ports: p ? (portList(p)[0] ?? null) : null }];
    }
    case 'SNAT':
      return [natWrite('src', opts.get('--to-source') ?? opts.get('--to'))];
    case 'MASQUERADE':
      return [{ field: 'src', to: null, ports: null }];
    case 'NETMAP':
      // NETMAP maps the destination in PREROUTING/OUTPUT and the source in POSTROUTING/INPUT; a user chain
      // may be reached from either, so both count.
      return [
        { field: 'dst', to: null, ports: null },
        { field: 'src', to: null, ports: null },
      ];
    case 'MARK':
      return [{ field: 'mark' }];
    case 'CONNMARK':
      return opts.has('--restore-mark') ? [{ field: 'mark' }] : [{ field: 'ctmark' }];
    case 'NOTRACK':
      return [{ field: 'ctstate' }];
    case 'CT':
      return opts.has('--notrack') ? [{ field: 'ctstate' }] : [];
    default:
      return [];
  }
}

export function ruleFacts(rule: Rule, family: Family): RuleFacts {
  const cached = cache.get(rule);
  if (cached) return cached;
  const ip = rule.ip;
  let inexact = false;
  const span = (n: NonNullable<typeof ip.src>): Neg<Span> => {
    const s = netSpan(n.value);
    if (!s.exact) inexact = true;
    return { negated: n.negated, value: { lo: s.lo, hi: s.hi } };
  };
  const dports: Neg<Span[]>[] = [];
  const sports: Neg<Span[]>[] = [];
  const srcCuts: Span[] = [];
  const dstCuts: Span[] = [];
  const marks: { value: number; mask: number }[] = [];
  const ctstates: string[] = [];
  const icmpTypes: [number, number][] = [];
  const recentLists: string[] = [];
  const unsplit: string[] = [];
  const tests = new Set<'src' | 'dst' | 'mark' | 'ctmark' | 'ctstate' | 'out'>();
  let addrtype = false;
  let dstLocal = false;
  let targetName: string | null = null;
  const targetOpts = new Map<string, string>();
  let module = '';
  let negate = false;
  let recentCheck = false;
  let recentName = 'DEFAULT';
  const { tokens } = tokenizeLine(rule.raw.slice(rule.specStart));
  for (let i = 0; i < tokens.length; i++) {
    const w = tokens[i]!.text;
    if (w === '!' && !tokens[i]!.quoted) {
      negate = true;
      continue;
    }
    const neg = negate;
    negate = false;
    let arg = tokens[i + 1]?.text ?? '';
    // The deprecated `--option ! value` form.
    const late = arg === '!' && !tokens[i + 1]!.quoted;
    if (late) arg = tokens[i + 2]?.text ?? '';
    const negated = neg || late;
    if (targetName !== null) {
      if (w.startsWith('--')) targetOpts.set(w, arg.startsWith('--') ? '' : arg);
      continue;
    }
    if (w === '-j' || w === '--jump' || w === '-g' || w === '--goto') {
      targetName = arg;
      i++;
      continue;
    }
    if (w === '-m' || w === '--match') {
      module = arg;
      if (!SPLIT_MODULES.has(arg) && !unsplit.includes(arg)) unsplit.push(arg);
      i++;
      continue;
    }
    if (w === '--dport' || w === '--destination-port' || w === '--ctorigdstport')
      dports.push({ negated, value: portList(arg) });
    else if (w === '--sport' || w === '--source-port' || w === '--ctorigsrcport')
      sports.push({ negated, value: portList(arg) });
    else if (w === '--dports' || w === '--destination-ports') dports.push({ negated, value: portList(arg) });
    else if (w === '--sports' || w === '--source-ports') sports.push({ negated, value: portList(arg) });
    else if (w === '--ports') {
      dports.push({ negated, value: portList(arg) });
      sports.push({ negated, value: portList(arg) });
    } else if (w === '--src-range' || w === '--dst-range') {
      const r = parseAddrRange(arg);
      if (r && r.from.v === family)
        (w === '--src-range' ? srcCuts : dstCuts).push({ lo: addrValue(r.from), hi: addrValue(r.to) });
      tests.add(w === '--src-range' ? 'src' : 'dst');
    } else if (w === '--ctorigsrc' || w === '--ctorigdst') {
      const s = addrSpan(arg, family);
      if (s) (w === '--ctorigsrc' ? srcCuts : dstCuts).push(s.span);
    } else if (w === '--src-type' || w === '--dst-type') {
      addrtype = true;
      tests.add(w === '--src-type' ? 'src' : 'dst');
      if (w === '--dst-type' && !negated && arg.toUpperCase().split(',').includes('LOCAL')) dstLocal = true;
    } else if (w === '--mark' && (module === 'mark' || module === 'connmark')) {
      const m = parseMarkMask(arg);
      if (module === 'mark' && m) marks.push(m);
      tests.add(module === 'mark' ? 'mark' : 'ctmark');
    } else if (w === '--ctstate' || w === '--state') {
      for (const s of arg.split(',')) if (!ctstates.includes(s)) ctstates.push(s);
      tests.add('ctstate');
    } else if (w === '--icmp-type' || w === '--icmpv6-type') {
      const c = icmpTypeByName(arg, w === '--icmpv6-type');
      if (c && c[0] !== 255) icmpTypes.push([c[0], c[1]]);
    } else if (module === 'recent' && (w === '--rcheck' || w === '--update')) recentCheck = true;
    else if (module === 'recent' && w === '--name') recentName = arg;
  }
  if (recentCheck) recentLists.push(recentName);
  if (ip.src || sports.length) tests.add('src');
  if (ip.dst || dports.length) tests.add('dst');
  if (ip.outIface) tests.add('out');
  const jumpName = targetName ?? '';
  const facts: RuleFacts = {
    src: ip.src ? span(ip.src) : null,
    dst: ip.dst ? span(ip.dst) : null,
    proto: ip.proto ?? null,
    inIface: ip.inIface ?? null,
    outIface: ip.outIface ?? null,
    dports,
    sports,
    srcCuts,
    dstCuts,
    addrtype,
    dstLocal,
    marks,
    ctstates,
    icmpTypes,
    recentLists,
    unsplit,
    inexact,
    writes: targetWrites(jumpName, targetOpts),
    tests,
  };
  cache.set(rule, facts);
  return facts;
}
