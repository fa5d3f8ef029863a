/**
 * The typed AST of an nftables ruleset: what the three nftables front ends produce and the lowering
 * (lower*.ts) reads. `nft list ruleset` text and `nft -f` scripts (parse-script.ts, one grammar) and
 * `nft -j list ruleset` JSON (parse-json.ts) all give this same shape, so a ruleset read in any form
 * lowers the same way.
 *
 * The shape follows libnftables' JSON schema (doc/libnftables-json.adoc in the nftables repository):
 * a rule is a list of statements, a `match` is `{op, left, right}`, a payload is `{protocol, field}`, meta
 * is `{key}`, ct is `{key, dir, family}`, and so on. The JSON front end is therefore almost a renaming,
 * and the text front end translates nft's grammar (src/parser_bison.y) into the same nodes.
 *
 * Conventions every front end keeps, so that the three forms of one ruleset give equal ASTs:
 * - Numbers are numbers: `0x00004000`, `16384` and JSON's `16384` are all `16384`; a literal too large for
 *   an exact JavaScript number (e.g. a 64-bit mask) stays the string it was written as.
 * - Everything else a user writes as a value (addresses, interface names, `tcp`, `established`,
 *   `"eth0"`) is a string without its quotes; the lowering interprets it by the type of the left side,
 *   as nft does (nft's JSON output does not distinguish symbols from strings either).
 * - Durations (`timeout 3h`, `expires 2m59s`) are seconds, as nft's JSON prints them.
 * - `define`s are already substituted: the AST never holds a variable.
 * - Every node has the source range it came from; `handle`s are present only when the input had them
 *   (`nft -a`, JSON). Comparing two forms of a ruleset ignores ranges and handles.
 */
import type { Diagnostic, Range } from '../diagnostics.ts';

export type NftFamily = 'ip' | 'ip6' | 'inet' | 'arp' | 'bridge' | 'netdev';

export const NFT_FAMILIES: readonly NftFamily[] = ['ip', 'ip6', 'inet', 'arp', 'bridge', 'netdev'];

/** Which input form an AST came from. */
export type NftSource = 'text' | 'json' | 'script';

// ---------------------------------------------------------------------------------------------------------
// Expressions (the operands of matches, statements and set elements)
// ---------------------------------------------------------------------------------------------------------

interface Node {
  readonly range: Range;
}

/** A literal: a number, or a string nft interprets by context (address, symbol, interface name…). */
export interface NftValue extends Node {
  readonly kind: 'value';
  readonly value: string | number | boolean;
}

/** `@name`: a named set or map (JSON `"@name"`). */
export interface NftSetRef extends Node {
  readonly kind: 'setref';
  readonly name: string;
}

/** `10.0.0.0/8` (JSON `{"prefix": {"addr", "len"}}`). */
export interface NftPrefix extends Node {
  readonly kind: 'prefix';
  readonly addr: NftExpr;
  readonly len: number;
}

/** `1000-2000` (JSON `{"range": [low, high]}`). */
export interface NftRangeExpr extends Node {
  readonly kind: 'range';
  readonly low: NftExpr;
  readonly high: NftExpr;
}

/** `a . b . c` (JSON `{"concat": […]}`). */
export interface NftConcat extends Node {
  readonly kind: 'concat';
  readonly items: readonly NftExpr[];
}

/** An anonymous set or map `{ a, b }` / `{ k : v, … }` (JSON `{"set": […]}`). */
export interface NftAnonSet extends Node {
  readonly kind: 'set';
  readonly items: readonly NftExpr[];
}

/**
 * A comma list of flag values without braces, `ct state established,related` or `tcp flags syn,ack`
 * (JSON prints it as a bare array).
 */
export interface NftList extends Node {
  readonly kind: 'list';
  readonly items: readonly NftExpr[];
}

/** A set element with its own properties (JSON `{"elem": {"val", "timeout", "expires", "comment"}}`). */
export interface NftElem extends Node {
  readonly kind: 'elem';
  readonly value: NftExpr;
  readonly timeout?: number;
  readonly expires?: number;
  readonly comment?: string;
  /** Per-element counter (`counter packets 1 bytes 2`), when the set has the counter flag. */
  readonly counter?: { readonly packets: number; readonly bytes: number };
}

