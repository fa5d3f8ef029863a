/**
 * A relational expression `LEFT [op] RIGHT`: net/netfilter/nft_cmp.c (==, !=, <, >, <=, >=), nft_range.c
 * (`1000-2000`), nft_bitwise.c + nft_cmp.c for prefixes and flag lists (`ct state established,related`
 * is `(state & mask) != 0`), nft_lookup.c for anonymous and named sets (`tcp dport { 22, 80 }`,
 * `ip saddr @blocklist`, `!= @s` with NFT_LOOKUP_F_INV). A false match ends the rule (NFT_BREAK).
 * Dynamic sets (filled by `update @s`/`add @s` from the packet path, like kube-proxy's affinity sets) hold
 * what the caller states (EvalEnv.recent, by set name), like `-m recent`: by default no live element.
 */
import type { NftMatch } from '../ast.ts';
import type { EvalEnv } from '../../matches/env.ts';
import { complement, isZero, add, ZERO } from '../../rational.ts';
import { lowerExpr } from '../expr/index.ts';
import type { Alt, ExprOut, LExpr, Lookup, LowerCtx, Op, SetElem } from '../../nft-program/program.ts';
import { type Interval, couldMatch, formatKey, literalKey, lookupElems, lowerElements } from '../sets.ts';
import type { Scalar } from '../../nft-program/types.ts';

type Test = (v: readonly Scalar[], env: EvalEnv) => boolean;
type Could = (partial: readonly (Scalar | null)[], env: EvalEnv) => boolean;

