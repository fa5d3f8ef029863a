/**
 * The nftables text front end: `nft list ruleset` output (with or without `-a`, `-s`, `-n`) and `nft -f`
 * scripts, which are one grammar (a listing is a script of `table … { … }` blocks). Scripts add commands
 * (`add|create|insert|replace|delete|destroy|flush …`, as knftables writes kube-proxy's transactions),
 * `define`/`redefine`/`undefine` variables and `include` (reported, not followed: the engine reads no files).
 * Never throws; every problem is a ranged diagnostic.
 */
import type { Range } from '../diagnostics.ts';
import type { NftFamily, NftParseResult, NftSource } from './ast.ts';
import { RulesetBuilder, type MTable, type RulePlace } from './parse-build.ts';
import { Cursor } from './parse-cursor.ts';
import { tokRange, type Tok } from './parse-tokenizer.ts';
import {
  OBJECT_TYPES,
  isFamily,
  newSet,
  parseChainBody,
  parseFlowtable,
  parseObject,
  parseSetBody,
  parseTableBody,
  skipSeparators,
} from './parse-text-blocks.ts';
import { describe, parseSetBlock } from './parse-text-expr.ts';
import { parseRuleBody } from './parse-text-stmt.ts';
import { validateReferences } from './parse-validate.ts';
import { bodyStart, makeRule } from './rule-source.ts';

export const NFT_MAX_BYTES = 128 * 1024 * 1024;

export interface NftParseOptions {
  readonly maxBytes?: number;
  /**
   * Rules keep where they were written and read their statements again when asked (rule-source.ts): for
   * large scripts, whose ASTs would not fit in memory at once. JSON rules always keep their statements.
   */
  readonly compactRules?: boolean;
}

/** `nft list ruleset` text. */
export function parseNftText(text: string, options: NftParseOptions = {}): NftParseResult {
  return parseNftSource(text, 'text', options);
}

/** An `nft -f` script. */
export function parseNftScript(text: string, options: NftParseOptions = {}): NftParseResult {
  return parseNftSource(text, 'script', options);
}

function parseNftSource(text: string, source: NftSource, options: NftParseOptions): NftParseResult {
  const cur = new Cursor(text);
  const max = options.maxBytes ?? NFT_MAX_BYTES;
  if (text.length > max) {
    cur.diag(
      'input-too-large',
      `the ruleset is ${(text.length / 1048576).toFixed(0)} MiB, above the ${(max / 1048576).toFixed(0)} MiB limit`,
      r0(),
    );
    return { ruleset: { source, tables: [] }, diagnostics: cur.diagnostics };
  }
  cur.compactRules = options.compactRules ?? false;
  const b = new RulesetBuilder(cur);
  try {
    topLevel(cur, b);
  } catch (e) {
    // A parser bug must not cost the user the diagnostics so far; report it where the parser stopped.
    cur.diag(
      'syntax-error',
      `internal parser error: ${e instanceof Error ? e.message : String(e)}`,
      tokRange(cur.prev()),
    );
  }
  const ruleset = { source, tables: b.tables };
  validateReferences(ruleset, cur, !b.namesDeleted);
  return { ruleset, diagnostics: cur.diagnostics };
}

function r0(): Range {
  return { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } };
}

function topLevel(cur: Cursor, b: RulesetBuilder): void {
  for (;;) {
    skipSeparators(cur);
    const t = cur.peek();
    if (t.kind === 'eof') return;
    if (t.kind === 'handle') {
      cur.next();
      continue;
    }
    if (t.kind === 'punct' && t.text === '}') {
      cur.diag('unbalanced-braces', 'a "}" without its "{"', tokRange(t));
      cur.next();
      continue;
    }
    if (t.kind !== 'word' || !command(cur, b, t)) {
      cur.diag('unknown-command', `unknown command ${describe(t)}`, tokRange(t));
      cur.next();
      cur.skipToEnd();
    }
  }
}

function command(cur: Cursor, b: RulesetBuilder, t: Tok): boolean {
  switch (t.text) {
    case 'table':
      addObject(cur, b, t, 'table', false);
      return true;
    case 'define':
    case 'redefine':
      define(cur);
      return true;
    case 'undefine':
      cur.next();
      cur.undefine(cur.next().text);
      return true;
    case 'include': {
      cur.next();
      const file = cur.next();
      cur.diag(
        'include-not-followed',
        `include ${file.kind === 'string' ? `"${file.text}"` : file.text} is not followed: the files it names are not read`,
        tokRange(t, file),
        'warning',
      );
      return true;
    }
    case 'add':
    case 'create': {
      cur.next();
      const what = cur.next();
      if (what.text === 'rule') return ruleCommand(cur, b, t, 'add');
      if (what.text === 'element') return elementCommand(cur, b, t, 'add');
      addObject(cur, b, t, what.text, t.text === 'create');
      return true;
    }
    case 'insert':
    case 'replace':
      cur.next();
      if (!cur.isWord('rule')) return false;
      cur.next();
      return ruleCommand(cur, b, t, t.text);
    case 'delete':
    case 'destroy':
      cur.next();
      deleteCommand(cur, b, t, t.text === 'destroy');
      return true;
    case 'flush':
      cur.next();
      flushCommand(cur, b, t);
      return true;
    case 'list':
    case 'reset':
    case 'monitor':
    case 'describe':
    case 'get':
    case 'export':
    case 'import':
    case 'rename':
      cur.next();
      cur.diag('not-modelled', `"${t.text}" changes nothing in the ruleset and is skipped`, tokRange(t), 'info');
      cur.skipToEnd();
      return true;
    default:
      // A bare chain/set/… block at top level is an error in nft too.
      return false;
  }
}

