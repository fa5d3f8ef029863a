/**
 * Expressions and statements of libnftables' JSON schema (doc/libnftables-json.adoc, src/parser_json.c)
 * read into ast.ts. The AST follows the schema, so this is mostly a renaming; the few normalisations
 * (a flag given as a string or a list becomes a list; a map type "a . b" becomes its parts) are the ones
 * the text front end makes too.
 */
import type { Range } from '../diagnostics.ts';
import type { NftExpr, NftFamily, NftMatchOp, NftStmt, NftVerdictName } from './ast.ts';
import { logStatement } from './parse-build.ts';
import { jget, type JNode } from './parse-json-reader.ts';

export interface JsonCtx {
  diag(code: 'unknown-statement' | 'unknown-expression' | 'bad-json', message: string, range: Range): void;
}

const VERDICT_KEYS = new Set(['accept', 'drop', 'continue', 'return', 'jump', 'goto']);
const BINOPS = new Set(['&', '|', '^', '<<', '>>']);
const OPS = new Set(['==', '!=', '<', '>', '<=', '>=', 'in']);

export function str(n: JNode | undefined): string | undefined {
  return n?.t === 'str' ? n.v : n?.t === 'num' ? String(n.v) : undefined;
}

export function num(n: JNode | undefined): number | undefined {
  return n?.t === 'num' ? n.v : undefined;
}

/** A flag field given as one string or a list of strings (JSON prints one flag as a string). */
export function strList(n: JNode | undefined): string[] {
  if (!n) return [];
  if (n.t === 'arr') return n.v.map(x => str(x) ?? '');
  const s = str(n);
  return s === undefined ? [] : [s];
}

/** The single key of `{"key": value}`. */
function only(n: JNode): readonly [string, JNode] | undefined {
  return n.t === 'obj' && n.v.length === 1 ? n.v[0] : undefined;
}

export function jsonExpr(n: JNode, ctx: JsonCtx, inSet = false): NftExpr {
  const range = n.r;
  switch (n.t) {
    case 'str':
      return n.v.startsWith('@') ? { kind: 'setref', name: n.v.slice(1), range } : { kind: 'value', value: n.v, range };
    case 'num':
      return { kind: 'value', value: n.v, range };
    case 'bool':
      return { kind: 'value', value: n.v, range };
    case 'arr':
      if (inSet && n.v.length === 2) {
        const [k, d] = n.v as [JNode, JNode];
        return { kind: 'mapping', key: jsonExpr(k, ctx), data: jsonExpr(d, ctx), range };
      }
      return { kind: 'list', items: n.v.map(x => jsonExpr(x, ctx)), range };
    case 'null':
      ctx.diag('bad-json', 'null is not an expression', range);
      return { kind: 'unknown', text: 'null', range };
    case 'obj':
      return objectExpr(n, ctx);
  }
}

