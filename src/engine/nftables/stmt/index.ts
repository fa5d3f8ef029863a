/**
 * A rule's statements to its program: one lowering per statement kind (one file each). Statements the
 * evaluator does not model end the trace as unknown; they are never skipped silently.
 */
import type { NftRule, NftStmt } from '../ast.ts';
import type { LowerCtx, NftProgram, Op } from '../../nft-program/program.ts';
import { lowerCounter } from './counter.ts';
import { lowerSetStmt } from './dynset.ts';
import { lowerLimit } from './limit.ts';
import { lowerLog } from './log.ts';
import { lowerMangle } from './mangle.ts';
import { lowerMatch } from './match.ts';
import { lowerNat } from './nat.ts';
import { lowerNotrack } from './notrack.ts';
import { lowerQueue } from './queue.ts';
import { lowerQuota } from './quota.ts';
import { lowerReject } from './reject.ts';
import { lowerVerdict } from './verdict.ts';
import { lowerVmap } from './vmap.ts';

function unknownStmt(text: string): Op {
  return { text, isMatch: false, run: () => [{ verdict: { kind: 'unknown', reason: `${text} is not modelled` } }] };
}

/**
 * Statements that test no packet field (verdicts, reject, counters, log, limit and quota — assumed alike for
 * every packet —, notrack, queue, set updates from the packet path): for the diff they split no class.
 */
const TESTS_NOTHING = new Set<NftStmt['kind']>([
  'verdict',
  'reject',
  'counter',
  'log',
  'limit',
  'quota',
  'notrack',
  'queue',
  'setop',
]);
const NO_TESTS = { tests: [] } as const;

export function lowerStmt(s: NftStmt, ctx: LowerCtx): Op {
  const op = lowerOne(s, ctx);
  return TESTS_NOTHING.has(s.kind) && !op.diff ? { ...op, diff: NO_TESTS } : op;
}

function lowerOne(s: NftStmt, ctx: LowerCtx): Op {
  switch (s.kind) {
    case 'match':
      return lowerMatch(s, ctx);
    case 'verdict':
      return lowerVerdict(s);
    case 'vmap':
      return lowerVmap(s, ctx);
    case 'reject':
      return lowerReject(s, ctx.family);
    case 'nat':
      return lowerNat(s, ctx);
    case 'mangle':
      return lowerMangle(s, ctx);
    case 'counter':
      return lowerCounter();
    case 'log':
      return lowerLog(s);
    case 'limit':
      return lowerLimit(s);
    case 'quota':
      return lowerQuota(s);
    case 'notrack':
      return lowerNotrack();
    case 'setop':
      return lowerSetStmt(s, ctx);
    case 'queue':
      return lowerQueue();
    case 'unknown':
      return unknownStmt(s.text);
    default:
      ctx.report('not-modelled', `${s.kind} is not modelled: traces end there as unknown`, s.range, 'warning');
      return unknownStmt(s.kind);
  }
}

export function lowerRuleProgram(r: NftRule, ctx: LowerCtx): NftProgram {
  return { family: r.family, ops: r.stmts.map(s => lowerStmt(s, ctx)) };
}
