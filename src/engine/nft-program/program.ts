/**
 * What a lowered nftables rule is at run time: a list of operations executed in order, as the kernel runs a
 * rule's expressions (`nft_do_chain` in net/netfilter/nf_tables_core.c): an expression that does not hold
 * ends the rule (NFT_BREAK), a verdict ends it with that verdict, everything else changes the packet and
 * goes on. An operation may have several outcomes (numgen's N values, an undecidable match), each with its
 * exact probability or the assumption it rests on; the executor (eval/nft-exec.ts) forks the path on them.
 */
import type { Diagnostic, Range } from '../diagnostics.ts';
import type { EvalEnv } from '../matches/env.ts';
import type { PacketState } from '../net/packet.ts';
import type { Rational } from '../rational.ts';
import type { NfFamily } from '../hooks.ts';
import type { DataType, Scalar } from './types.ts';

/** What evaluating an expression gave. */
export type ExprOut =
  | { readonly kind: 'value'; readonly v: readonly Scalar[] }
  /** The header the expression reads is not there: the rule does not match (nft's implicit dependency). */
  | { readonly kind: 'absent'; readonly why: string }
  /** Not decidable; `partial` holds the known parts of a concatenation (null where unknown), so a lookup can
   * still tell that no element could match. */
  | { readonly kind: 'unknown'; readonly reason: string; readonly partial?: readonly (Scalar | null)[] }
  /** A random value: each with its exact probability (numgen). */
  | {
      readonly kind: 'choice';
      readonly options: readonly { readonly p: Rational; readonly v: readonly Scalar[]; readonly label: string }[];
    };

/**
 * What the semantic diff (src/engine/diff/nft-facts.ts) may know about the value an expression reads, one
 * per concatenated part: which header field it is, so a class of packets (a box of field intervals) can be
 * tested against a rule without tracing every packet. Each expression module states its own; an expression
 * without facts, or with `open`, leaves the classes that meet it unproven (the diff says approximate).
 */
export type FieldFact =
  /** `ip saddr`, `ip6 daddr`; `original`: conntrack's original tuple (`ct original daddr`), the untranslated packet. */
  | { readonly kind: 'addr'; readonly field: 'src' | 'dst'; readonly family: 4 | 6; readonly original?: boolean }
  /** `tcp dport` (protos [6]: absent for other protocols), `th dport` (protos null: any protocol with ports). */
  | {
      readonly kind: 'port';
      readonly field: 'sport' | 'dport';
      readonly protos: readonly number[] | null;
      readonly original?: boolean;
    }
  /** `meta l4proto`, `ip protocol`, `ip6 nexthdr`. */
  | { readonly kind: 'proto' }
  /** `iifname`/`iif` (in), `oifname`/`oif` (out: decided by routing, which cuts every class at the routes). */
  | { readonly kind: 'iface'; readonly dir: 'in' | 'out' }
  /** `meta mark`, or `meta mark and MASK`. */
  | { readonly kind: 'mark'; readonly mask: bigint }
  | { readonly kind: 'ctstate' }
  /** `icmp type`, `icmpv6 type` (their implicit protocol dependency is `proto`). */
  | { readonly kind: 'icmp'; readonly proto: 1 | 58 }
  /** `fib saddr|daddr type`: the node's address types, at which every class is cut. */
  | { readonly kind: 'addrtype'; readonly which: 'src' | 'dst' }
  /** The same for every packet of a class, whatever the value: the family, a value the path set, a numgen draw. */
  | { readonly kind: 'uniform' }
  | { readonly kind: 'open'; readonly why: string };

/** A lowered expression: its value's types (one per concatenated part) and how to read it off the packet. */
export interface LExpr {
  readonly types: readonly DataType[];
  /** As nft prints it: `ip daddr`, `meta l4proto . th dport`. */
  readonly text: string;
  /** The whole expression when `text` abbreviates it (an anonymous map's elements): what makes two rules the same. */
  readonly key?: string;
  eval(pkt: PacketState, env: EvalEnv): ExprOut;
  /** The diff's facts, one per part of `types` (absent: the diff cannot read this expression). */
  readonly facts?: readonly FieldFact[];
  /** A map lookup used as a value (`ip daddr map { … }`): its key and elements, for the diff. */
  readonly lookup?: Lookup;
}