/** `key : data` inside an anonymous or named map's element list (JSON: a two-element array). */
export interface NftMapping extends Node {
  readonly kind: 'mapping';
  readonly key: NftExpr;
  readonly data: NftExpr;
}

/** `ip saddr`, `tcp dport`, `th dport` (JSON `{"payload": {"protocol", "field"}}`). */
export interface NftPayload extends Node {
  readonly kind: 'payload';
  readonly protocol: string;
  readonly field: string;
}

/** `@nh,16,16` raw payload (JSON `{"payload": {"base", "offset", "len"}}`). */
export interface NftRawPayload extends Node {
  readonly kind: 'rawpayload';
  readonly base: 'll' | 'nh' | 'th' | 'ih' | string;
  readonly offset: number;
  readonly len: number;
}

/** IPv6 extension headers and TCP/IP options (`exthdr`, `tcp option`, `ip option`, `sctp chunk`). */
export interface NftExthdr extends Node {
  readonly kind: 'exthdr';
  /** `exthdr`, `tcp option`, `ip option`, `sctp chunk`. */
  readonly family: string;
  readonly name: string;
  /** Absent when only presence is tested (`exthdr frag exists`). */
  readonly field?: string;
}

/** `meta l4proto`, `iifname` (the short forms are `meta` keys too; JSON `{"meta": {"key"}}`). */
export interface NftMeta extends Node {
  readonly kind: 'meta';
  readonly key: string;
}

/** `ct state`, `ct original ip daddr`, `ct reply proto-dst` (JSON `{"ct": {"key", "dir", "family"}}`). */
export interface NftCt extends Node {
  readonly kind: 'ct';
  readonly key: string;
  readonly dir?: 'original' | 'reply';
  readonly family?: 'ip' | 'ip6';
}

/** `fib daddr type`, `fib saddr . iif oif` (JSON `{"fib": {"result", "flags"}}`). */
export interface NftFib extends Node {
  readonly kind: 'fib';
  /** `oif`, `oifname`, `type`. */
  readonly result: string;
  /** `saddr`, `daddr`, `mark`, `iif`, `oif` in the order written. */
  readonly flags: readonly string[];
}

/** `numgen random mod 3 offset 0` (JSON `{"numgen": {"mode", "mod", "offset"}}`). */
export interface NftNumgen extends Node {
  readonly kind: 'numgen';
  readonly mode: 'random' | 'inc';
  readonly mod: number;
  readonly offset: number;
}

/** `jhash ip saddr mod 2 seed 0x1` / `symhash mod 2` (JSON `{"jhash": …}` / `{"symhash": …}`). */
export interface NftHash extends Node {
  readonly kind: 'hash';
  readonly mode: 'jhash' | 'symhash';
  readonly expr?: NftExpr;
  readonly mod: number;
  readonly seed?: number;
  readonly offset: number;
}

/** `rt nexthop`, `rt mtu`, `rt ip6 nexthop` (JSON `{"rt": {"key", "family"}}`). */
export interface NftRt extends Node {
  readonly kind: 'rt';
  readonly key: string;
  readonly family?: 'ip' | 'ip6';
}

/** `socket transparent`, `osf name`, `ipsec in reqid`… — expressions nft knows that we only name. */
export interface NftOtherExpr extends Node {
  readonly kind: 'socket' | 'osf' | 'ipsec' | 'tunnel';
  readonly key: string;
  readonly extra?: Readonly<Record<string, string | number>>;
}

/** `meta mark & 0xff`, `meta mark or 0x4000`, `ct mark >> 8` (JSON `{"&": [l, r]}`). */
export interface NftBinop extends Node {
  readonly kind: 'binop';
  readonly op: '&' | '|' | '^' | '<<' | '>>';
  readonly left: NftExpr;
  readonly right: NftExpr;
}

/** `ip daddr map @m`, `tcp dport map { 80 : 8080 }` (JSON `{"map": {"key", "data"}}`). */
export interface NftMapLookup extends Node {
  readonly kind: 'map';
  readonly key: NftExpr;
  readonly data: NftExpr;
}