/** `define NAME = VALUE`: the value's tokens to the end of the line, variables in it already substituted. */
function define(cur: Cursor): void {
  const start = cur.next();
  const name = cur.next();
  if (cur.isWord('=')) cur.next();
  else cur.diag('syntax-error', 'expected "=" after the variable name', tokRange(name));
  cur.definingName = name.text;
  const tokens: Tok[] = [];
  let depth = 0;
  for (;;) {
    const t = cur.peek();
    if (t.kind === 'eof' || t.kind === 'handle') break;
    if (depth === 0 && (t.kind === 'nl' || (t.kind === 'punct' && t.text === ';'))) break;
    if (t.kind === 'punct' && t.text === '{') depth++;
    if (t.kind === 'punct' && t.text === '}') depth--;
    if (t.kind === 'nl') {
      cur.next();
      continue;
    }
    tokens.push(cur.next());
  }
  cur.definingName = null;
  if (depth !== 0)
    cur.diag('unbalanced-braces', `the value of "${name.text}" has unbalanced braces`, tokRange(start, cur.prev()));
  cur.define(name.text, { tokens, range: tokRange(start, cur.prev()) });
}

/** `[family] name`: a table's family and name (the family defaults to ip). */
function tableSpec(cur: Cursor): { family: NftFamily; name: string; tok: Tok } {
  const a = cur.peek();
  const bTok = cur.peek(1);
  if (a.kind === 'word' && isFamily(a.text) && (bTok.kind === 'word' || bTok.kind === 'string')) {
    cur.next();
    return { family: a.text, name: cur.next().text, tok: cur.prev() };
  }
  const n = cur.next();
  return { family: 'ip', name: n.text, tok: n };
}

/** `add|create table|chain|set|map|flowtable|counter|quota|… …` and the bare `table … { }` block. */
function addObject(cur: Cursor, b: RulesetBuilder, start: Tok, what: string, create: boolean): void {
  if (what === 'table') {
    if (cur.isWord('table')) cur.next();
    const spec = tableSpec(cur);
    const t = b.addTable(spec.family, spec.name, tokRange(start, spec.tok), create);
    if (cur.isPunct('{')) parseTableBody(cur, b, t);
    return;
  }
  const type = what === 'ct' ? `ct ${cur.next().text}` : what;
  const spec = tableSpec(cur);
  const t = b.needTable(spec.family, spec.name, tokRange(spec.tok));
  const t2: MTable = t ?? b.addTable(spec.family, spec.name, tokRange(spec.tok));
  if (what === 'flowtable') {
    parseFlowtable(cur, b, t2, start);
    return;
  }
  if (OBJECT_TYPES.has(what)) {
    parseObject(cur, b, t2, start, type);
    return;
  }
  if (what === 'chain') {
    const name = cur.next();
    const c = b.addChain(t2, name.text, tokRange(start, name), create);
    if (cur.isPunct('{')) parseChainBody(cur, c, b, t2);
    return;
  }
  if (what === 'set' || what === 'map') {
    const name = cur.next();
    const s = newSet(t2, name.text, tokRange(start, name));
    if (cur.isPunct('{')) parseSetBody(cur, s, what === 'map');
    s.range = { start: s.range.start, end: tokRange(cur.prev()).end };
    b.addSet(t2, s, create);
    return;
  }
  cur.diag('unknown-command', `unknown object type "${what}"`, tokRange(start));
  cur.skipToEnd();
}

/** `add|insert|replace rule [family] table chain [handle N | index N | position N] STATEMENTS`. */
function ruleCommand(cur: Cursor, b: RulesetBuilder, start: Tok, mode: string): boolean {
  const spec = tableSpec(cur);
  const chainTok = cur.next();
  let handle: number | undefined;
  let index: number | undefined;
  if (cur.isWord('handle') || cur.isWord('position')) handle = Number((cur.next(), cur.next()).text);
  else if (cur.isWord('index')) index = Number((cur.next(), cur.next()).text);
  const from = bodyStart(cur);
  const body = parseRuleBody(cur, spec.family);
  const range = tokRange(start, cur.prev());
  const t = b.needTable(spec.family, spec.name, tokRange(spec.tok));
  const c = t && b.needChain(t, chainTok.text, tokRange(chainTok));
  if (!t || !c) return true;
  // The table's and chain's own name strings: one each, not one per command naming them.
  const rule = makeRule(
    cur,
    from,
    {
      family: spec.family,
      table: t.name,
      chain: c.name,
      stmts: body.stmts,
      range,
      comment: body.comment,
      handle: undefined,
    },
    start,
    (kind, name) => (kind === 'chain' ? b.chain(t, name) : b.set(t, name)) !== undefined,
  );
  const place: RulePlace = {
    mode: mode as RulePlace['mode'],
    ...(handle !== undefined ? { handle } : {}),
    ...(index !== undefined ? { index } : {}),
  };
  b.placeRule(c, rule, place, range);
  return true;
}

