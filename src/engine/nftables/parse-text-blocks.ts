/**
 * The bodies of `table … { }`, `chain … { }`, `set/map … { }`, `flowtable … { }` and named objects in
 * nftables text, as `nft list ruleset` prints them and scripts write them (src/parser_bison.y
 * `table_block`, `chain_block`, `set_block`, `map_block`, `flowtable_block`).
 */
import type { Range } from '../diagnostics.ts';
import {
  NFT_FAMILIES,
  namedPriority,
  type NftChainType,
  type NftExpr,
  type NftFamily,
  type NftHook,
  type NftPriority,
} from './ast.ts';
import type { MChain, MSet, MTable, RulesetBuilder } from './parse-build.ts';
import type { Cursor } from './parse-cursor.ts';
import { tokRange, type Tok } from './parse-tokenizer.ts';
import { describe, parseKeyConcat, parseSetBlock } from './parse-text-expr.ts';
import { parseRuleBody } from './parse-text-stmt.ts';
import { bodyStart, makeRule } from './rule-source.ts';
import { parseDuration, parseNumber } from './parse-values.ts';

export function isFamily(w: string): w is NftFamily {
  return (NFT_FAMILIES as readonly string[]).includes(w);
}

/** Skips newlines and `;` between the entries of a block. */
export function skipSeparators(cur: Cursor): void {
  while (cur.peek().kind === 'nl' || cur.isPunct(';')) cur.next();
}

/** After `{`: the handle comment `nft -a` prints there, if any. */
function openHandle(cur: Cursor): number | undefined {
  return cur.peek().kind === 'handle' ? Number(cur.next().text) : undefined;
}

/**
 * Reads block entries until the matching `}`; `entry` handles one entry (returns false if it did not
 * recognise it, which is reported and skipped). Returns false when the input ended before `}`.
 */
function block(cur: Cursor, open: Tok, what: string, entry: (t: Tok) => boolean): boolean {
  for (;;) {
    skipSeparators(cur);
    const t = cur.peek();
    if (t.kind === 'eof') {
      cur.diag('unbalanced-braces', `the ${what} opened here has no closing "}"`, tokRange(open));
      return false;
    }
    if (t.kind === 'punct' && t.text === '}') {
      cur.next();
      return true;
    }
    if (t.kind === 'handle') {
      cur.next();
      continue;
    }
    if (!entry(t)) {
      cur.diag('syntax-error', `unexpected ${describe(t)} in ${what}`, tokRange(t));
      cur.next();
      cur.skipToEnd();
    }
  }
}

export function parseTableBody(cur: Cursor, b: RulesetBuilder, t: MTable): void {
  const open = cur.next();
  const handle = openHandle(cur);
  if (handle !== undefined) t.handle = handle;
  block(cur, open, `table ${t.name}`, tok => {
    if (tok.kind !== 'word') return false;
    switch (tok.text) {
      case 'chain': {
        cur.next();
        const name = cur.next();
        const c = b.addChain(t, name.text, tokRange(tok, name));
        if (cur.isPunct('{')) parseChainBody(cur, c, b, t);
        c.range = { start: c.range.start, end: tokRange(cur.prev()).end };
        return true;
      }
      case 'set':
      case 'map': {
        cur.next();
        const name = cur.next();
        const s = newSet(t, name.text, tokRange(tok, name));
        if (cur.isPunct('{')) parseSetBody(cur, s, tok.text === 'map');
        s.range = { start: s.range.start, end: tokRange(cur.prev()).end };
        b.addSet(t, s);
        return true;
      }
      case 'flowtable':
        cur.next();
        parseFlowtable(cur, b, t, tok);
        return true;
      case 'flags':
        cur.next();
        t.flags = readList(cur);
        return true;
      case 'comment':
        cur.next();
        t.comment = cur.next().text;
        return true;
      default:
        if (OBJECT_TYPES.has(tok.text)) {
          cur.next();
          const type = tok.text === 'ct' ? `ct ${cur.next().text}` : tok.text;
          parseObject(cur, b, t, tok, type);
          return true;
        }
        return false;
    }
  });
}

