/**
 * The contract for one target module (one file per target family, like the kernel's xt_*.c). `apply`
 * changes the path's packet in place (marks, NAT bindings) and says how traversal goes on.
 */
import type { EvalEnv } from '../matches/env.ts';
import type { PacketState } from '../net/packet.ts';
import type { CompileContext, OptionSpec, ParsedOption } from '../matches/types.ts';
import type { HookName } from '../hooks.ts';
import type { Write } from '../matches/knowledge.ts';

export type TargetEffect =
  | { readonly kind: 'continue' }
  | { readonly kind: 'accept' }
  | { readonly kind: 'drop' }
  | { readonly kind: 'reject'; readonly with: string }
  | { readonly kind: 'queue' }
  /** The target's result depends on state no file holds: the trace splits on it. */
  | { readonly kind: 'unknown'; readonly reason: string };

export interface TargetResult {
  readonly effect: TargetEffect;
  /** What happened, for the trace: `DNAT → 10.10.1.11:80`, `MARK 0x0 → 0x4000`. */
  readonly text: string;
  readonly note?: string;
}

export interface TargetModule<S> {
  readonly name: string;
  readonly options: readonly OptionSpec[];
  /** Tables the kernel accepts the target in (xt_target.table); undefined = any. */
  readonly tables?: readonly string[];
  /** Hooks the kernel accepts it on (xt_target.hooks); undefined = any. */
  readonly hooks?: readonly HookName[];
  compile(options: readonly ParsedOption[], ctx: CompileContext): S;
  apply(spec: S, pkt: PacketState, env: EvalEnv): TargetResult;
  describe(spec: S): string;
  /**
   * The packet fields the target rewrites, for the diff (diff/facts.ts: which rewrites can reach a changed
   * rule, and the values they write); `WRITES_NOTHING` for a target that changes no field the diff reads.
   */
  diffWrites(spec: S, options: readonly ParsedOption[]): readonly Write[];
  /**
   * What the target means for the later rules of its chain (lint/effects.ts): `'terminates'` — the kernel
   * returns a verdict instead of XT_CONTINUE for the packets it takes (ip_tables.c `ipt_do_table`);
   * `'passive'` — it continues and changes nothing a match reads (logging); `'mutates'` — it continues,
   * possibly changing what later matches read.
   */
  readonly lintEffect: 'terminates' | 'passive' | 'mutates';
}

export function defineTarget<S>(t: TargetModule<S>): TargetModule<unknown> {
  return t as unknown as TargetModule<unknown>;
}

export const CONTINUE: TargetEffect = { kind: 'continue' };
export const ACCEPT: TargetEffect = { kind: 'accept' };
