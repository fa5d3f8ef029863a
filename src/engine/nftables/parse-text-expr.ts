/**
 * Expressions of the nftables text grammar (src/parser_bison.y: `primary_expr`, `rhs_expr`,
 * `set_expr`, `concat_expr`…), read into the AST of ast.ts in the shape libnftables' JSON uses.
 */
import type { Range } from '../diagnostics.ts';
import type { NftElem, NftExpr, NftVerdictExpr } from './ast.ts';
import type { Cursor } from './parse-cursor.ts';
import { tokRange, type Tok } from './parse-tokenizer.ts';
import { literal, parseDuration, spanRange } from './parse-values.ts';

/** Payload protocols and their fields (nft(8) PAYLOAD EXPRESSION). */
export const PAYLOAD_FIELDS: ReadonlyMap<string, ReadonlySet<string>> = new Map(
  Object.entries({
    ether: new Set(['daddr', 'saddr', 'type']),
    vlan: new Set(['id', 'dei', 'cfi', 'pcp', 'type']),
    arp: new Set(['htype', 'ptype', 'hlen', 'plen', 'operation', 'saddr', 'daddr']),
    ip: new Set([
      'version',
      'hdrlength',
      'dscp',
      'ecn',
      'length',
      'id',
      'frag-off',
      'ttl',
      'protocol',
      'checksum',
      'saddr',
      'daddr',
    ]),
    icmp: new Set(['type', 'code', 'checksum', 'id', 'sequence', 'gateway', 'mtu']),
    igmp: new Set(['type', 'mrt', 'checksum', 'group']),
    ip6: new Set(['version', 'dscp', 'ecn', 'flowlabel', 'length', 'nexthdr', 'hoplimit', 'saddr', 'daddr']),
    icmpv6: new Set([
      'type',
      'code',
      'checksum',
      'parameter-problem',
      'mtu',
      'id',
      'sequence',
      'max-delay',
      'taddr',
      'daddr',
    ]),
    tcp: new Set(['sport', 'dport', 'sequence', 'ackseq', 'doff', 'reserved', 'flags', 'window', 'checksum', 'urgptr']),
    udp: new Set(['sport', 'dport', 'length', 'checksum']),
    udplite: new Set(['sport', 'dport', 'csumcov', 'checksum']),
    sctp: new Set(['sport', 'dport', 'vtag', 'checksum']),
    dccp: new Set(['sport', 'dport', 'type']),
    ah: new Set(['nexthdr', 'hdrlength', 'reserved', 'spi', 'sequence']),
    esp: new Set(['spi', 'sequence']),
    comp: new Set(['nexthdr', 'flags', 'cpi']),
    th: new Set(['sport', 'dport']),
    gre: new Set(['flags', 'version', 'protocol']),
  }),
);

/** IPv6 extension headers (nft(8) EXTENSION HEADER EXPRESSIONS). */
const EXTHDRS = new Set(['hbh', 'frag', 'dst', 'mh', 'srh']);

/** Meta keys that may be written without `meta` (parser_bison.y `meta_key_unqualified`). */
export const META_UNQUALIFIED = new Set([
  'mark',
  'iif',
  'iifname',
  'iiftype',
  'oif',
  'oifname',
  'oiftype',
  'skuid',
  'skgid',
  'nftrace',
  'rtclassid',
  'ibriport',
  'obriport',
  'ibrname',
  'obrname',
  'pkttype',
  'cpu',
  'iifgroup',
  'oifgroup',
  'cgroup',
  'ipsec',
]);

/** Every meta key (parser_bison.y `meta_key`): the unqualified ones and those only written after `meta`. */
export const META_KEYS: ReadonlySet<string> = new Set([
  ...META_UNQUALIFIED,
  'length',
  'protocol',
  'priority',
  'random',
  'secmark',
  'nfproto',
  'l4proto',
  'time',
  'day',
  'hour',
  'sdif',
  'sdifname',
  'iifkind',
  'oifkind',
  'broute',
  'ibrpvid',
  'ibrvproto',
]);

