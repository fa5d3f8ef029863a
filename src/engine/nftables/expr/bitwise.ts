/**
 * `mark and 0x4000`, `meta mark or 0x4000`, `ct mark xor 1`, `ct mark >> 8`: net/netfilter/nft_bitwise.c
 * (`(reg & mask) ^ xor` for and/or/xor, shifts for << >>), on the register width of the left side.
 */
import type { NftBinop, NftExpr } from '../ast.ts';
import type { DataType } from '../../nft-program/types.ts';
import type { ExprOut, FieldFact, LExpr, LowerCtx } from '../../nft-program/program.ts';

/** A constant operand: a value, a flag list (`fin | syn`, JSON `["fin", "syn"]`) or an or of constants. */
function constant(e: NftExpr, t: DataType): bigint | null {
  if (e.kind === 'value') {
    const v = t.parse(e.value);
    return typeof v === 'bigint' ? v : null;
  }
  if (e.kind === 'list' || e.kind === 'set') {
    let acc = 0n;
    for (const i of e.items) {
      const v = constant(i, t);
      if (v === null) return null;
      acc |= v;
    }
    return acc;
  }
  if (e.kind === 'binop' && e.op === '|') {
    const a = constant(e.left, t);
    const b = constant(e.right, t);
    return a === null || b === null ? null : a | b;
  }
  return null;
}

export function lowerBinop(e: NftBinop, left: LExpr, ctx: LowerCtx): LExpr | null {
  const t = left.types[0]!;
  const r = constant(e.right, t);
  // A shift wider than the register is refused like nft does (and never builds a giant BigInt).
  if (
    left.types.length !== 1 ||
    t.bits === 0 ||
    typeof r !== 'bigint' ||
    ((e.op === '<<' || e.op === '>>') && r > BigInt(t.bits))
  ) {
    ctx.report('bad-value', `${left.text} ${e.op} …: expected a number on the right`, e.range);
    return null;
  }
  const width = (1n << BigInt(t.bits)) - 1n;
  const f = (x: bigint): bigint => {
    switch (e.op) {
      case '&':
        return x & r;
      case '|':
        return x | r;
      case '^':
        return x ^ r;
      case '<<':
        return (x << r) & width;
      default:
        return x >> r;
    }
  };
  // For the diff: `mark and MASK` is a masked mark test; a value alike for the whole class stays so.
  const inner = left.facts?.[0];
  const fact: FieldFact =
    inner?.kind === 'uniform'
      ? inner
      : inner?.kind === 'mark' && e.op === '&'
        ? { kind: 'mark', mask: inner.mask & r }
        : { kind: 'open', why: `${left.text} ${e.op} … is not cut on` };
  const word = { '&': 'and', '|': 'or', '^': 'xor', '<<': '<<', '>>': '>>' }[e.op];
  return {
    types: left.types,
    text: `${left.text} ${word} ${t.format(r)}`,
    facts: [fact],
    eval(pkt, env): ExprOut {
      const o = left.eval(pkt, env);
      if (o.kind === 'value') return { kind: 'value', v: [f(o.v[0] as bigint)] };
      if (o.kind === 'choice')
        return { kind: 'choice', options: o.options.map(c => ({ ...c, v: [f(c.v[0] as bigint)] })) };
      return o;
    },
  };
}
