/**
 * Statements of a rule in the nftables text grammar (src/parser_bison.y `stmt`, nft(8) STATEMENTS), read
 * into ast.ts statements in libnftables' JSON shape. An unknown statement becomes an `unknown` statement
 * holding the rest of the rule's text, with an `unknown-statement` diagnostic: the rule keeps its place
 * and the evaluator can say it cannot judge it.
 */
import type { NftExpr, NftFamily, NftMatchOp, NftReject, NftStmt } from './ast.ts';
import { logStatement } from './parse-build.ts';
import type { Cursor } from './parse-cursor.ts';
import { tokRange, type Tok } from './parse-tokenizer.ts';
import {
  describe,
  parseKeyConcat,
  parseValue,
  parseValueAtom,
  parseValueConcat,
  parseSetBlock,
  startsKeyExpr,
} from './parse-text-expr.ts';
import { literal, parseNumber, splitAddrPort, spanRange } from './parse-values.ts';

const OPS: ReadonlyMap<string, NftMatchOp> = new Map(
  Object.entries({
    '==': '==',
    eq: '==',
    '!=': '!=',
    ne: '!=',
    '<': '<',
    lt: '<',
    '>': '>',
    gt: '>',
    '<=': '<=',
    le: '<=',
    '>=': '>=',
    ge: '>=',
  } as const),
);

/** Keys whose values are bit flags: nft compares them with "any of these bits" when no operator is written. */
function isBitmaskKey(e: NftExpr): boolean {
  if (e.kind === 'ct') return e.key === 'state' || e.key === 'status' || e.key === 'event' || e.key === 'label';
  if (e.kind === 'payload') return e.protocol === 'tcp' && e.field === 'flags';
  return false;
}

export interface ParsedRule {
  readonly stmts: NftStmt[];
  readonly comment?: string;
  readonly handle?: number;
}

/** The statements of one rule, up to the end of its line (or `;`, or `}`). */
export function parseRuleBody(cur: Cursor, family: NftFamily): ParsedRule {
  const stmts: NftStmt[] = [];
  let comment: string | undefined;
  let handle: number | undefined;
  while (!cur.atEnd()) {
    if (cur.isWord('comment')) {
      cur.next();
      comment = cur.next().text;
      continue;
    }
    const before = cur.peek();
    const s = parseStmt(cur, family);
    stmts.push(s);
    if (s.kind === 'unknown') break;
    if (cur.peek() === before) cur.next();
  }
  if (cur.peek().kind === 'handle') handle = Number(cur.next().text);
  return { stmts, ...(comment !== undefined ? { comment } : {}), ...(handle !== undefined ? { handle } : {}) };
}

function unknownRest(cur: Cursor, start: Tok, why: string): NftStmt {
  const words: string[] = [];
  cur.skipToEnd();
  const end = cur.prev();
  words.push(start.text);
  const range = tokRange(start, end.line > start.line || end.col >= start.col ? end : start);
  cur.diag('unknown-statement', why, range);
  return { kind: 'unknown', text: start.text, range };
}