const CT_DIRS = new Set(['original', 'reply']);
const CT_KEYS = new Set([
  'state',
  'direction',
  'status',
  'mark',
  'expiration',
  'helper',
  'l3proto',
  'protocol',
  'saddr',
  'daddr',
  'proto-src',
  'proto-dst',
  'label',
  'bytes',
  'packets',
  'avgpkt',
  'zone',
  'id',
  'event',
  'secmark',
  'count',
]);

const BINOPS: ReadonlyMap<string, '&' | '|' | '^' | '<<' | '>>'> = new Map(
  Object.entries({
    '&': '&',
    and: '&',
    '|': '|',
    or: '|',
    '^': '^',
    xor: '^',
    '<<': '<<',
    lshift: '<<',
    '>>': '>>',
    rshift: '>>',
  } as const),
);

export const VERDICTS = new Set(['accept', 'drop', 'continue', 'return', 'jump', 'goto', 'queue']);

/** Whether the tokens at the cursor start a left-hand (key) expression rather than a value. */
export function startsKeyExpr(cur: Cursor, unqualified: boolean): boolean {
  const t = cur.peek();
  if (t.kind === 'punct')
    return (
      t.text === '@' && cur.peek(1).kind === 'word' && /^(ll|nh|th|ih)$/.test(cur.peek(1).text) && cur.isPunct(',', 2)
    );
  if (t.kind !== 'word') return false;
  const w = t.text;
  const n = cur.peek(1);
  const nw = n.kind === 'word' ? n.text : '';
  const fields = PAYLOAD_FIELDS.get(w);
  if (fields)
    return (
      fields.has(nw) ||
      (w === 'tcp' && nw === 'option') ||
      (w === 'sctp' && nw === 'chunk') ||
      (w === 'ip' && nw === 'option')
    );
  switch (w) {
    case 'meta':
      return META_KEYS.has(nw);
    case 'ct':
      return CT_KEYS.has(nw) || CT_DIRS.has(nw);
    case 'fib':
    case 'numgen':
    case 'jhash':
    case 'symhash':
    case 'socket':
    case 'osf':
    case 'exthdr':
      return n.kind === 'word';
    case 'rt':
      return n.kind === 'word';
    default:
      if (EXTHDRS.has(w)) return n.kind === 'word';
      return unqualified && META_UNQUALIFIED.has(w);
  }
}

/** A key expression with its binary operations and concatenations: `ip daddr . meta l4proto . th dport`. */
export function parseKeyConcat(cur: Cursor): NftExpr {
  const first = parseKeyBinop(cur);
  if (!cur.isWord('.')) return first;
  const items = [first];
  while (cur.isWord('.')) {
    cur.next();
    items.push(parseKeyBinop(cur));
  }
  return { kind: 'concat', items, range: spanRange(first.range, (items[items.length - 1] as NftExpr).range) };
}

function parseKeyBinop(cur: Cursor): NftExpr {
  let left = parseKey(cur);
  for (;;) {
    const t = cur.peek();
    const op = t.kind === 'word' ? BINOPS.get(t.text) : undefined;
    if (!op) return left;
    cur.next();
    const right = parseValueAtom(cur, true);
    left = { kind: 'binop', op, left, right, range: spanRange(left.range, right.range) };
  }
}

function word(cur: Cursor): Tok {
  return cur.next();
}

function num(t: Tok): number {
  const v = literal(t.text, tokRange(t));
  return v.kind === 'value' && typeof v.value === 'number' ? v.value : NaN;
}

