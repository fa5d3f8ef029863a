/**
 * `meta mark set VALUE`, `ct mark set VALUE` (VALUE a constant, `mark or 0x4000`, `ct mark`, `meta mark`, a
 * map lookup): net/netfilter/nft_meta.c `nft_meta_set_eval` and nft_ct.c `nft_ct_set_eval`;
 * `meta nftrace set 1` only turns on tracing. Other keys (`ip dscp set`, `meta priority set`…) are not
 * modelled: the trace ends there as unknown rather than assume they change nothing.
 */
import type { NftMangle } from '../ast.ts';
import { lowerExpr } from '../expr/index.ts';
import type { Alt, LExpr, LowerCtx, Op } from '../../nft-program/program.ts';
import { MARK } from '../../nft-program/types.ts';

function valueOf(m: NftMangle, ctx: LowerCtx): LExpr | null {
  const v = m.value;
  if (v.kind === 'value') {
    const n = MARK.parse(v.value);
    if (n === null) {
      ctx.report('bad-value', `'${String(v.value)}' is not a mark`, v.range);
      return null;
    }
    return { types: [MARK], text: MARK.format(n), eval: () => ({ kind: 'value', v: [n] }) };
  }
  return lowerExpr(v, ctx);
}

export function lowerMangle(m: NftMangle, ctx: LowerCtx): Op {
  const k = m.key;
  const keyText =
    k.kind === 'meta'
      ? `meta ${k.key}`
      : k.kind === 'ct'
        ? `ct ${k.key}`
        : k.kind === 'payload'
          ? `${k.protocol} ${k.field}`
          : k.kind;
  if (k.kind === 'meta' && k.key === 'nftrace') {
    const text = `meta nftrace set ${m.value.kind === 'value' ? String(m.value.value) : '…'}`;
    return { text, isMatch: false, run: () => [{ apply: () => null }] };
  }
  const isMark = (k.kind === 'meta' && k.key === 'mark') || (k.kind === 'ct' && k.key === 'mark');
  if (!isMark) {
    const text = `${keyText} set …`;
    ctx.report('not-modelled', `${text} is not modelled: traces end there as unknown`, m.range, 'warning');
    return { text, isMatch: false, run: () => [{ verdict: { kind: 'unknown', reason: `${text} is not modelled` } }] };
  }
  const value = valueOf(m, ctx);
  const text = `${keyText} set ${value?.text ?? '?'}`;
  const ct = k.kind === 'ct';
  return {
    text,
    ...(value?.key ? { key: `${keyText} set ${value.key}` } : {}),
    // For the diff: a constant or the mark itself splits no class; a map lookup tests its key.
    ...(value ? { diff: { tests: value.lookup ? [value.lookup] : [] } } : {}),
    isMatch: false,
    run(pkt, env): Alt[] {
      if (!value) return [{ verdict: { kind: 'unknown', reason: `${text}: the value could not be read` } }];
      const o = value.eval(pkt, env);
      if (o.kind === 'absent') return [{ miss: `${text}: ${o.why}` }];
      if (o.kind !== 'value')
        return [
          { verdict: { kind: 'unknown', reason: `${text}: ${o.kind === 'unknown' ? o.reason : 'a random value'}` } },
        ];
      const n = Number((o.v[0] as bigint) & 0xffffffffn) >>> 0;
      return [
        {
          apply(p) {
            if (ct) {
              if (p.ct.state === 'UNTRACKED') return `${text}: no conntrack entry, nothing set`;
              const old = p.ct.mark;
              p.ct.mark = n;
              return `ct mark 0x${old.toString(16)} → 0x${n.toString(16)}`;
            }
            const old = p.mark;
            p.mark = n;
            return `meta mark 0x${old.toString(16)} → 0x${n.toString(16)}`;
          },
        },
      ];
    },
  };
}