function objectExpr(n: JNode, ctx: JsonCtx): NftExpr {
  const range = n.r;
  const kv = only(n);
  if (!kv) {
    ctx.diag('unknown-expression', 'an expression is an object with exactly one key', range);
    return { kind: 'unknown', text: '{…}', range };
  }
  const [k, v] = kv;
  const e = (x: JNode | undefined): NftExpr => (x ? jsonExpr(x, ctx) : { kind: 'unknown', text: 'missing', range });
  if (VERDICT_KEYS.has(k)) {
    const target = str(jget(v, 'target'));
    return { kind: 'verdict', verdict: k as NftVerdictName, ...(target !== undefined ? { target } : {}), range };
  }
  if (BINOPS.has(k) && v.t === 'arr' && v.v.length === 2) {
    return { kind: 'binop', op: k as '&', left: e(v.v[0]), right: e(v.v[1]), range };
  }
  switch (k) {
    case 'payload': {
      const base = str(jget(v, 'base'));
      if (base !== undefined)
        return { kind: 'rawpayload', base, offset: num(jget(v, 'offset')) ?? 0, len: num(jget(v, 'len')) ?? 0, range };
      return { kind: 'payload', protocol: str(jget(v, 'protocol')) ?? '', field: str(jget(v, 'field')) ?? '', range };
    }
    case 'meta':
      return { kind: 'meta', key: str(jget(v, 'key')) ?? '', range };
    case 'ct': {
      const dir = str(jget(v, 'dir'));
      const family = str(jget(v, 'family'));
      let key = str(jget(v, 'key')) ?? '';
      // nft 1.0.x prints `ct original ip daddr` as {"key": "ip daddr"}; an explicit family gets the same form.
      if (family === 'ip' || family === 'ip6') key = `${family} ${key}`;
      return dir === 'original' || dir === 'reply' ? { kind: 'ct', key, dir, range } : { kind: 'ct', key, range };
    }
    case 'fib':
      return { kind: 'fib', result: str(jget(v, 'result')) ?? '', flags: strList(jget(v, 'flags')), range };
    case 'numgen':
      return {
        kind: 'numgen',
        mode: str(jget(v, 'mode')) === 'inc' ? 'inc' : 'random',
        mod: num(jget(v, 'mod')) ?? NaN,
        offset: num(jget(v, 'offset')) ?? 0,
        range,
      };
    case 'jhash':
    case 'symhash': {
      const ex = jget(v, 'expr');
      const seed = num(jget(v, 'seed'));
      return {
        kind: 'hash',
        mode: k,
        ...(ex ? { expr: e(ex) } : {}),
        mod: num(jget(v, 'mod')) ?? NaN,
        ...(seed !== undefined ? { seed } : {}),
        offset: num(jget(v, 'offset')) ?? 0,
        range,
      };
    }
    case 'rt': {
      const family = str(jget(v, 'family'));
      return {
        kind: 'rt',
        key: str(jget(v, 'key')) ?? '',
        ...(family === 'ip' || family === 'ip6' ? { family } : {}),
        range,
      };
    }
    case 'socket':
    case 'osf':
      return { kind: k, key: str(jget(v, 'key')) ?? '', range };
    case 'exthdr':
    case 'tcp option':
    case 'ip option':
    case 'sctp chunk': {
      const field = str(jget(v, 'field'));
      return {
        kind: 'exthdr',
        family: k,
        name: str(jget(v, 'name')) ?? '',
        ...(field !== undefined ? { field } : {}),
        range,
      };
    }
    case 'prefix':
      return { kind: 'prefix', addr: e(jget(v, 'addr')), len: num(jget(v, 'len')) ?? NaN, range };
    case 'range':
      if (v.t === 'arr' && v.v.length === 2) return { kind: 'range', low: e(v.v[0]), high: e(v.v[1]), range };
      break;
    case 'concat':
      if (v.t === 'arr') return { kind: 'concat', items: v.v.map(x => jsonExpr(x, ctx)), range };
      break;
    case 'set':
      return {
        kind: 'set',
        items: v.t === 'arr' ? v.v.map(x => jsonExpr(x, ctx, true)) : [jsonExpr(v, ctx, true)],
        range,
      };
    case 'elem':
      return jsonElem(v, ctx, range);
    case 'map':
      return { kind: 'map', key: e(jget(v, 'key')), data: jsonExpr(jget(v, 'data') ?? v, ctx), range };
  }
  ctx.diag('unknown-expression', `unknown expression "${k}"`, range);
  return { kind: 'unknown', text: k, range };
}

function jsonElem(v: JNode, ctx: JsonCtx, range: Range): NftExpr {
  const val = jget(v, 'val');
  const timeout = num(jget(v, 'timeout'));
  const expires = num(jget(v, 'expires'));
  const comment = str(jget(v, 'comment'));
  return {
    kind: 'elem',
    value: val ? jsonExpr(val, ctx) : { kind: 'unknown', text: 'missing', range },
    ...(timeout !== undefined ? { timeout } : {}),
    ...(expires !== undefined ? { expires } : {}),
    ...(comment !== undefined ? { comment } : {}),
    range,
  };
}