export function parseStmt(cur: Cursor, family: NftFamily): NftStmt {
  const t = cur.peek();
  const r = () => tokRange(t, cur.prev());
  if (t.kind === 'word') {
    switch (t.text) {
      case 'accept':
      case 'drop':
      case 'continue':
      case 'return':
        cur.next();
        return { kind: 'verdict', verdict: t.text, range: r() };
      case 'jump':
      case 'goto': {
        cur.next();
        const target = cur.next();
        if (target.kind !== 'word' && target.kind !== 'string')
          return unknownRest(cur, t, `${t.text} needs a chain name`);
        return { kind: 'verdict', verdict: t.text, target: target.text, range: r() };
      }
      case 'reject':
        return parseReject(cur, family);
      case 'counter':
        return parseCounter(cur);
      case 'log':
        return parseLog(cur);
      case 'limit':
      case 'quota':
        if (cur.isWord('name', 1)) {
          cur.next();
          cur.next();
          const ref = parseValueConcat(cur, true);
          return { kind: 'objref', type: t.text, ref, range: r() };
        }
        return t.text === 'limit' ? parseLimit(cur) : parseQuota(cur);
      case 'notrack':
        cur.next();
        return { kind: 'notrack', args: {}, range: r() };
      case 'queue':
        return parseQueue(cur);
      case 'dnat':
      case 'snat':
      case 'masquerade':
      case 'redirect':
        return parseNat(cur);
      case 'add':
      case 'update':
      case 'delete':
        if (cur.isPunct('@', 1)) return parseSetStmt(cur);
        break;
      case 'ct':
        // `ct count [over] N` (nft(8) CONNTRACK STATEMENTS; JSON {"ct count": {"val", "inv"}}).
        if (cur.isWord('count', 1)) {
          cur.next();
          cur.next();
          const inv = cur.isWord('over') ? (cur.next(), true) : false;
          const val = parseNumber(cur.next().text) ?? NaN;
          return { kind: 'ct count', args: { val, inv }, range: r() };
        }
        break;
      case 'dup':
      case 'fwd':
      case 'tproxy':
        return parseForward(cur, t.text);
      case 'synproxy':
        return parseSynproxy(cur);
      case 'flow':
        if (cur.peek(1).text === 'add' || cur.peek(1).text === 'offload') {
          cur.next();
          cur.next();
          const ref = parseValueAtom(cur, false);
          return { kind: 'flow', args: { flowtable: ref.kind === 'setref' ? ref.name : '' }, range: r() };
        }
        break;
    }
  }
  if (!startsKeyExpr(cur, true)) {
    return unknownRest(cur, t, `unknown statement ${describe(t)}`);
  }
  return parseExprStmt(cur);
}

/** A statement that starts with an expression: a match, a verdict map, or `KEY set VALUE`. */
function parseExprStmt(cur: Cursor): NftStmt {
  const left = parseKeyConcat(cur);
  const t = cur.peek();
  if (t.kind === 'word' && t.text === 'vmap') {
    cur.next();
    const data = parseValueAtom(cur, false);
    return { kind: 'vmap', key: left, data, range: spanRange(left.range, data.range) };
  }
  if (t.kind === 'word' && t.text === 'set') {
    cur.next();
    const value = parseValueConcat(cur, true);
    return { kind: 'mangle', key: left, value, range: spanRange(left.range, value.range) };
  }
  let op: NftMatchOp | undefined;
  if (t.kind === 'word' && OPS.has(t.text)) {
    op = OPS.get(t.text);
    cur.next();
  }
  if (cur.atEnd()) {
    cur.diag('syntax-error', 'a match needs a value', left.range);
    return { kind: 'unknown', text: 'match without value', range: left.range };
  }
  const right = singleElement(parseValue(cur, { keys: false, list: true }));
  // `tcp flags syn / fin,syn,rst,ack`: JSON writes it as `(tcp flags & {fin,syn,rst,ack}) == syn`.
  if (cur.isWord('/')) {
    cur.next();
    const mask = parseValue(cur, { keys: false, list: true });
    const masked = {
      kind: 'binop' as const,
      op: '&' as const,
      left,
      right: mask,
      range: spanRange(left.range, mask.range),
    };
    return { kind: 'match', op: op ?? '==', left: masked, right, range: spanRange(left.range, mask.range) };
  }
  if (!op) {
    const flagValue = right.kind === 'value' || right.kind === 'list';
    op = flagValue && isBitmaskKey(left) ? 'in' : '==';
  }
  return { kind: 'match', op, left, right, range: spanRange(left.range, right.range) };
}

/**
 * An anonymous set of one plain element is that element: nft's evaluator replaces it (src/evaluate.c,
 * expr_evaluate_set: a set of size 1 becomes its element), so `ip daddr { 10.0.0.0/8 }` lists and
 * prints in JSON as `ip daddr 10.0.0.0/8`.
 */
