/**
 * The contract between the rule parser, the evaluator and one match module (one file per netfilter match,
 * like the kernel's xt_*.c). A module compiles its options once, at parse time, into a spec; `test` is then
 * the hot path and must not allocate on a plain match or miss.
 */
import type { Range } from '../diagnostics.ts';
import type { Family } from '../net/addr.ts';
import type { Rational } from '../rational.ts';
import type { PacketState } from '../net/packet.ts';
import type { EvalEnv } from './env.ts';
import type { DiffFactsHook } from './knowledge.ts';

export interface OptionSpec {
  readonly name: string;
  readonly aliases?: readonly string[];
  /** How many words follow the option. */
  readonly args: number;
  /** Whether `! --option` is accepted. */
  readonly negatable?: boolean;
}

export interface ParsedOption {
  /** The option's canonical name (aliases such as `--destination-port` are stored as `--dport`). */
  readonly name: string;
  readonly negated: boolean;
  readonly args: readonly string[];
  /** Where the option stands: 0-based line and character offsets (end exclusive). */
  readonly line: number;
  readonly start: number;
  readonly end: number;
}

export function optionRange(o: ParsedOption): Range {
  return { start: { line: o.line, character: o.start }, end: { line: o.line, character: o.end } };
}

export interface CompileContext {
  readonly family: Family;
  /** The rule's `-p` protocol number, or null when the rule has none (or it is negated). */
  readonly proto: number | null;
  report(
    option: ParsedOption | null,
    code:
      | 'bad-argument'
      | 'bad-address'
      | 'bad-port'
      | 'bad-mark'
      | 'bad-probability'
      | 'missing-argument'
      | 'invalid-negation',
    message: string,
    severity?: 'error' | 'warning',
  ): void;
}

/** A match the evaluator cannot decide; the trace splits into "if it matches" and "if not". */
export interface Undecided {
  readonly kind: 'unknown';
  readonly reason: string;
}

/** A random match: the trace follows both branches, weighted exactly as the kernel does. */
export interface Branch {
  readonly kind: 'branch';
  readonly p: Rational;
  readonly label: string;
}

/** A match decided by an assumption the trace states (e.g. rate limits are assumed not exceeded). */
export interface Assumed {
  readonly kind: 'assume';
  readonly value: boolean;
  readonly note: string;
}

export type MatchResult = boolean | Undecided | Branch | Assumed;

export interface MatchModule<S> {
  readonly name: string;
  readonly options: readonly OptionSpec[];
  /** Families the module exists for (`icmp` is IPv4 only, `icmp6` IPv6 only). */
  readonly families?: readonly Family[];
  compile(options: readonly ParsedOption[], ctx: CompileContext): S;
  test(spec: S, pkt: PacketState, env: EvalEnv): MatchResult;
  /** The first criterion that failed, e.g. `--dport 443 ≠ 80`; called only after `test` returned false. */
  why(spec: S, pkt: PacketState, env: EvalEnv): string;
  /** A plain-language reading of the match, for hovers. */
  describe(spec: S): string;
  /**
   * The constants the module tests, for the diff's class analysis (diff/facts.ts), or `'opaque'` when the
   * diff cannot cut them into header fields (the rule's classes then stay open). See knowledge.ts.
   */
  readonly diffFacts: DiffFactsHook<S>;
  /**
   * The module's criteria as literal atoms for the linter's shadowing check (lint/criteria.ts): `optionAtoms`
   * when its options are independent conditions, `jointAtom` when they qualify one another or the linter
   * reads nothing into them, `noAtoms` when it tests nothing. See knowledge.ts.
   */
  lintAtoms(spec: S, options: readonly ParsedOption[]): readonly string[];
  /**
   * How far the linter may trust the module's answer (lint/shadow.ts): `'fixed'` — the same for the same
   * packet, reading only what no non-terminating target changes (addresses, ports, interfaces, the socket
   * owner); `'stateful'` — the same for the same packet, but reading state a MARK, CONNMARK, CT, SET or TTL
   * rule (or a jumped-to chain) may change; `'varying'` — it may answer differently for the same packet
   * (random draws, rate meters, `recent` lists rules update) or is not modelled.
   */
  readonly lintNature: 'fixed' | 'stateful' | 'varying';
}

export function unknown(reason: string): Undecided {
  return { kind: 'unknown', reason };
}

export function defineMatch<S>(m: MatchModule<S>): MatchModule<unknown> {
  return m as unknown as MatchModule<unknown>;
}