export function jsonStmt(n: JNode, ctx: JsonCtx, family: NftFamily): NftStmt {
  const range = n.r;
  const kv = only(n);
  if (!kv) {
    ctx.diag('unknown-statement', 'a statement is an object with exactly one key', range);
    return { kind: 'unknown', text: '{…}', range };
  }
  const [k, v] = kv;
  const e = (x: JNode | undefined): NftExpr | undefined => (x ? jsonExpr(x, ctx) : undefined);
  if (VERDICT_KEYS.has(k)) {
    const target = str(jget(v, 'target'));
    return { kind: 'verdict', verdict: k as 'accept', ...(target !== undefined ? { target } : {}), range };
  }
  switch (k) {
    case 'match': {
      const op = str(jget(v, 'op')) ?? '==';
      const left = e(jget(v, 'left'));
      const right = e(jget(v, 'right'));
      if (!left || !right || !OPS.has(op)) break;
      return { kind: 'match', op: op as NftMatchOp, left, right, range };
    }
    case 'counter': {
      if (v.t === 'str' || (v.t === 'obj' && only(v) && !jget(v, 'packets')))
        return { kind: 'counter', ref: jsonExpr(v, ctx), range };
      const packets = num(jget(v, 'packets'));
      const bytes = num(jget(v, 'bytes'));
      return {
        kind: 'counter',
        ...(packets !== undefined ? { packets } : {}),
        ...(bytes !== undefined ? { bytes } : {}),
        range,
      };
    }
    case 'reject': {
      const type = str(jget(v, 'type'));
      const code = str(jget(v, 'expr'));
      if (type === undefined) {
        // Same default as the text front end (src/evaluate.c stmt_evaluate_reject_default).
        return {
          kind: 'reject',
          type: family === 'ip' ? 'icmp' : family === 'ip6' ? 'icmpv6' : 'icmpx',
          code: 'port-unreachable',
          range,
        };
      }
      return { kind: 'reject', type: type as 'icmp', ...(code !== undefined ? { code } : {}), range };
    }
    case 'vmap':
    case 'mangle': {
      const key = e(jget(v, 'key'));
      const data = e(jget(v, k === 'vmap' ? 'data' : 'value'));
      if (!key || !data) break;
      return k === 'vmap' ? { kind: 'vmap', key, data, range } : { kind: 'mangle', key, value: data, range };
    }
    case 'dnat':
    case 'snat':
    case 'masquerade':
    case 'redirect': {
      const fam = str(jget(v, 'family'));
      const addr = e(jget(v, 'addr'));
      const port = e(jget(v, 'port'));
      return {
        kind: 'nat',
        type: k,
        ...(fam === 'ip' || fam === 'ip6' ? { family: fam } : {}),
        ...(addr ? { addr } : {}),
        ...(port ? { port } : {}),
        flags: strList(jget(v, 'flags')),
        range,
      };
    }
    case 'log':
      return jsonLog(v, range);
    case 'limit': {
      if (v.t === 'str') return { kind: 'objref', type: 'limit', ref: jsonExpr(v, ctx), range };
      const unit = str(jget(v, 'rate_unit')) ?? 'packets';
      const burstUnit = str(jget(v, 'burst_unit'));
      return {
        kind: 'limit',
        rate: num(jget(v, 'rate')) ?? NaN,
        per: str(jget(v, 'per')) ?? 'second',
        burst: num(jget(v, 'burst')) ?? (unit === 'packets' ? 5 : 0),
        unit,
        ...(burstUnit && burstUnit !== 'bytes' ? { burstUnit } : {}),
        inv: jget(v, 'inv')?.t === 'bool' && (jget(v, 'inv') as { v: boolean }).v,
        range,
      };
    }
    case 'quota': {
      if (v.t === 'str') return { kind: 'objref', type: 'quota', ref: jsonExpr(v, ctx), range };
      const used = num(jget(v, 'used'));
      const usedUnit = str(jget(v, 'used_unit'));
      return {
        kind: 'quota',
        value: num(jget(v, 'val')) ?? NaN,
        unit: str(jget(v, 'val_unit')) ?? 'bytes',
        ...(used !== undefined ? { used, usedUnit: usedUnit ?? 'bytes' } : {}),
        inv: jget(v, 'inv')?.t === 'bool' && (jget(v, 'inv') as { v: boolean }).v,
        range,
      };
    }
    case 'notrack':
      return { kind: 'notrack', args: {}, range };
    case 'dup':
    case 'fwd':
    case 'tproxy':
    case 'synproxy': {
      const args: Record<string, NftExpr | string | number> = {};
      if (v.t === 'obj') {
        for (const [ak, av] of v.v) {
          if (ak === 'family') args.family = str(av) ?? '';
          else if (ak === 'flags') args.flags = strList(av).join(',');
          else if (k === 'synproxy' && av.t === 'num') args[ak] = av.v;
          else args[ak] = jsonExpr(av, ctx);
        }
      }
      return { kind: k, args, range };
    }
    case 'ct count':
      return {
        kind: 'ct count',
        args: {
          val: num(jget(v, 'val')) ?? NaN,
          inv: jget(v, 'inv')?.t === 'bool' && (jget(v, 'inv') as { v: boolean }).v,
        },
        range,
      };
    case 'ct helper':
    case 'ct timeout':
    case 'ct expectation':
      // `ct helper set "ftp"` is printed as {"ct helper": "ftp"}; the text front end reads it as a mangle.
      return { kind: 'mangle', key: { kind: 'ct', key: k.slice(3), range }, value: jsonExpr(v, ctx), range };
    case 'queue': {
      const qn = e(jget(v, 'num'));
      return { kind: 'queue', ...(qn ? { num: qn } : {}), flags: strList(jget(v, 'flags')), range };
    }
    case 'set': {
      const op = str(jget(v, 'op'));
      const elem = e(jget(v, 'elem'));
      const set = str(jget(v, 'set')) ?? '';
      if (!elem || (op !== 'add' && op !== 'update' && op !== 'delete')) break;
      return { kind: 'setop', op, set: set.replace(/^@/, ''), elem, stmts: [], range };
    }
    case 'flow':
      return { kind: 'flow', args: { flowtable: (str(jget(v, 'flowtable')) ?? '').replace(/^@/, '') }, range };
  }
  ctx.diag('unknown-statement', `unknown statement "${k}"`, range);
  return { kind: 'unknown', text: k, range };
}

function jsonLog(v: JNode, range: Range): NftStmt {
  const prefix = str(jget(v, 'prefix'));
  const level = str(jget(v, 'level'));
  const group = num(jget(v, 'group'));
  const snaplen = num(jget(v, 'snaplen'));
  const queueThreshold = num(jget(v, 'queue-threshold'));
  return logStatement({ prefix, level, group, snaplen, queueThreshold }, strList(jget(v, 'flags')), range);
}