function singleElement(e: NftExpr): NftExpr {
  if (e.kind !== 'set' || e.items.length !== 1) return e;
  const only = e.items[0] as NftExpr;
  // nft keeps a one-element set of a concatenation as a set (the kernel looks concatenations up in sets).
  return only.kind === 'mapping' || only.kind === 'elem' || only.kind === 'concat' ? e : only;
}

/**
 * `reject` without `with` gets the type the kernel rule carries (nft's evaluator, src/evaluate.c
 * stmt_evaluate_reject_default): icmp port-unreachable in ip, icmpv6 in ip6, icmpx elsewhere.
 */
function parseReject(cur: Cursor, family: NftFamily): NftStmt {
  const t = cur.next();
  let type: NftReject['type'];
  let code: string | undefined;
  if (cur.isWord('with')) {
    cur.next();
    const kind = cur.next().text;
    if (kind === 'tcp') {
      if (cur.isWord('reset')) cur.next();
      type = 'tcp reset';
    } else if (kind === 'icmp' || kind === 'icmpv6' || kind === 'icmpx') {
      type = kind;
      if (cur.isWord('type')) cur.next();
      code = cur.next().text;
    } else {
      cur.diag('bad-value', `unknown reject type "${kind}"`, tokRange(cur.prev()));
    }
  } else {
    type = family === 'ip' ? 'icmp' : family === 'ip6' ? 'icmpv6' : 'icmpx';
    code = 'port-unreachable';
  }
  return { kind: 'reject', ...(type ? { type } : {}), ...(code ? { code } : {}), range: tokRange(t, cur.prev()) };
}

function parseCounter(cur: Cursor): NftStmt {
  const t = cur.next();
  if (cur.isWord('name')) {
    cur.next();
    const ref = parseValueConcat(cur, true);
    return { kind: 'counter', ref, range: tokRange(t, cur.prev()) };
  }
  let packets: number | undefined;
  let bytes: number | undefined;
  if (cur.isWord('packets')) packets = parseNumber((cur.next(), cur.next()).text);
  if (cur.isWord('bytes')) bytes = parseNumber((cur.next(), cur.next()).text);
  return {
    kind: 'counter',
    ...(packets !== undefined ? { packets } : {}),
    ...(bytes !== undefined ? { bytes } : {}),
    range: tokRange(t, cur.prev()),
  };
}

function parseLog(cur: Cursor): NftStmt {
  const t = cur.next();
  let prefix: string | undefined;
  let level: string | undefined;
  let group: number | undefined;
  let snaplen: number | undefined;
  let queueThreshold: number | undefined;
  const flags: string[] = [];
  for (;;) {
    const w = cur.peek().text;
    if (cur.peek().kind !== 'word') break;
    if (w === 'prefix') prefix = (cur.next(), cur.next()).text;
    else if (w === 'level') level = (cur.next(), cur.next()).text;
    else if (w === 'group') group = parseNumber((cur.next(), cur.next()).text);
    else if (w === 'snaplen') snaplen = parseNumber((cur.next(), cur.next()).text);
    else if (w === 'queue-threshold') queueThreshold = parseNumber((cur.next(), cur.next()).text);
    else if (w === 'flags') {
      cur.next();
      // `flags tcp sequence,options` names two flags "tcp sequence" and "tcp options" (JSON log flags).
      const scope = cur.isWord('tcp') || cur.isWord('ip') ? `${cur.next().text} ` : '';
      flags.push(scope + cur.next().text);
      while (cur.isPunct(',')) {
        cur.next();
        flags.push(scope + cur.next().text);
      }
    } else break;
  }
  return logStatement({ prefix, level, group, snaplen, queueThreshold }, flags, tokRange(t, cur.prev()));
}