/** A verdict as a value: the data side of a verdict map element (JSON `{"goto": {"target"}}`, `{"accept": null}`). */
export interface NftVerdictExpr extends Node {
  readonly kind: 'verdict';
  readonly verdict: NftVerdictName;
  readonly target?: string;
}

/** An expression a front end could not read; its text is kept and a diagnostic says why. */
export interface NftUnknownExpr extends Node {
  readonly kind: 'unknown';
  readonly text: string;
}

export type NftExpr =
  | NftValue
  | NftSetRef
  | NftPrefix
  | NftRangeExpr
  | NftConcat
  | NftAnonSet
  | NftList
  | NftElem
  | NftMapping
  | NftPayload
  | NftRawPayload
  | NftExthdr
  | NftMeta
  | NftCt
  | NftFib
  | NftNumgen
  | NftHash
  | NftRt
  | NftOtherExpr
  | NftBinop
  | NftMapLookup
  | NftVerdictExpr
  | NftUnknownExpr;

// ---------------------------------------------------------------------------------------------------------
// Statements (the parts of a rule)
// ---------------------------------------------------------------------------------------------------------

/**
 * The relational operators of libnftables' JSON `match`. `in` is what nft prints for a comparison written
 * without an operator whose right side is a flag value or list (`ct state established,related`, `tcp flags
 * syn`): a bitwise test "any of these bits", where `==` is exact equality (see nft(8), RELATIONAL EXPRESSIONS).
 */
export type NftMatchOp = '==' | '!=' | '<' | '>' | '<=' | '>=' | 'in';

/** A comparison (JSON `{"match": {"op", "left", "right"}}`). */
export interface NftMatch extends Node {
  readonly kind: 'match';
  readonly op: NftMatchOp;
  readonly left: NftExpr;
  readonly right: NftExpr;
}

export type NftVerdictName = 'accept' | 'drop' | 'continue' | 'return' | 'jump' | 'goto' | 'queue';

/** `accept`, `drop`, `continue`, `return`, `jump NAME`, `goto NAME`. */
export interface NftVerdictStmt extends Node {
  readonly kind: 'verdict';
  readonly verdict: Exclude<NftVerdictName, 'queue'>;
  readonly target?: string;
}

/** `reject`, `reject with tcp reset`, `reject with icmp type port-unreachable`, `reject with icmpx …`. */
export interface NftReject extends Node {
  readonly kind: 'reject';
  /** Absent for a bare `reject` (the kernel picks icmp port-unreachable / tcp reset per family). */
  readonly type?: 'tcp reset' | 'icmp' | 'icmpv6' | 'icmpx';
  readonly code?: string;
}

/** `meta l4proto . th dport vmap @m` / `vmap { … }` (JSON `{"vmap": {"key", "data"}}`). */
export interface NftVmap extends Node {
  readonly kind: 'vmap';
  readonly key: NftExpr;
  readonly data: NftExpr;
}

/** `counter`, `counter packets 3 bytes 180`, or a named counter reference `counter name "x"`. */
export interface NftCounterStmt extends Node {
  readonly kind: 'counter';
  readonly packets?: number;
  readonly bytes?: number;
  /** A named counter object (JSON `{"counter": "x"}`); may itself be a map lookup. */
  readonly ref?: NftExpr;
}

/** `meta mark set …`, `ct mark set …`, `ip dscp set …` (JSON `{"mangle": {"key", "value"}}`). */
export interface NftMangle extends Node {
  readonly kind: 'mangle';
  readonly key: NftExpr;
  readonly value: NftExpr;
}

/** `dnat ip to 10.0.0.1:80`, `snat to 1.2.3.4`, `masquerade random`, `redirect to :8080`. */
export interface NftNat extends Node {
  readonly kind: 'nat';
  readonly type: 'dnat' | 'snat' | 'masquerade' | 'redirect';
  /** `dnat ip to …` in an inet table. */
  readonly family?: 'ip' | 'ip6';
  readonly addr?: NftExpr;
  readonly port?: NftExpr;
  /** `random`, `fully-random`, `persistent`, `netmap`, `prefix`. */
  readonly flags: readonly string[];
}