/** `add|delete element [family] table set { … }`. */
function elementCommand(cur: Cursor, b: RulesetBuilder, start: Tok, mode: 'add' | 'delete'): boolean {
  const spec = tableSpec(cur);
  const setTok = cur.next();
  if (!cur.isPunct('{')) {
    cur.diag('syntax-error', 'expected the elements in braces', tokRange(cur.peek()));
    cur.skipToEnd();
    return true;
  }
  const block = parseSetBlock(cur, true);
  const items = block.kind === 'set' ? block.items : [];
  const range = tokRange(start, cur.prev());
  const t = b.needTable(spec.family, spec.name, tokRange(spec.tok));
  const s = t && b.needSet(t, setTok.text, tokRange(setTok));
  if (!s) return true;
  if (mode === 'add') b.addElements(s, items, range);
  else b.deleteElements(s, items, range);
  return true;
}

function deleteCommand(cur: Cursor, b: RulesetBuilder, start: Tok, quiet: boolean): void {
  const what = cur.next().text;
  if (what === 'element') {
    elementCommand(cur, b, start, 'delete');
    return;
  }
  const spec = tableSpec(cur);
  const range = tokRange(start, spec.tok);
  const t = quiet ? b.table(spec.family, spec.name) : b.needTable(spec.family, spec.name, tokRange(spec.tok));
  if (what === 'table') {
    if (t) b.deleteTable(t);
    return;
  }
  const handleOf = () => (cur.isWord('handle') ? Number((cur.next(), cur.next()).text) : undefined);
  if (what === 'chain') {
    const h = handleOf();
    const name = h === undefined ? cur.next().text : undefined;
    const c =
      t && (h !== undefined ? t.chains.find(x => x.handle === h) : name !== undefined ? b.chain(t, name) : undefined);
    if (t && c) {
      b.deleteChain(t, c);
    } else if (t && !quiet) cur.diag('unknown-chain', `no chain ${name ?? `with handle ${h}`} to delete`, range);
    return;
  }
  if (what === 'rule') {
    const chainName = cur.next().text;
    const h = handleOf();
    const c = t && b.chain(t, chainName);
    const i = c ? c.rules.findIndex(r => r.handle === h) : -1;
    if (c && i >= 0) c.rules.splice(i, 1);
    else if (!quiet) cur.diag('bad-rule-number', `no rule with handle ${h ?? '?'} in chain ${chainName}`, range);
    return;
  }
  if (what === 'set' || what === 'map') {
    const h = handleOf();
    const name = h === undefined ? cur.next().text : undefined;
    const s =
      t && (h !== undefined ? t.sets.find(x => x.handle === h) : name !== undefined ? b.set(t, name) : undefined);
    if (t && s) b.deleteSet(t, s);
    else if (t && !quiet) cur.diag('unknown-set', `no set ${name ?? `with handle ${h}`} to delete`, range);
    return;
  }
  const name = cur.next().text;
  if (t) {
    const type = what === 'ct' ? `ct ${name}` : what;
    const objName = what === 'ct' ? cur.next().text : name;
    t.objects = t.objects.filter(o => !(o.type === type && o.name === objName));
    if (what === 'flowtable') t.flowtables = t.flowtables.filter(f => f.name !== name);
  }
  cur.skipToEnd();
}

function flushCommand(cur: Cursor, b: RulesetBuilder, start: Tok): void {
  const what = cur.next().text;
  if (what === 'ruleset') {
    const fam = cur.peek();
    const only = fam.kind === 'word' && isFamily(fam.text) ? (cur.next(), fam.text) : undefined;
    for (const t of [...b.tables]) if (!only || t.family === only) b.deleteTable(t);
    return;
  }
  const spec = tableSpec(cur);
  const t = b.needTable(spec.family, spec.name, tokRange(spec.tok));
  if (!t) {
    cur.skipToEnd();
    return;
  }
  if (what === 'table') {
    for (const c of t.chains) c.rules.length = 0;
    for (const s of t.sets) s.elements.length = 0;
    return;
  }
  const name = cur.next();
  if (what === 'chain') {
    const c = b.needChain(t, name.text, tokRange(name));
    if (c) c.rules = [];
  } else if (what === 'set' || what === 'map') {
    const s = b.needSet(t, name.text, tokRange(name));
    if (s) s.elements = [];
  } else {
    cur.diag('unknown-command', `flush ${what} is not understood`, tokRange(start, name));
  }
}