/** `limit rate [over] 10/second [burst 5 packets]`, `limit rate 1 mbytes/second [burst 2 mbytes]`. */
function parseLimit(cur: Cursor): NftStmt {
  const t = cur.next();
  if (cur.isWord('rate')) cur.next();
  let inv = false;
  if (cur.isWord('over')) {
    cur.next();
    inv = true;
  } else if (cur.isWord('until')) cur.next();
  const first = cur.next().text;
  let rate: number;
  let unit = 'packets';
  let per: string;
  if (first.includes('/')) {
    const [n, p] = first.split('/');
    rate = Number(n);
    per = p ?? '';
  } else {
    rate = Number(first);
    const [u, p] = cur.next().text.split('/');
    unit = u ?? '';
    per = p ?? '';
  }
  // nft's default burst is 5 packets, 0 bytes (src/parser_bison.y limit_burst_pkts / limit_burst_bytes).
  let burst = unit === 'packets' ? 5 : 0;
  let burstUnit: string | undefined;
  if (cur.isWord('burst')) {
    cur.next();
    burst = Number(cur.next().text);
    if (cur.isWord('packets') || /bytes$/.test(cur.peek().text)) {
      const u = cur.next().text;
      if (u !== 'packets') burstUnit = u;
    }
  }
  return {
    kind: 'limit',
    rate,
    per,
    burst,
    unit,
    ...(burstUnit ? { burstUnit } : {}),
    inv,
    range: tokRange(t, cur.prev()),
  };
}

function parseQuota(cur: Cursor): NftStmt {
  const t = cur.next();
  let inv = false;
  if (cur.isWord('over')) {
    cur.next();
    inv = true;
  } else if (cur.isWord('until')) cur.next();
  const value = Number(cur.next().text);
  const unit = cur.next().text;
  let used: number | undefined;
  let usedUnit: string | undefined;
  if (cur.isWord('used')) {
    cur.next();
    used = Number(cur.next().text);
    usedUnit = cur.next().text;
  }
  return {
    kind: 'quota',
    value,
    unit,
    ...(used !== undefined ? { used, usedUnit } : {}),
    inv,
    range: tokRange(t, cur.prev()),
  };
}

function parseQueue(cur: Cursor): NftStmt {
  const t = cur.next();
  let num: NftExpr | undefined;
  const flags: string[] = [];
  for (;;) {
    if (cur.isWord('num') || cur.isWord('to')) {
      cur.next();
      num = parseValueConcat(cur, true);
    } else if (cur.isWord('flags')) {
      cur.next();
      flags.push(cur.next().text);
      while (cur.isPunct(',')) flags.push((cur.next(), cur.next()).text);
    } else if (cur.isWord('bypass') || cur.isWord('fanout')) {
      flags.push(cur.next().text);
      while (cur.isPunct(',')) flags.push((cur.next(), cur.next()).text);
    } else break;
  }
  return { kind: 'queue', ...(num ? { num } : {}), flags, range: tokRange(t, cur.prev()) };
}

const NAT_FLAGS = new Set(['random', 'fully-random', 'persistent', 'netmap', 'prefix']);