export interface NftLog extends Node {
  readonly kind: 'log';
  readonly prefix?: string;
  readonly level?: string;
  readonly group?: number;
  readonly snaplen?: number;
  readonly queueThreshold?: number;
  readonly flags: readonly string[];
}

/** `limit rate over 10/second burst 5 packets` (JSON `{"limit": {"rate", "per", "burst", "rate_unit", "inv"}}`). */
export interface NftLimit extends Node {
  readonly kind: 'limit';
  readonly rate: number;
  readonly per: string;
  readonly burst: number;
  /** `packets`, or a byte unit (`bytes`, `kbytes`, `mbytes`). */
  readonly unit: string;
  readonly burstUnit?: string;
  readonly inv: boolean;
}

export interface NftQuota extends Node {
  readonly kind: 'quota';
  readonly value: number;
  readonly unit: string;
  readonly used?: number;
  readonly usedUnit?: string;
  readonly inv: boolean;
}

/** `queue num 1-3 fanout,bypass` (a verdict the evaluator cannot follow). */
export interface NftQueue extends Node {
  readonly kind: 'queue';
  readonly num?: NftExpr;
  readonly flags: readonly string[];
}

/** `update @affinity { ip saddr timeout 3h }`, `add @s { … }`, `delete @s { … }` (JSON `{"set": {"op", "elem", "set"}}`). */
export interface NftSetStmt extends Node {
  readonly kind: 'setop';
  readonly op: 'add' | 'update' | 'delete';
  readonly set: string;
  readonly elem: NftExpr;
  /** Statements attached to the element (`{ ip saddr limit rate 10/second }`). */
  readonly stmts: readonly NftStmt[];
}

/** Statements with no operands the evaluator needs: `notrack`, `flow add @ft` (offload), `meta nftrace set 1` is a mangle. */
export interface NftSimpleStmt extends Node {
  readonly kind:
    | 'notrack'
    | 'flow'
    | 'dup'
    | 'fwd'
    | 'tproxy'
    | 'synproxy'
    | 'ct count'
    | 'ct helper'
    | 'ct timeout'
    | 'ct expectation'
    | 'secmark'
    | 'xt';
  /** Whatever operands the statement had, as named in nft's JSON. */
  readonly args: Readonly<Record<string, NftExpr | string | number | boolean>>;
}

/** A reference to a named stateful object: `quota name "q"`, `limit name "l"` (JSON `{"quota": "q"}`). */
export interface NftObjRef extends Node {
  readonly kind: 'objref';
  readonly type: 'quota' | 'limit';
  readonly ref: NftExpr;
}

/** A statement a front end could not read (a diagnostic says so); the evaluator treats it as unknown. */
export interface NftUnknownStmt extends Node {
  readonly kind: 'unknown';
  readonly text: string;
}

export type NftStmt =
  | NftMatch
  | NftVerdictStmt
  | NftReject
  | NftVmap
  | NftCounterStmt
  | NftMangle
  | NftNat
  | NftLog
  | NftLimit
  | NftQuota
  | NftQueue
  | NftSetStmt
  | NftSimpleStmt
  | NftObjRef
  | NftUnknownStmt;

// ---------------------------------------------------------------------------------------------------------
// Objects
// ---------------------------------------------------------------------------------------------------------

export interface NftRule extends Node {
  readonly family: NftFamily;
  readonly table: string;
  readonly chain: string;
  readonly handle?: number;
  readonly comment?: string;
  readonly stmts: readonly NftStmt[];
}

export type NftChainType = 'filter' | 'nat' | 'route';

export type NftHook = 'prerouting' | 'input' | 'forward' | 'output' | 'postrouting' | 'ingress' | 'egress';

/**
 * A base chain's priority: always the number the kernel uses, plus the symbolic form when the input
 * wrote one (`dstnat`, `filter - 10` is `{value: -10, name: 'filter', offset: -10}`). Named priorities are
 * family dependent (nft(8) "Standard priority names"; bridge differs from the rest).
 */
export interface NftPriority {
  readonly value: number;
  readonly name?: string;
  readonly offset?: number;
}