function compare(a: Scalar, b: Scalar): number {
  if (typeof a === 'string' || typeof b === 'string') return String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** What the diff reads of the right side (nft-program/program.ts `Lookup`, without the left side and the negation). */
type Facts = Omit<Lookup, 'key' | 'negated'>;

/** The test for the right side, how it reads in the trace, and what the diff reads of it. */
function rightSide(
  m: NftMatch,
  left: LExpr,
  ctx: LowerCtx,
): { test: Test; text: string; could?: Could; facts?: Facts } | null {
  const r = m.right;
  const t0 = left.types[0]!;
  if (r.kind === 'setref') {
    const s = ctx.lookupSet(r.name);
    if (!s) {
      ctx.report('unknown-set', `set @${r.name} is not defined in this table`, r.range);
      return null;
    }
    const name = s.name;
    return {
      text: `@${name}`,
      test: (v, env) => lookupElems(s.elems, v) !== null || (s.dynamic && env.recent.has(name)),
      could: (p, env) => couldMatch(s.elems, p) || (s.dynamic && env.recent.has(name)),
      facts: { elems: s.elems, data: false, ...(s.dynamic ? { dynamic: name } : {}) },
    };
  }
  if (r.kind === 'set') {
    const elems: SetElem[] = lowerElements(r.items, left.types, null, ctx);
    return {
      text: `{ ${elems.map(e => e.text).join(', ')} }`,
      test: v => lookupElems(elems, v) !== null,
      could: p => couldMatch(elems, p),
      facts: { elems, data: false },
    };
  }
  if (r.kind === 'list' && t0.bitmask && left.types.length === 1) {
    let mask = 0n;
    for (const it of r.items) {
      const k = literalKey(it, left.types, ctx);
      if (k) mask |= k[0]![0] as bigint;
    }
    return {
      text: t0.format(mask),
      test: v => ((v[0] as bigint) & mask) !== 0n,
      facts: { elems: [], data: false, mask },
    };
  }
  if (r.kind === 'list') {
    const elems = lowerElements(r.items, left.types, null, ctx);
    return {
      text: elems.map(e => e.text).join(','),
      test: v => lookupElems(elems, v) !== null,
      facts: { elems, data: false },
    };
  }
  const key: Interval[] | null = literalKey(r, left.types, ctx);
  if (!key) return null;
  const text = formatKey(key, left.types);
  const single = key.every(([lo, hi]) => lo === hi);
  if (m.op === '<' || m.op === '>' || m.op === '<=' || m.op === '>=') {
    if (!single || key.length !== 1) {
      ctx.report('bad-value', `${m.op} compares with a single value`, r.range);
      return null;
    }
    const b = key[0]![0];
    const want = {
      '<': (c: number) => c < 0,
      '>': (c: number) => c > 0,
      '<=': (c: number) => c <= 0,
      '>=': (c: number) => c >= 0,
    }[m.op];
    // For the diff: the values that pass, as one interval of the register (numbers only).
    const top = (1n << BigInt(t0.bits)) - 1n;
    const iv: readonly [bigint, bigint] | null =
      typeof b !== 'bigint' || t0.bits === 0
        ? null
        : m.op === '<'
          ? [0n, b - 1n]
          : m.op === '<='
            ? [0n, b]
            : m.op === '>'
              ? [b + 1n, top]
              : [b, top];
    const facts: Facts | undefined =
      iv && iv[0] <= iv[1]
        ? { elems: [{ key: [iv], text }], data: false }
        : iv
          ? { elems: [], data: false }
          : undefined;
    return { text, test: v => want(compare(v[0]!, b)), ...(facts ? { facts } : {}) };
  }
  if (m.op === 'in' && t0.bitmask && key.length === 1 && single) {
    const mask = key[0]![0] as bigint;
    return { text, test: v => ((v[0] as bigint) & mask) !== 0n, facts: { elems: [], data: false, mask } };
  }
  const elems: SetElem[] = [{ key, text }];
  return { text, test: v => lookupElems(elems, v) !== null, facts: { elems, data: false } };
}

function show(left: LExpr, v: readonly Scalar[]): string {
  return v.map((x, i) => left.types[i]?.format(x) ?? String(x)).join(' . ');
}

export function lowerMatch(m: NftMatch, ctx: LowerCtx): Op {
  const left = lowerExpr(m.left, ctx);
  const right = rightSide(m, left, ctx);
  const negated = m.op === '!=';
  const opText = m.op === 'in' || m.op === '==' ? '' : `${m.op} `;
  const text = `${left.text} ${opText}${right?.text ?? '?'}`;
  if (!right) {
    const reason = `${text}: the right side could not be read`;
    return {
      text,
      isMatch: true,
      run: () => [
        { assume: { assumed: 'matches', reason } },
        { assume: { assumed: 'does not match', reason }, miss: `unknown, assumed not to match: ${reason}` },
      ],
    };
  }
  const holds = (v: readonly Scalar[], env: EvalEnv) => right.test(v, env) !== negated;
  const why = (v: readonly Scalar[]) => `${text}: ${left.text} is ${show(left, v)}`;
  return {
    text,
    isMatch: true,
    ...(right.facts ? { diff: { tests: [{ key: left, negated, ...right.facts }] } } : {}),
    run(pkt, env): Alt[] {
      const o: ExprOut = left.eval(pkt, env);
      if (o.kind === 'value') return holds(o.v, env) ? [{}] : [{ miss: why(o.v) }];
      if (o.kind === 'absent') return [{ miss: `${text}: ${o.why}` }];
      if (o.kind === 'unknown') {
        if (o.partial && right.could && !right.could(o.partial, env)) {
          // No element agrees with the known parts: the lookup fails whatever the unknown ones are.
          return negated
            ? [{}]
            : [
                {
                  miss: `${text}: no element for ${o.partial.map((x, i) => (x === null ? '?' : (left.types[i]?.format(x) ?? String(x)))).join(' . ')}`,
                },
              ];
        }
        const reason = `${text}: ${o.reason}`;
        return [
          { assume: { assumed: 'matches', reason } },
          { assume: { assumed: 'does not match', reason }, miss: `unknown, assumed not to match: ${reason}` },
        ];
      }
      // A random left side: the rule matches with the total weight of the values that pass.
      let yes = ZERO;
      const labels: string[] = [];
      for (const c of o.options) {
        if (holds(c.v, env)) {
          yes = add(yes, c.p);
          labels.push(c.label);
        }
      }
      const no = complement(yes);
      const alts: Alt[] = [];
      if (!isZero(yes))
        alts.push({ p: yes, label: `${text} (${labels.length === 1 ? labels[0] : `${labels.length} values`})` });
      if (!isZero(no)) alts.push({ p: no, label: `${text}: not chosen`, miss: `${text}: not chosen` });
      return alts;
    },
  };
}