/** `dnat [ip|ip6] [addr . port] to ADDR[:PORT] | EXPR [map …]`, `masquerade [to :PORT]`, flags. */
function parseNat(cur: Cursor): NftStmt {
  const t = cur.next();
  const type = t.text as 'dnat' | 'snat' | 'masquerade' | 'redirect';
  let family: 'ip' | 'ip6' | undefined;
  if ((cur.isWord('ip') || cur.isWord('ip6')) && !startsKeyExpr(cur, false)) family = cur.next().text as 'ip' | 'ip6';
  // `dnat ip addr . port to …` / `dnat ip prefix to …`: the address form; JSON does not keep it.
  while (cur.isWord('addr') || cur.isWord('port') || cur.isWord('.') || cur.isWord('prefix') || cur.isWord('interval'))
    cur.next();
  let addr: NftExpr | undefined;
  let port: NftExpr | undefined;
  if (cur.isWord('to')) {
    cur.next();
    const w = cur.peek();
    if (w.kind === 'word' && !startsKeyExpr(cur, false) && w.text !== 'map') {
      cur.next();
      ({ addr, port } = splitAddrPort(w.text, tokRange(w)));
      if (addr && type === 'redirect' && !port) ({ port, addr } = { port: addr, addr: undefined });
    } else {
      addr = parseValueConcat(cur, true);
    }
  } else if (!cur.atEnd() && cur.peek().kind === 'word' && /^[\d[:]/.test(cur.peek().text)) {
    // Old syntax without `to` (`dnat 10.0.0.1`), still accepted by nft 1.0.
    const w = cur.next();
    ({ addr, port } = splitAddrPort(w.text, tokRange(w)));
  }
  const flags: string[] = [];
  while (cur.peek().kind === 'word' && NAT_FLAGS.has(cur.peek().text)) {
    flags.push(cur.next().text);
    if (cur.isPunct(',')) cur.next();
  }
  return {
    kind: 'nat',
    type,
    ...(family ? { family } : {}),
    ...(addr ? { addr } : {}),
    ...(port ? { port } : {}),
    flags,
    range: tokRange(t, cur.prev()),
  };
}

/** `update @set { ip saddr timeout 1h }`, `add @set { … }`, `delete @set { … }`. */
function parseSetStmt(cur: Cursor): NftStmt {
  const t = cur.next();
  cur.next();
  const name = cur.next().text;
  if (!cur.isPunct('{')) return unknownRest(cur, t, `"${t.text} @${name}" needs an element in braces`);
  const block = parseSetBlock(cur, true);
  const items = block.kind === 'set' ? block.items : [];
  const elem = items[0] ?? literal('', block.range);
  return {
    kind: 'setop',
    op: t.text as 'add' | 'update' | 'delete',
    set: name,
    elem,
    stmts: [],
    range: tokRange(t, cur.prev()),
  };
}

/**
 * `dup to ADDR [device DEV]`, `fwd [ip|ip6] to DEV | ADDR device DEV`, `tproxy [ip|ip6] to [ADDR][:PORT]`
 * (nft(8) DUP, FWD and TPROXY STATEMENTS), with operands named as nft's JSON names them.
 */
function parseForward(cur: Cursor, kind: 'dup' | 'fwd' | 'tproxy'): NftStmt {
  const t = cur.next();
  const args: Record<string, NftExpr | string> = {};
  if ((cur.isWord('ip') || cur.isWord('ip6')) && cur.isWord('to', 1)) args.family = cur.next().text;
  if (cur.isWord('to')) {
    cur.next();
    const w = cur.peek();
    if (kind === 'tproxy' && w.kind === 'word') {
      cur.next();
      const { addr, port } = splitAddrPort(w.text, tokRange(w));
      if (addr) args.addr = addr;
      if (port) args.port = port;
    } else {
      const v = parseValueAtom(cur, true);
      // `fwd to "eth0"` names a device; `dup to X` an address (JSON {"fwd": {"dev"}}, {"dup": {"addr"}}).
      args[kind === 'fwd' && !cur.isWord('device') ? 'dev' : 'addr'] = v;
    }
  }
  if (cur.isWord('device')) {
    cur.next();
    args.dev = parseValueAtom(cur, false);
  }
  return { kind, args, range: tokRange(t, cur.prev()) };
}

/** `synproxy [mss N] [wscale N] [timestamp] [sack-perm]` (flags joined with commas, as in JSON order). */
function parseSynproxy(cur: Cursor): NftStmt {
  const t = cur.next();
  const args: Record<string, number | string> = {};
  const flags: string[] = [];
  for (;;) {
    if (cur.isWord('mss') || cur.isWord('wscale')) {
      const k = cur.next().text;
      args[k] = parseNumber(cur.next().text) ?? NaN;
    } else if (cur.isWord('timestamp') || cur.isWord('sack-perm')) flags.push(cur.next().text);
    else break;
  }
  if (flags.length) args.flags = flags.join(',');
  return { kind: 'synproxy', args, range: tokRange(t, cur.prev()) };
}