export interface NftBaseChain {
  readonly type: NftChainType;
  readonly hook: NftHook;
  readonly priority: NftPriority;
  /** Absent means accept (the kernel's default policy). */
  readonly policy?: 'accept' | 'drop';
  /** netdev ingress/egress and inet ingress chains: the device(s). */
  readonly devices?: readonly string[];
}

export interface NftChain extends Node {
  readonly family: NftFamily;
  readonly table: string;
  readonly name: string;
  readonly handle?: number;
  readonly comment?: string;
  /** Absent for a regular chain (reachable only by jump/goto). */
  readonly base?: NftBaseChain;
  readonly rules: NftRule[];
}

/** A named set or map. `map` is present for maps and verdict maps (`map: ['verdict']`). */
export interface NftSet extends Node {
  readonly family: NftFamily;
  readonly table: string;
  readonly name: string;
  readonly handle?: number;
  /** `type ipv4_addr . inet_proto . inet_service` as its parts; absent when only `typeof` was given. */
  readonly type?: readonly string[];
  /** `typeof ip daddr . tcp dport` as expressions. */
  readonly typeofKey?: readonly NftExpr[];
  /** The map's data type (`verdict`, `ipv4_addr . inet_service`), as parts. */
  readonly map?: readonly string[];
  readonly typeofData?: readonly NftExpr[];
  /** `interval`, `timeout`, `dynamic`, `constant`. */
  readonly flags: readonly string[];
  readonly timeout?: number;
  readonly gcInterval?: number;
  readonly size?: number;
  readonly policy?: 'performance' | 'memory';
  readonly autoMerge?: boolean;
  readonly counter?: boolean;
  readonly comment?: string;
  /** Elements: values, prefixes, ranges, concatenations, `elem` wrappers (timeouts, comments), mappings. */
  readonly elements: NftExpr[];
}

/** A flowtable: parsed and noted, not evaluated (it offloads established flows past the forward hook). */
export interface NftFlowtable extends Node {
  readonly family: NftFamily;
  readonly table: string;
  readonly name: string;
  readonly handle?: number;
  readonly hook: string;
  readonly priority: NftPriority;
  readonly devices: readonly string[];
  readonly flags: readonly string[];
}

/** Named stateful objects: `counter`, `quota`, `limit`, `ct helper`, `ct timeout`, `ct expectation`, `synproxy`, `secmark`. */
export interface NftObject extends Node {
  readonly family: NftFamily;
  readonly table: string;
  readonly type: string;
  readonly name: string;
  readonly handle?: number;
  readonly comment?: string;
  readonly props: Readonly<Record<string, string | number | boolean>>;
}

export interface NftTable extends Node {
  readonly family: NftFamily;
  readonly name: string;
  readonly handle?: number;
  /** `dormant`, `owner`, `persist`. */
  readonly flags: readonly string[];
  readonly comment?: string;
  readonly chains: NftChain[];
  readonly sets: NftSet[];
  readonly flowtables: NftFlowtable[];
  readonly objects: NftObject[];
}

export interface NftRuleset {
  readonly source: NftSource;
  /** Tables in the order they first appeared. */
  readonly tables: NftTable[];
}

/** What every nftables front end returns. Front ends never throw. */
export interface NftParseResult {
  readonly ruleset: NftRuleset;
  readonly diagnostics: Diagnostic[];
}

/** The table `family name`, or undefined. */
export function findTable(rs: NftRuleset, family: NftFamily, name: string): NftTable | undefined {
  return rs.tables.find(t => t.family === family && t.name === name);
}

/** Standard priority names (nft(8), "Standard priority names"); bridge has its own values. */
export function namedPriority(family: NftFamily, name: string): number | undefined {
  const table = family === 'bridge' ? BRIDGE_PRIORITIES : PRIORITIES;
  return Object.hasOwn(table, name) ? table[name] : undefined;
}

const PRIORITIES: Readonly<Record<string, number>> = {
  raw: -300,
  mangle: -150,
  dstnat: -100,
  filter: 0,
  security: 50,
  srcnat: 100,
};

const BRIDGE_PRIORITIES: Readonly<Record<string, number>> = {
  dstnat: -300,
  filter: -200,
  out: 100,
  srcnat: 300,
};