/** One key expression: payload, meta, ct, fib, numgen, hash, rt, socket, exthdr, raw payload. */
export function parseKey(cur: Cursor): NftExpr {
  const t = cur.next();
  const start = t;
  const r = () => tokRange(start, cur.prev());
  if (t.kind === 'punct' && t.text === '@') {
    const base = word(cur).text;
    cur.next();
    const offset = num(word(cur));
    cur.next();
    const len = num(word(cur));
    return { kind: 'rawpayload', base, offset, len, range: r() };
  }
  const w = t.text;
  if (PAYLOAD_FIELDS.has(w)) {
    const f = cur.next().text;
    if ((w === 'tcp' || w === 'ip') && f === 'option') return exthdrOption(cur, `${w} option`, start);
    if (w === 'sctp' && f === 'chunk') return exthdrOption(cur, 'sctp chunk', start);
    return { kind: 'payload', protocol: w, field: f, range: r() };
  }
  switch (w) {
    case 'meta':
      return { kind: 'meta', key: cur.next().text, range: r() };
    case 'ct':
      return parseCt(cur, start);
    case 'fib': {
      const flags = [cur.next().text];
      while (cur.isWord('.')) {
        cur.next();
        flags.push(cur.next().text);
      }
      return { kind: 'fib', flags, result: cur.next().text, range: r() };
    }
    case 'numgen': {
      const mode = cur.next().text === 'inc' ? 'inc' : 'random';
      let mod = NaN;
      let offset = 0;
      if (cur.isWord('mod')) {
        cur.next();
        mod = num(cur.next());
      }
      if (cur.isWord('offset')) {
        cur.next();
        offset = num(cur.next());
      }
      return { kind: 'numgen', mode, mod, offset, range: r() };
    }
    case 'jhash':
    case 'symhash':
      return parseHash(cur, w, start);
    case 'rt': {
      const n = cur.peek().text;
      if (n === 'ip' || n === 'ip6') {
        cur.next();
        return { kind: 'rt', family: n, key: cur.next().text, range: r() };
      }
      if (n === 'nexthop' || n === 'mtu' || n === 'classid' || n === 'ipsec')
        return { kind: 'rt', key: cur.next().text, range: r() };
      return exthdrField(cur, 'rt', start);
    }
    case 'socket':
    case 'osf':
      return { kind: w, key: cur.next().text, range: r() };
    case 'exthdr': {
      const name = cur.next().text;
      const field = cur.isWord('exists') || cur.isWord('missing') || cur.atEnd() ? undefined : cur.next().text;
      return { kind: 'exthdr', family: 'exthdr', name, field, range: r() };
    }
    default:
      if (EXTHDRS.has(w)) return exthdrField(cur, w, start);
      if (META_UNQUALIFIED.has(w)) return { kind: 'meta', key: w, range: r() };
      cur.diag('unknown-expression', `unknown expression "${w}"`, tokRange(t));
      return { kind: 'unknown', text: w, range: r() };
  }
}

function exthdrField(cur: Cursor, name: string, start: Tok): NftExpr {
  const field = cur.next().text;
  return { kind: 'exthdr', family: 'exthdr', name, field, range: tokRange(start, cur.prev()) };
}

function exthdrOption(cur: Cursor, family: string, start: Tok): NftExpr {
  const name = cur.next().text;
  const next = cur.peek();
  const hasField =
    next.kind === 'word' && !['exists', 'missing', 'set', '==', '!='].includes(next.text) && !/^[0-9]/.test(next.text);
  const field = hasField ? cur.next().text : undefined;
  return { kind: 'exthdr', family, name, field, range: tokRange(start, cur.prev()) };
}

function parseCt(cur: Cursor, start: Tok): NftExpr {
  let dir: 'original' | 'reply' | undefined;
  if (CT_DIRS.has(cur.peek().text)) dir = cur.next().text as 'original' | 'reply';
  let key = cur.next().text;
  // libnftables' JSON writes `ct original ip daddr` as key "ip daddr" (src/json.c ct_expr_json).
  if ((key === 'ip' || key === 'ip6') && cur.peek().kind === 'word') key = `${key} ${cur.next().text}`;
  return dir
    ? { kind: 'ct', key, dir, range: tokRange(start, cur.prev()) }
    : { kind: 'ct', key, range: tokRange(start, cur.prev()) };
}

function parseHash(cur: Cursor, mode: 'jhash' | 'symhash', start: Tok): NftExpr {
  const expr = mode === 'jhash' && !cur.isWord('mod') ? parseKeyConcat(cur) : undefined;
  let mod = NaN;
  let seed: number | undefined;
  let offset = 0;
  for (;;) {
    if (cur.isWord('mod')) mod = num((cur.next(), cur.next()));
    else if (cur.isWord('seed')) seed = num((cur.next(), cur.next()));
    else if (cur.isWord('offset')) offset = num((cur.next(), cur.next()));
    else break;
  }
  const range = tokRange(start, cur.prev());
  return { kind: 'hash', mode, ...(expr ? { expr } : {}), mod, ...(seed !== undefined ? { seed } : {}), offset, range };
}

// ---------------------------------------------------------------------------------------------------------
// Values (right-hand sides, set elements)
// ---------------------------------------------------------------------------------------------------------

