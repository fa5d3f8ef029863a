/**
 * What a match or target module knows about its rule beyond matching one packet, in the shared terms the
 * analyses read (issue 13: "a module owns everything about its expression"). The diff's class analysis
 * (diff/facts.ts) asks each module for the constants it tests (`diffFacts`) and each target for the packet
 * fields it rewrites (`diffWrites`); the linter's shadowing check (lint/criteria.ts) asks each module for its
 * criteria as literal atoms (`lintAtoms`). Every hook reads the module's compiled instance — the options the
 * front end parsed for it (canonical names, `!`, arguments) and its spec — never the rule's text.
 */
import type { Span } from '../net/span.ts';
import { parsePortRange } from './util.ts';
import type { ParsedOption } from './types.ts';

export interface Neg<T> {
  readonly negated: boolean;
  readonly value: T;
}

/** The header fields a rule may test, as the diff tracks which rewrites can reach a rule. */
export type TestedField = 'src' | 'dst' | 'mark' | 'ctmark' | 'ctstate' | 'out';

/**
 * One module's share of a rule's facts (diff/facts.ts `RuleFacts` adds them up). Absent fields are empty.
 * Constants are cuts, not conditions: the diff splits its value spaces at them and then evaluates every rule
 * against each piece, so a negated test contributes its constants too.
 */
export interface MatchFacts {
  /** Each port test is a list of ranges, any of which matches (multiport), possibly negated as a whole. */
  readonly dports?: readonly Neg<readonly Span[]>[];
  readonly sports?: readonly Neg<readonly Span[]>[];
  /** Further address constants (iprange, conntrack original tuple) that cut the src / dst spaces. */
  readonly srcCuts?: readonly Span[];
  readonly dstCuts?: readonly Span[];
  /** The node's addresses matter (`addrtype`). */
  readonly addrtype?: boolean;
  /** A positive `--dst-type LOCAL`: the rule only matches packets to the node. */
  readonly dstLocal?: boolean;
  /** Tests of the packet mark (value/mask). */
  readonly marks?: readonly { readonly value: number; readonly mask: number }[];
  readonly ctstates?: readonly string[];
  /** ICMP type/code pairs the rule names. */
  readonly icmpTypes?: readonly (readonly [number, number])[];
  /** `recent` lists the rule checks: the client's affinity entries matter. */
  readonly recentLists?: readonly string[];
  /** Fields tested beyond the ports above (those count for src/dst by themselves). */
  readonly tests?: readonly TestedField[];
}

/** A module that tests nothing the classes split on (comment) or that the evaluator itself enumerates. */
export const NO_FACTS: MatchFacts = Object.freeze({});

/**
 * A module's answer to `diffFacts`: its facts, or `'opaque'` when its tests are not cut into header fields
 * (length, ttl, owner, set, u32, …). The diff then leaves every class that meets such a rule open
 * (unexplored, reported approximate), never reads it as matching everything.
 */
export type DiffFactsHook<S> = ((spec: S, options: readonly ParsedOption[], family: 4 | 6) => MatchFacts) | 'opaque';

/** A packet field a target rewrites; `to` is the new value's interval when the rule names it. */
export type Write =
  | { readonly field: 'dst' | 'src'; readonly to: Span | null; readonly ports: Span | null }
  | { readonly field: 'mark' | 'ctmark' | 'ctstate' };

/** A target that rewrites no field the diff reads (verdict-like, logging, queueing). */
export const WRITES_NOTHING = (): readonly Write[] => [];

/** `80`, `80:90`, `1,2,5:9` (multiport's `a-b` is read as `a:b`): every well-formed range; others are skipped. */
export function portList(text: string): Span[] {
  const out: Span[] = [];
  for (const item of text.split(',')) {
    const r = parsePortRange(item.replace('-', ':'));
    if (r) out.push({ lo: BigInt(r.from), hi: BigInt(r.to) });
  }
  return out;
}

/** The first argument of the last option written with this canonical name (a repeated option keeps the last). */
export function lastArg(options: readonly ParsedOption[], name: string): string | undefined {
  for (let k = options.length - 1; k >= 0; k--) if (options[k]!.name === name) return options[k]!.args[0] ?? '';
  return undefined;
}

/** One option as an atom: `!--dport 80`. */
function optionAtom(o: ParsedOption): string {
  return `${o.negated ? '!' : ''}${o.name}${o.args.length ? ` ${o.args.join(' ')}` : ''}`;
}

/** Option name → its atom, in the order first written; a repeated option keeps its last value (as iptables). */
function latest(options: readonly ParsedOption[]): Map<string, string> {
  const words = new Map<string, string>();
  for (const o of options) words.set(o.name, optionAtom(o));
  return words;
}

/**
 * `lintAtoms` of a module whose options are independent conditions, ANDed: each option is an atom, so a
 * rule testing `--dport 80` covers one testing `--dport 80 --sport 5`.
 */
export function optionAtoms(_spec: unknown, options: readonly ParsedOption[]): readonly string[] {
  return [...latest(options).values()];
}

/**
 * `lintAtoms` of a module whose options qualify one another (`recent --rcheck --seconds`, `addrtype --dst-type
 * --limit-iface-in`) or that the linter knows nothing about: all its options together are one atom, so only
 * a rule written alike compares equal.
 */
export function jointAtom(_spec: unknown, options: readonly ParsedOption[]): readonly string[] {
  return options.length ? [[...latest(options).values()].join(' ')] : [];
}

/** `lintAtoms` of a module that adds no condition (comment). */
export function noAtoms(): readonly string[] {
  return [];
}