export function newSet(t: MTable, name: string, range: Range): MSet {
  return { family: t.family, table: t.name, name, flags: [], elements: [], range };
}

/** `a,b,c` after `flags`. */
export function readList(cur: Cursor): string[] {
  const out = [cur.next().text];
  while (cur.isPunct(',')) {
    cur.next();
    out.push(cur.next().text);
  }
  return out;
}

export function parseChainBody(cur: Cursor, c: MChain, b: RulesetBuilder, t: MTable): void {
  const open = cur.next();
  const handle = openHandle(cur);
  if (handle !== undefined) c.handle = handle;
  block(cur, open, `chain ${c.name}`, tok => {
    if (tok.kind === 'word' && tok.text === 'type' && cur.peek(1).kind === 'word' && cur.isWord('hook', 2)) {
      parseBaseChain(cur, c);
      return true;
    }
    if (tok.kind === 'word' && tok.text === 'policy' && !c.rules.length) {
      cur.next();
      const p = cur.next().text;
      if (c.base && (p === 'accept' || p === 'drop')) c.base = { ...c.base, policy: p };
      else cur.diag('bad-value', `policy must be accept or drop on a base chain, not "${p}"`, tokRange(cur.prev()));
      return true;
    }
    if (tok.kind === 'word' && tok.text === 'comment' && cur.peek(1).kind === 'string' && atLineEnd(cur, 2)) {
      cur.next();
      c.comment = cur.next().text;
      return true;
    }
    if (tok.kind === 'word' && (tok.text === 'devices' || tok.text === 'device')) {
      cur.next();
      const devices = readDevices(cur);
      if (c.base) c.base = { ...c.base, devices };
      return true;
    }
    const from = bodyStart(cur);
    const r = parseRuleBody(cur, c.family);
    const range = tokRange(tok, cur.prev());
    c.rules.push(
      makeRule(
        cur,
        from,
        {
          family: c.family,
          table: c.table,
          chain: c.name,
          stmts: r.stmts,
          range,
          comment: r.comment,
          handle: r.handle,
        },
        tok,
        (kind, name) => (kind === 'chain' ? b.chain(t, name) : b.set(t, name)) !== undefined,
      ),
    );
    return true;
  });
}

function atLineEnd(cur: Cursor, k: number): boolean {
  const t = cur.peek(k);
  return (
    t.kind === 'nl' ||
    t.kind === 'eof' ||
    t.kind === 'handle' ||
    (t.kind === 'punct' && (t.text === ';' || t.text === '}'))
  );
}

const CHAIN_TYPES = new Set(['filter', 'nat', 'route']);
const HOOKS = new Set(['prerouting', 'input', 'forward', 'output', 'postrouting', 'ingress', 'egress']);

/** `type filter hook input [device eth0] priority filter - 10; [policy drop;]` */
function parseBaseChain(cur: Cursor, c: MChain): void {
  const start = cur.next();
  const type = cur.next();
  cur.next();
  const hook = cur.next();
  if (!CHAIN_TYPES.has(type.text)) cur.diag('bad-value', `unknown chain type "${type.text}"`, tokRange(type));
  if (!HOOKS.has(hook.text)) cur.diag('bad-value', `unknown hook "${hook.text}"`, tokRange(hook));
  let devices: string[] | undefined;
  if (cur.isWord('device') || cur.isWord('devices')) {
    cur.next();
    devices = readDevices(cur);
  }
  let priority: NftPriority = { value: 0 };
  if (cur.isWord('priority')) {
    cur.next();
    priority = parsePriority(cur, c.family);
  } else {
    cur.diag('missing-argument', 'a base chain needs a priority', tokRange(start, cur.prev()));
  }
  // The policy is accept until a `policy` entry says otherwise (nft lists it as `policy accept;`).
  c.base = {
    type: type.text as NftChainType,
    hook: hook.text as NftHook,
    priority,
    policy: 'accept',
    ...(devices ? { devices } : {}),
  };
}