/**
 * A right-hand side: concatenation of binary expressions of atoms, and in a match (`flags` true) a comma
 * list of flag values (`established,related`).
 */
export function parseValue(cur: Cursor, opts: { keys: boolean; list: boolean }): NftExpr {
  const first = parseValueConcat(cur, opts.keys);
  if (!opts.list || !cur.isPunct(',')) return first;
  const items = [first];
  while (cur.isPunct(',')) {
    cur.next();
    items.push(parseValueConcat(cur, opts.keys));
  }
  return { kind: 'list', items, range: spanRange(first.range, (items[items.length - 1] as NftExpr).range) };
}

export function parseValueConcat(cur: Cursor, keys: boolean): NftExpr {
  const first = parseValueBinop(cur, keys);
  if (!cur.isWord('.')) return maybeMap(cur, first, keys);
  const items = [first];
  while (cur.isWord('.')) {
    cur.next();
    items.push(parseValueBinop(cur, keys));
  }
  return maybeMap(
    cur,
    { kind: 'concat', items, range: spanRange(first.range, (items[items.length - 1] as NftExpr).range) },
    keys,
  );
}

/** `KEY map @m` / `KEY map { … }`: a map lookup (the value of a mangle or NAT statement). */
function maybeMap(cur: Cursor, key: NftExpr, keys: boolean): NftExpr {
  if (!keys || !cur.isWord('map')) return key;
  cur.next();
  const data = parseValueAtom(cur, false);
  return { kind: 'map', key, data, range: spanRange(key.range, data.range) };
}

function parseValueBinop(cur: Cursor, keys: boolean): NftExpr {
  let left = parseValueAtom(cur, keys);
  for (;;) {
    const t = cur.peek();
    const op = t.kind === 'word' ? BINOPS.get(t.text) : undefined;
    if (!op) return left;
    cur.next();
    const right = parseValueAtom(cur, keys);
    const range = spanRange(left.range, right.range);
    // nft prints OR-ed flag constants, `(fin | syn)`, as a list in JSON (a bitmask value).
    if (op === '|' && isConst(left) && isConst(right)) {
      left = { kind: 'list', items: [...(left.kind === 'list' ? left.items : [left]), right], range };
    } else {
      left = { kind: 'binop', op, left, right, range };
    }
  }
}

function isConst(e: NftExpr): boolean {
  return e.kind === 'value' || (e.kind === 'list' && e.items.every(i => i.kind === 'value'));
}

/** One value: a literal, a quoted string, `@set`, `{ anonymous set }`, `( … )`, or a key expression. */
export function parseValueAtom(cur: Cursor, keys: boolean): NftExpr {
  const t = cur.peek();
  if (t.kind === 'punct') {
    if (t.text === '{') return parseSetBlock(cur, keys);
    if (t.text === '@' && !startsKeyExpr(cur, false)) {
      cur.next();
      const n = cur.next();
      return { kind: 'setref', name: n.text, range: tokRange(t, n) };
    }
    if (t.text === '@') return parseKey(cur);
    if (t.text === '(') {
      cur.next();
      const inner = parseValueConcat(cur, keys);
      if (cur.isPunct(')')) cur.next();
      else cur.diag('syntax-error', 'expected ")"', tokRange(cur.peek()));
      return inner;
    }
  }
  if (startsKeyExpr(cur, keys)) return parseKey(cur);
  if (t.kind === 'string') {
    cur.next();
    if (t.unterminated) cur.diag('unterminated-quote', 'string without closing quote', tokRange(t));
    const low: NftExpr = { kind: 'value', value: t.text, range: tokRange(t) };
    // A range of quoted values, `meta time "2025-01-01 00:00:00"-"2026-01-01 00:00:00"`.
    if (cur.isWord('-') && cur.peek(1).kind === 'string') {
      cur.next();
      const h = cur.next();
      return { kind: 'range', low, high: { kind: 'value', value: h.text, range: tokRange(h) }, range: tokRange(t, h) };
    }
    return low;
  }
  if (t.kind === 'word') {
    cur.next();
    if (t.text === 'exists') return { kind: 'value', value: true, range: tokRange(t) };
    if (t.text === 'missing') return { kind: 'value', value: false, range: tokRange(t) };
    return literal(t.text, tokRange(t));
  }
  cur.diag('syntax-error', `expected a value, found ${describe(t)}`, tokRange(t));
  return { kind: 'unknown', text: t.text, range: tokRange(t) };
}

