/**
 * The ruleset model the evaluator walks. It is independent of iptables syntax: the iptables front end
 * (iptables/parse.ts) builds it today, and an nftables front end can build the same structures (base chains
 * registered on hooks with priorities, regular chains, rules made of match expressions and one verdict).
 */
import type { Diagnostic, Range } from './diagnostics.ts';
import type { Family, Net } from './net/addr.ts';
import type { MatchModule, ParsedOption } from './matches/types.ts';
import type { TargetModule } from './targets/types.ts';

export type HookName = 'PREROUTING' | 'INPUT' | 'FORWARD' | 'OUTPUT' | 'POSTROUTING';

export const HOOKS: readonly HookName[] = ['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING'];

/** What a table is for: `nat` tables only see a connection's first packet and perform address translation. */
export type TableKind = 'filter' | 'nat' | 'route';

export interface Negatable<T> {
  readonly negated: boolean;
  readonly value: T;
}

/** An interface pattern; `eth+` matches every name that starts with `eth` (`ifname_compare` in ip_tables.c). */
export interface IfacePattern {
  readonly name: string;
  readonly wildcard: boolean;
}

/** The fixed header checks every iptables rule has (`struct ipt_ip`). Absent fields match everything. */
export interface IpMatch {
  readonly src?: Negatable<Net>;
  readonly dst?: Negatable<Net>;
  readonly proto?: Negatable<number>;
  readonly protoName?: string;
  readonly inIface?: Negatable<IfacePattern>;
  readonly outIface?: Negatable<IfacePattern>;
  readonly fragment?: Negatable<true>;
}

export interface MatchInstance {
  readonly module: MatchModule<unknown>;
  readonly spec: unknown;
  /** False when the module was loaded implicitly (`-p tcp --dport 80` without `-m tcp`). */
  readonly explicit: boolean;
}

export type StandardVerdict = 'ACCEPT' | 'DROP' | 'RETURN' | 'QUEUE';

/** `start`/`end` are character offsets of `-j NAME` on the rule's line (see `targetRange`). */
export type TargetInstance =
  | { readonly kind: 'verdict'; readonly verdict: StandardVerdict; readonly start: number; readonly end: number }
  | { readonly kind: 'jump' | 'goto'; readonly chain: string; readonly start: number; readonly end: number }
  | {
      readonly kind: 'target';
      readonly module: TargetModule<unknown>;
      readonly spec: unknown;
      readonly start: number;
      readonly end: number;
    }
  | { readonly kind: 'unknown'; readonly name: string; readonly options: readonly ParsedOption[]; readonly start: number; readonly end: number };

export function targetRange(rule: Rule): Range | null {
  const t = rule.target;
  return t ? { start: { line: rule.line, character: t.start }, end: { line: rule.line, character: t.end } } : null;
}

export interface Counters {
  readonly packets: string;
  readonly bytes: string;
}

export interface Rule {
  /** 1-based position in its chain, as `iptables -L --line-numbers` and kernel traces count. */
  index: number;
  readonly table: string;
  chain: string;
  /** 0-based line of the source text. */
  readonly line: number;
  readonly range: Range;
  /** The source line as written. */
  readonly raw: string;
  readonly counters: Counters | null;
  /** Where the rule specification (after `-A CHAIN`) starts in `raw`; the printer re-reads from there. */
  readonly specStart: number;
  readonly ip: IpMatch;
  readonly matches: readonly MatchInstance[];
  target: TargetInstance | null;
  /** The first `-m comment --comment` text, which kube-proxy uses to name Services. */
  readonly comment: string | null;
}

export interface Chain {
  readonly name: string;
  readonly table: string;
  readonly builtin: boolean;
  policy: 'ACCEPT' | 'DROP' | null;
  counters: Counters | null;
  readonly line: number;
  readonly range: Range;
  rules: Rule[];
}

export interface Table {
  readonly name: string;
  readonly kind: TableKind;
  readonly line: number;
  readonly range: Range;
  /** Chains in declaration order. */
  readonly chains: Map<string, Chain>;
}

export interface Ruleset {
  readonly family: Family;
  readonly file: string;
  readonly tables: Map<string, Table>;
  readonly diagnostics: Diagnostic[];
  readonly ruleCount: number;
  readonly lineCount: number;
}

/**
 * Where each table's built-in chains hook in, with their priorities (include/uapi/linux/netfilter_ipv4.h:
 * NF_IP_PRI_RAW -300, MANGLE -150, NAT_DST -100, FILTER 0, SECURITY 50, NAT_SRC 100).
 */
export const TABLE_HOOKS: Readonly<Record<string, { kind: TableKind; hooks: Partial<Record<HookName, number>> }>> = {
  raw: { kind: 'filter', hooks: { PREROUTING: -300, OUTPUT: -300 } },
  mangle: {
    kind: 'route',
    hooks: { PREROUTING: -150, INPUT: -150, FORWARD: -150, OUTPUT: -150, POSTROUTING: -150 },
  },
  nat: { kind: 'nat', hooks: { PREROUTING: -100, INPUT: 100, OUTPUT: -100, POSTROUTING: 100 } },
  filter: { kind: 'filter', hooks: { INPUT: 0, FORWARD: 0, OUTPUT: 0 } },
  security: { kind: 'filter', hooks: { INPUT: 50, FORWARD: 50, OUTPUT: 50 } },
};

/** The base chains registered on a hook, in the order the kernel runs them. */
export function baseChainsForHook(rs: Ruleset, hook: HookName): { table: Table; chain: Chain; priority: number }[] {
  const out: { table: Table; chain: Chain; priority: number }[] = [];
  for (const table of rs.tables.values()) {
    const prio = TABLE_HOOKS[table.name]?.hooks[hook];
    if (prio === undefined) continue;
    const chain = table.chains.get(hook);
    if (chain) out.push({ table, chain, priority: prio });
  }
  return out.sort((a, b) => a.priority - b.priority);
}