function readDevices(cur: Cursor): string[] {
  if (cur.isWord('=')) cur.next();
  if (cur.isPunct('{')) {
    const set = parseSetBlock(cur, false);
    return set.kind === 'set' ? set.items.map(i => (i.kind === 'value' ? String(i.value) : '')) : [];
  }
  return [cur.next().text];
}

/** `-110`, `dstnat`, `filter - 10`, `mangle + 5`, `$var` already substituted (nft(8) "priority"). */
export function parsePriority(cur: Cursor, family: NftFamily): NftPriority {
  const t = cur.next();
  const n = Number(t.text);
  if (/^[+-]?[0-9]+$/.test(t.text)) return { value: n };
  const base = namedPriority(family, t.text);
  if (base === undefined) {
    cur.diag('bad-value', `unknown priority "${t.text}"`, tokRange(t));
    return { value: 0, name: t.text };
  }
  let offset = 0;
  if ((cur.isWord('+') || cur.isWord('-')) && /^[0-9]+$/.test(cur.peek(1).text)) {
    const sign = cur.next().text === '-' ? -1 : 1;
    offset = sign * Number(cur.next().text);
  } else if (/^[+-][0-9]+$/.test(cur.peek().text)) {
    offset = Number(cur.next().text);
  }
  return offset ? { value: base + offset, name: t.text, offset } : { value: base, name: t.text };
}

/** The body of a set or map: type/typeof, flags, timeout, size, policy, elements… */
export function parseSetBody(cur: Cursor, s: MSet, isMap: boolean): void {
  const open = cur.next();
  const handle = openHandle(cur);
  if (handle !== undefined) s.handle = handle;
  block(cur, open, `${isMap ? 'map' : 'set'} ${s.name}`, tok => {
    if (tok.kind !== 'word') return false;
    cur.next();
    switch (tok.text) {
      case 'type': {
        s.type = readTypes(cur);
        if (cur.isWord(':')) {
          cur.next();
          s.map = readTypes(cur);
        }
        return true;
      }
      case 'typeof': {
        s.typeofKey = flatten(parseKeyConcat(cur));
        const derived = s.typeofKey.map(typeOfExpr);
        if (derived.every(x => x)) s.type = derived as string[];
        if (cur.isWord(':')) {
          cur.next();
          if (cur.isWord('verdict')) s.map = [cur.next().text];
          else {
            s.typeofData = flatten(parseKeyConcat(cur));
            const d = s.typeofData.map(typeOfExpr);
            if (d.every(x => x)) s.map = d as string[];
          }
        }
        return true;
      }
      case 'flags':
        s.flags = readList(cur);
        return true;
      case 'timeout':
        s.timeout = parseDuration(cur.next().text);
        return true;
      case 'gc-interval':
        s.gcInterval = parseDuration(cur.next().text);
        return true;
      case 'size':
        s.size = parseNumber(cur.next().text);
        return true;
      case 'policy':
        s.policy = cur.next().text === 'memory' ? 'memory' : 'performance';
        return true;
      case 'auto-merge':
        s.autoMerge = true;
        return true;
      case 'counter':
        s.counter = true;
        return true;
      case 'comment':
        s.comment = cur.next().text;
        return true;
      case 'elements': {
        if (cur.isWord('=')) cur.next();
        if (!cur.isPunct('{')) return false;
        const set = parseSetBlock(cur, true);
        if (set.kind === 'set') for (const e of set.items) s.elements.push(e);
        return true;
      }
      default:
        return false;
    }
  });
}

function readTypes(cur: Cursor): string[] {
  const out = [cur.next().text];
  while (cur.isWord('.')) {
    cur.next();
    out.push(cur.next().text);
  }
  return out;
}

function flatten(e: NftExpr): NftExpr[] {
  return e.kind === 'concat' ? [...e.items] : [e];
}

const META_TYPES: ReadonlyMap<string, string> = new Map(
  Object.entries({
    iifname: 'ifname',
    oifname: 'ifname',
    iif: 'iface_index',
    oif: 'iface_index',
    mark: 'mark',
    l4proto: 'inet_proto',
    nfproto: 'nf_proto',
    skuid: 'uid',
    skgid: 'gid',
    pkttype: 'pkt_type',
  }),
);
const CT_TYPES: ReadonlyMap<string, string> = new Map(
  Object.entries({ mark: 'mark', state: 'ct_state', status: 'ct_status', zone: 'integer' }),
);