export function describe(t: Tok): string {
  if (t.kind === 'eof') return 'end of input';
  if (t.kind === 'nl') return 'end of line';
  return `"${t.text}"`;
}

/** A verdict value (`accept`, `jump NAME`…) or undefined when the cursor is not at one. */
export function parseVerdictValue(cur: Cursor): NftVerdictExpr | undefined {
  const t = cur.peek();
  if (t.kind !== 'word' || !VERDICTS.has(t.text) || t.text === 'queue') return undefined;
  cur.next();
  const verdict = t.text as NftVerdictExpr['verdict'];
  if (verdict === 'jump' || verdict === 'goto') {
    const target = cur.next();
    return { kind: 'verdict', verdict, target: target.text, range: tokRange(t, target) };
  }
  return { kind: 'verdict', verdict, range: tokRange(t) };
}

/**
 * `{ e1, e2 timeout 1h comment "x", k : v }`: the elements of an anonymous set or map, of `elements = {…}`,
 * or of `add element … { … }`. Newlines inside the braces are whitespace.
 */
export function parseSetBlock(cur: Cursor, keys: boolean): NftExpr {
  const open = cur.next();
  const items = parseElements(cur, keys);
  const close = cur.peek();
  if (close.kind === 'punct' && close.text === '}') cur.next();
  else cur.diag('unbalanced-braces', 'missing "}" of a set', tokRange(open));
  return { kind: 'set', items, range: tokRange(open, cur.prev()) };
}

export function parseElements(cur: Cursor, keys: boolean): NftExpr[] {
  const items: NftExpr[] = [];
  for (;;) {
    cur.skipNewlines();
    const t = cur.peek();
    if (t.kind === 'eof' || (t.kind === 'punct' && t.text === '}')) return items;
    if (t.kind === 'punct' && t.text === ',') {
      cur.next();
      continue;
    }
    const before = cur.peek();
    items.push(parseElement(cur, keys));
    if (cur.peek() === before) {
      // Nothing consumed: report and skip the token so that the loop always advances.
      cur.diag('syntax-error', `unexpected ${describe(before)} in a set`, tokRange(before));
      cur.next();
    }
  }
}

function parseElement(cur: Cursor, keys: boolean): NftExpr {
  const key = withElemOptions(cur, parseValueConcat(cur, keys));
  if (!cur.isWord(':')) return key;
  cur.next();
  const data = parseVerdictValue(cur) ?? withElemOptions(cur, parseValueConcat(cur, false));
  return { kind: 'mapping', key, data, range: spanRange(key.range, data.range) };
}

/** `timeout 1h`, `expires 30m`, `comment "x"`, `counter packets 1 bytes 2` after an element. */
function withElemOptions(cur: Cursor, value: NftExpr): NftExpr {
  let timeout: number | undefined;
  let expires: number | undefined;
  let comment: string | undefined;
  let counter: NftElem['counter'];
  for (;;) {
    if (cur.isWord('timeout')) timeout = parseDuration((cur.next(), cur.next()).text);
    else if (cur.isWord('expires')) expires = parseDuration((cur.next(), cur.next()).text);
    else if (cur.isWord('comment')) comment = (cur.next(), cur.next()).text;
    else if (cur.isWord('counter')) {
      cur.next();
      const c = { packets: 0, bytes: 0 };
      if (cur.isWord('packets')) c.packets = num((cur.next(), cur.next()));
      if (cur.isWord('bytes')) c.bytes = num((cur.next(), cur.next()));
      counter = c;
    } else break;
  }
  if (timeout === undefined && expires === undefined && comment === undefined && counter === undefined) return value;
  const range: Range = spanRange(value.range, tokRange(cur.prev()));
  return {
    kind: 'elem',
    value,
    ...(timeout !== undefined ? { timeout } : {}),
    ...(expires !== undefined ? { expires } : {}),
    ...(comment !== undefined ? { comment } : {}),
    ...(counter ? { counter } : {}),
    range,
  };
}
