/**
 * The ruleset model the evaluator walks. It is independent of iptables syntax: the iptables front end
 * (iptables/parse.ts) builds it today, and an nftables front end can build the same structures (base chains
 * registered on hooks with priorities, regular chains, rules made of match expressions and one verdict).
 */
import type { Diagnostic, Range } from './diagnostics.ts';
import type { Family, Net } from './net/addr.ts';
import type { MatchModule, ParsedOption } from './matches/types.ts';
import type { TargetModule } from './targets/types.ts';
import type { NftNamedSet, NftProgram } from './nft-program/program.ts';

import type { HookName, NfFamily } from './hooks.ts';

// The hook names are the model's vocabulary too; they live in the leaf hooks.ts (no import circle).
export { type HookName, HOOKS } from './hooks.ts';

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
  /** The module's options as the front end read them (canonical names, arguments, positions). */
  readonly options: readonly ParsedOption[];
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
      /** The target's options as the front end read them. */
      readonly options: readonly ParsedOption[];
      readonly start: number;
      readonly end: number;
    }
  | {
      readonly kind: 'unknown';
      readonly name: string;
      readonly options: readonly ParsedOption[];
      readonly start: number;
      readonly end: number;
    };

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
  /** nftables rules: the lowered statements (nft-program/program.ts); `ip`, `matches` and `target` are empty. */
  readonly nft?: NftProgram;
}

/** Families whose base chains the evaluator runs, and for which packet families. */
export function familySees(family: NfFamily | undefined, pkt: Family): boolean {
  if (family === undefined || family === 'inet') return true;
  return family === (pkt === 4 ? 'ip' : 'ip6');
}

/**
 * Where a base chain is registered (nftables `type T hook H priority P`; iptables' built-in chains from
 * TABLE_HOOKS). `hook` is one of HOOKS for the ip/ip6/inet families, otherwise the nft hook name as written
 * (`ingress`, `egress`, arp's `input`…), which the evaluator never runs.
 */
export interface BaseChainInfo {
  readonly hook: HookName | string;
  readonly priority: number;
  readonly type: TableKind;
  readonly family: NfFamily;
  /** netdev/ingress chains name their device. */
  readonly device?: string;
}

export interface Chain {
  readonly name: string;
  readonly table: string;
  readonly builtin: boolean;
  /** Set for base chains: the hook, priority, type and family the chain is registered with. */
  readonly base?: BaseChainInfo;
  policy: 'ACCEPT' | 'DROP' | null;
  counters: Counters | null;
  readonly line: number;
  readonly range: Range;
  rules: Rule[];
}

export interface Table {
  /** Any name for nftables; iptables' fixed names raw, mangle, nat, filter, security. */
  readonly name: string;
  /** iptables: what the table is for. nftables tables mix chain types: read each base chain's `base.type`. */
  readonly kind: TableKind;
  /** ip/ip6 for iptables' tables (from the dump's family), as written for nftables. */
  readonly family?: NfFamily;
  /** Set for tables read from nftables input (steps then carry the family). */
  readonly nft?: boolean;
  /** nftables: the table's named sets and maps, lowered (the diff compares their contents). */
  readonly sets?: ReadonlyMap<string, NftNamedSet>;
  readonly line: number;
  readonly range: Range;
  /** Chains in declaration order. */
  readonly chains: Map<string, Chain>;
}

export interface Ruleset {
  /** The packet family of an iptables dump; for nftables input the family of its first ip/ip6 table (4 when none). */
  readonly family: Family;
  readonly file: string;
  /** iptables: keyed by table name; nftables: by `family name` (`ip nat`, `inet filter`). */
  readonly tables: Map<string, Table>;
  /** Which front end built it (absent: iptables). */
  readonly format?: 'iptables' | 'nft';
  readonly diagnostics: Diagnostic[];
  readonly ruleCount: number;
  readonly lineCount: number;
}

/**
 * Where each table's built-in chains hook in, with their priorities (include/uapi/linux/netfilter_ipv4.h:
 * NF_IP_PRI_RAW -300, MANGLE -150, NAT_DST -100, FILTER 0, SECURITY 50, NAT_SRC 100). Objects without a
 * prototype: a table or chain named `constructor` or `toString` is looked up here as written, and must
 * find nothing (it found Object.prototype's, and `*constructor` made the reader throw).
 */