/** The data type nft derives from a `typeof` expression (what its JSON prints as `type`). */
function typeOfExpr(e: NftExpr): string | undefined {
  if (e.kind === 'payload') {
    if (e.field === 'saddr' || e.field === 'daddr') {
      if (e.protocol === 'ip') return 'ipv4_addr';
      if (e.protocol === 'ip6') return 'ipv6_addr';
      if (e.protocol === 'ether') return 'ether_addr';
    }
    if (e.field === 'sport' || e.field === 'dport') return 'inet_service';
    if ((e.protocol === 'ip' && e.field === 'protocol') || (e.protocol === 'ip6' && e.field === 'nexthdr'))
      return 'inet_proto';
    if (e.protocol === 'icmp' && e.field === 'type') return 'icmp_type';
    if (e.protocol === 'icmpv6' && e.field === 'type') return 'icmpv6_type';
    return undefined;
  }
  if (e.kind === 'meta') {
    return META_TYPES.get(e.key);
  }
  if (e.kind === 'ct') return CT_TYPES.get(e.key);
  return undefined;
}

export function parseFlowtable(cur: Cursor, b: RulesetBuilder, t: MTable, start: Tok): void {
  const name = cur.next();
  let hook = '';
  let priority: NftPriority = { value: 0 };
  let devices: string[] = [];
  let flags: string[] = [];
  let handle: number | undefined;
  if (cur.isPunct('{')) {
    const open = cur.next();
    handle = openHandle(cur);
    block(cur, open, `flowtable ${name.text}`, tok => {
      if (tok.kind !== 'word') return false;
      cur.next();
      if (tok.text === 'hook') {
        hook = cur.next().text;
        if (cur.isWord('priority')) {
          cur.next();
          priority = parsePriority(cur, t.family);
        }
      } else if (tok.text === 'devices') devices = readDevices(cur);
      else if (tok.text === 'flags') flags = readList(cur);
      else if (tok.text === 'counter') flags = [...flags, 'counter'];
      else return false;
      return true;
    });
  }
  const range = tokRange(start, cur.prev());
  b.addFlowtable(t, {
    family: t.family,
    table: t.name,
    name: name.text,
    hook,
    priority,
    devices,
    flags,
    range,
    ...(handle !== undefined ? { handle } : {}),
  });
}

export const OBJECT_TYPES = new Set(['counter', 'quota', 'limit', 'ct', 'secmark', 'synproxy']);

/**
 * Named stateful objects, after their keyword: `counter NAME { packets 0 bytes 0 }`, `quota NAME { … }`,
 * `ct helper NAME { … }`.
 */
export function parseObject(cur: Cursor, b: RulesetBuilder, t: MTable, start: Tok, type: string): void {
  const name = cur.next();
  const props: Record<string, string | number | boolean> = {};
  let comment: string | undefined;
  let handle: number | undefined;
  if (cur.isPunct('{')) {
    const open = cur.next();
    handle = openHandle(cur);
    block(cur, open, `${type} ${name.text}`, tok => {
      if (tok.kind !== 'word' && tok.kind !== 'string') return false;
      cur.next();
      // Bodies are `key value` pairs (`packets 0 bytes 0`, `type "ftp" protocol tcp`); a lone key is a flag.
      let key = tok.text;
      for (;;) {
        if (key === 'comment') comment = cur.next().text;
        else if (cur.atEnd()) props[key] = true;
        else {
          const v = cur.next().text;
          props[key] = parseNumber(v) ?? v;
        }
        if (cur.atEnd()) return true;
        key = cur.next().text;
      }
    });
  }
  const range = tokRange(start, cur.prev());
  b.addObject(t, {
    family: t.family,
    table: t.name,
    type,
    name: name.text,
    props,
    range,
    ...(comment !== undefined ? { comment } : {}),
    ...(handle !== undefined ? { handle } : {}),
  });
}
