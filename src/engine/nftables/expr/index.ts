/** The left side of a match, a map key, a statement's value: one lowering per expression kind (one file each). */
import type { NftExpr } from '../ast.ts';
import type { LExpr, LowerCtx } from '../../nft-program/program.ts';
import { lowerBinop } from './bitwise.ts';
import { concatExpr } from './concat.ts';
import { lowerCt } from './ct.ts';
import { lowerFib } from './fib.ts';
import { lowerMeta } from './meta.ts';
import { lowerNumgen } from './numgen.ts';
import { lowerPayload } from './payload.ts';
import { unknownExpr } from './unknown.ts';

function exprText(e: NftExpr): string {
  switch (e.kind) {
    case 'rawpayload':
      return `@${e.base},${e.offset},${e.len}`;
    case 'exthdr':
      return `${e.family} ${e.name}${e.field ? ` ${e.field}` : ''}`;
    case 'hash':
      return `${e.mode} mod ${e.mod}`;
    case 'rt':
      return `rt ${e.key}`;
    case 'socket':
    case 'osf':
    case 'ipsec':
    case 'tunnel':
      return `${e.kind} ${e.key}`;
    case 'unknown':
      return e.text;
    default:
      return e.kind;
  }
}

/** Lowers a packet expression; anything the evaluator cannot read becomes an unknown expression. */
export function lowerExpr(e: NftExpr, ctx: LowerCtx): LExpr {
  let out: LExpr | null = null;
  switch (e.kind) {
    case 'payload':
      out = lowerPayload(e, ctx);
      break;
    case 'meta':
      out = lowerMeta(e, ctx);
      break;
    case 'ct':
      out = lowerCt(e, ctx);
      break;
    case 'fib':
      out = lowerFib(e, ctx);
      break;
    case 'numgen':
      out = lowerNumgen(e, ctx);
      break;
    case 'concat':
      out = concatExpr(e.items.map(i => lowerExpr(i, ctx)));
      break;
    case 'binop':
      out = lowerBinop(e, lowerExpr(e.left, ctx), ctx);
      break;
    default: {
      const text = exprText(e);
      if (e.kind !== 'unknown')
        ctx.report(
          'not-modelled',
          `${text} is not modelled: rules using it are undecided in traces`,
          e.range,
          'warning',
        );
      return unknownExpr(text, `${text} is not modelled`);
    }
  }
  return out ?? unknownExpr(exprText(e) === e.kind ? `${e.kind}` : exprText(e), `${e.kind} expression not modelled`);
}