/**
 * A test the diff evaluates over a class: the key's parts (by their facts) looked up in `elems`. A set
 * matches when some element holds; a map (`data`) gives one element's data, so all its elements count.
 */
export interface Lookup {
  readonly key: LExpr;
  readonly elems: readonly SetElem[];
  readonly negated: boolean;
  readonly data: boolean;
  /** A bitmask test (`ct state established,related`): any of these bits. */
  readonly mask?: bigint;
  /** A set the packet path fills (`update @s`): membership is caller state, like `-m recent`. */
  readonly dynamic?: string;
}

/** What an operation tests, for the diff: its lookups (none for a constant action); absent: not readable. */
export interface OpFacts {
  readonly tests: readonly Lookup[];
}

export type VerdictKind = 'accept' | 'drop' | 'continue' | 'return' | 'jump' | 'goto' | 'queue' | 'reject' | 'unknown';

export interface Verdict {
  readonly kind: VerdictKind;
  readonly chain?: string;
  /** reject: what the kernel sends back (`icmp port-unreachable`, `tcp reset`). */
  readonly with?: string;
  readonly reason?: string;
}

/** One outcome of an operation. */
export interface Alt {
  /** Weight of this outcome (random choice); absent = certain (or assumed, see `assume`). */
  readonly p?: Rational;
  readonly label?: string;
  /** This outcome rests on an assumption about something the evaluator cannot know. */
  readonly assume?: { readonly assumed: 'matches' | 'does not match'; readonly reason: string };
  /** The rule does not match: the first criterion that failed. */
  readonly miss?: string;
  /** The rule ends with this verdict. */
  readonly verdict?: Verdict;
  /** Changes the packet (marks, NAT); returns what it did for the trace. */
  readonly apply?: (pkt: PacketState, env: EvalEnv, path: { masquerade: boolean }) => string | null;
  /** Said in the trace (an assumption that is not a fork, e.g. `limit` not exceeded). */
  readonly note?: string;
}

export interface Op {
  /** As nft prints the statement. */
  readonly text: string;
  /** The whole statement when `text` abbreviates it: what makes two rules the same (rule-text.ts `ruleKey`). */
  readonly key?: string;
  /** The diff's view of the statement (src/engine/diff/nft-facts.ts); absent: the diff cannot prove past it. */
  readonly diff?: OpFacts;
  /** Whether the statement is a match (its failure is a miss) rather than an action. */
  readonly isMatch: boolean;
  run(pkt: PacketState, env: EvalEnv): readonly Alt[];
}

/** A lowered rule. */
export interface NftProgram {
  readonly family: NfFamily;
  readonly ops: readonly Op[];
}

export interface LowerCtx {
  readonly family: NfFamily;
  /** The chain's type and hook, when it is a base chain or only reached from base chains of one hook. */
  readonly table: string;
  lookupSet(name: string): NftNamedSet | undefined;
  report(code: Diagnostic['code'], message: string, range: Range, severity?: Diagnostic['severity']): void;
}

/** One element of a set or map: an interval per concatenated part, and the data of a map element. */
export interface SetElem {
  readonly key: readonly (readonly [Scalar, Scalar])[];
  readonly data?: readonly Scalar[] | Verdict;
  readonly text: string;
}

/** A named set or map, lowered: elements with an index for exact keys. */
export interface NftNamedSet {
  readonly name: string;
  readonly keyTypes: readonly DataType[];
  readonly dataTypes: readonly DataType[] | 'verdict' | null;
  /** Filled by the packet path at run time (`update @s`, `add @s`): dynamic, caller-stated content. */
  readonly dynamic: boolean;
  readonly elems: SetElem[];
}