export const TABLE_HOOKS: Readonly<Record<string, { kind: TableKind; hooks: Partial<Record<HookName, number>> }>> =
  bare({
    raw: { kind: 'filter', hooks: bare({ PREROUTING: -300, OUTPUT: -300 }) },
    mangle: {
      kind: 'route',
      hooks: bare({ PREROUTING: -150, INPUT: -150, FORWARD: -150, OUTPUT: -150, POSTROUTING: -150 }),
    },
    nat: { kind: 'nat', hooks: bare({ PREROUTING: -100, INPUT: 100, OUTPUT: -100, POSTROUTING: 100 }) },
    filter: { kind: 'filter', hooks: bare({ INPUT: 0, FORWARD: 0, OUTPUT: 0 }) },
    security: { kind: 'filter', hooks: bare({ INPUT: 50, FORWARD: 50, OUTPUT: 50 }) },
  });

/** `entries` in an object without a prototype, so that only its own keys are found. */
export function bare<T extends object>(entries: T): T {
  return Object.assign(Object.create(null) as T, entries);
}

/** iptables' built-in chain of `table` on `hook`, as a base chain of the `ip`/`ip6` family. */
export function iptablesBase(table: string, hook: string, family: Family): BaseChainInfo | undefined {
  const t = TABLE_HOOKS[table];
  const priority = t?.hooks[hook as HookName];
  if (!t || priority === undefined) return undefined;
  return { hook, priority, type: t.kind, family: family === 6 ? 'ip6' : 'ip' };
}

/**
 * nf_nat's own hook priorities (nf_nat_proto.c `nf_nat_ipv4_ops`/`nf_nat_ipv6_ops`: NF_IP_PRI_NAT_DST -100 on
 * PREROUTING and OUTPUT, NF_IP_PRI_NAT_SRC 100 on INPUT and POSTROUTING). Every nat-type base chain of a
 * hook runs inside that one hook entry, in its own priority order (`nf_nat_register_fn`,
 * `nf_nat_inet_fn`), whatever priority it was declared with.
 */
export const NAT_CORE_PRIORITY: Readonly<Record<HookName, number>> = {
  PREROUTING: -100,
  OUTPUT: -100,
  INPUT: 100,
  POSTROUTING: 100,
  FORWARD: 0,
};

export interface HookChain {
  readonly table: Table;
  readonly chain: Chain;
  readonly priority: number;
}

/**
 * The base chains registered on a hook that see packets of `family` (all when omitted), in the order the
 * kernel runs them: by priority across tables; at equal priority the chain registered last runs first
 * (`nf_hook_entries_grow` inserts a new hook before the first one whose priority is not lower; checked with
 * the kernel oracle, test/fixtures/kernel-nft/hook-priorities).
 */
export function baseChainsForHook(rs: Ruleset, hook: HookName, family?: Family): HookChain[] {
  const out: (HookChain & { order: number })[] = [];
  for (const table of rs.tables.values()) {
    if (family !== undefined && !familySees(table.family, family)) continue;
    for (const chain of baseChainsOf(table)) {
      const base = chain.base ?? (chain.builtin ? iptablesBase(table.name, chain.name, rs.family) : undefined);
      if (!base || base.hook !== hook) continue;
      out.push({ table, chain, priority: base.priority, order: out.length });
    }
  }
  return out.sort((a, b) => a.priority - b.priority || b.order - a.order);
}

const baseCache = new WeakMap<Table, { size: number; chains: Chain[] }>();

/**
 * A table's base chains in declaration order, remembered per table: a kube-proxy table has 100k regular
 * chains and a trace asks for the base chains at every hook of every path. Recomputed when the table's
 * chains change (another count, or a remembered chain replaced).
 */
function baseChainsOf(table: Table): Chain[] {
  const c = baseCache.get(table);
  if (c && c.size === table.chains.size && c.chains.every(ch => table.chains.get(ch.name) === ch)) return c.chains;
  const chains = [...table.chains.values()].filter(ch => ch.base !== undefined || ch.builtin);
  baseCache.set(table, { size: table.chains.size, chains });
  return chains;
}

/** A base chain's type: nat chains see only a connection's first packet, route chains re-route. */
export function chainType(table: Table, chain: Chain): TableKind {
  return chain.base?.type ?? table.kind;
}
