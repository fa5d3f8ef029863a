/**
 * The `nft -j list ruleset` front end (libnftables JSON schema, doc/libnftables-json.adoc): an object
 * `{"nftables": [ {"metainfo": …}, {"table": …}, {"chain": …}, {"rule": …}, {"set": …}, {"map": …}, … ]}`.
 * Command objects (`{"add": {…}}`, `{"flush": {"ruleset": null}}` …), which `nft -j -f` accepts, are
 * applied in order like a script's commands. Never throws; every problem is a ranged diagnostic.
 */
import type { Diagnostic, DiagnosticCode, Range, Severity } from '../diagnostics.ts';
import {
  namedPriority,
  type NftChainType,
  type NftExpr,
  type NftFamily,
  type NftHook,
  type NftParseResult,
  type NftPriority,
} from './ast.ts';
import { RulesetBuilder, type MSet, type MTable } from './parse-build.ts';
import { jsonExpr, jsonStmt, num, str, strList, type JsonCtx } from './parse-json-expr.ts';
import { jget, readJson, type JNode } from './parse-json-reader.ts';
import { NFT_MAX_BYTES, type NftParseOptions } from './parse-script.ts';
import { isFamily } from './parse-text-blocks.ts';
import { validateReferences } from './parse-validate.ts';

const MAX_DIAGNOSTICS = 1000;

class Diags implements JsonCtx {
  readonly diagnostics: Diagnostic[] = [];
  diag(code: DiagnosticCode, message: string, range: Range, severity: Severity = 'error'): void {
    if (this.diagnostics.length < MAX_DIAGNOSTICS) this.diagnostics.push({ code, severity, message, range });
  }
}

export function parseNftJson(text: string, options: NftParseOptions = {}): NftParseResult {
  const d = new Diags();
  const empty = { ruleset: { source: 'json' as const, tables: [] }, diagnostics: d.diagnostics };
  const max = options.maxBytes ?? NFT_MAX_BYTES;
  const r0 = { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } };
  if (text.length > max) {
    d.diag(
      'input-too-large',
      `the ruleset is ${(text.length / 1048576).toFixed(0)} MiB, above the ${(max / 1048576).toFixed(0)} MiB limit`,
      r0,
    );
    return empty;
  }
  const { value, error } = readJson(text);
  if (!value) {
    d.diag('bad-json', error?.message ?? 'not JSON', error?.range ?? r0);
    return empty;
  }
  const list = jget(value, 'nftables');
  if (!list || list.t !== 'arr') {
    d.diag('bad-json', 'expected an object {"nftables": [ … ]}', value.r);
    return empty;
  }
  const b = new RulesetBuilder(d);
  for (const item of list.v) {
    try {
      applyItem(item, b, d);
    } catch (e) {
      d.diag('bad-json', `internal parser error: ${e instanceof Error ? e.message : String(e)}`, item.r);
    }
  }
  const ruleset = { source: 'json' as const, tables: b.tables };
  validateReferences(ruleset, d);
  return { ruleset, diagnostics: d.diagnostics };
}

const COMMANDS = new Set(['add', 'create', 'insert', 'replace', 'delete', 'destroy', 'flush']);

function applyItem(item: JNode, b: RulesetBuilder, d: Diags): void {
  if (item.t !== 'obj' || item.v.length !== 1) {
    d.diag('bad-json', 'each entry of "nftables" is an object with one key', item.r);
    return;
  }
  const [k, v] = item.v[0] as [string, JNode];
  if (k === 'metainfo') return;
  if (COMMANDS.has(k)) {
    command(k, v, b, d);
    return;
  }
  addObject(k, v, b, d, false);
}

function family(v: JNode, d: Diags): NftFamily {
  const f = str(jget(v, 'family')) ?? 'ip';
  if (isFamily(f)) return f;
  d.diag('bad-value', `unknown family "${f}"`, (jget(v, 'family') ?? v).r);
  return 'ip';
}

/** The table an object belongs to, created on demand for listing order independence. */
function tableOf(v: JNode, b: RulesetBuilder, d: Diags): MTable {
  const f = family(v, d);
  const name = str(jget(v, 'table')) ?? '';
  return b.table(f, name) ?? b.addTable(f, name, v.r);
}

function addObject(k: string, v: JNode, b: RulesetBuilder, d: Diags, create: boolean): void {
  const handle = num(jget(v, 'handle'));
  const withHandle = <T extends object>(o: T): T => (handle !== undefined ? { ...o, handle } : o);
  switch (k) {
    case 'table': {
      const t = b.addTable(family(v, d), str(jget(v, 'name')) ?? '', v.r, create);
      if (handle !== undefined) t.handle = handle;
      const flags = strList(jget(v, 'flags'));
      if (flags.length) t.flags = flags;
      const comment = str(jget(v, 'comment'));
      if (comment !== undefined) t.comment = comment;
      return;
    }
    case 'chain': {
      const t = tableOf(v, b, d);
      const c = b.addChain(t, str(jget(v, 'name')) ?? '', v.r, create);
      if (handle !== undefined) c.handle = handle;
      const comment = str(jget(v, 'comment'));
      if (comment !== undefined) c.comment = comment;
      const type = str(jget(v, 'type'));
      if (type !== undefined) {
        const policy = str(jget(v, 'policy'));
        const devices = strList(jget(v, 'dev') ?? jget(v, 'devices'));
        c.base = {
          type: type as NftChainType,
          hook: (str(jget(v, 'hook')) ?? '') as NftHook,
          priority: priority(jget(v, 'prio'), t.family),
          ...(policy === 'accept' || policy === 'drop' ? { policy } : {}),
          ...(devices.length ? { devices } : {}),
        };
      }
      return;
    }
    case 'rule': {
      const t = tableOf(v, b, d);
      const chainName = str(jget(v, 'chain')) ?? '';
      const c = b.needChain(t, chainName, v.r);
      if (!c) return;
      const expr = jget(v, 'expr');
      const stmts = expr?.t === 'arr' ? expr.v.map(s => jsonStmt(s, d, t.family)) : [];
      const comment = str(jget(v, 'comment'));
      const rule = withHandle({
        family: t.family,
        table: t.name,
        chain: chainName,
        stmts,
        range: v.r,
        ...(comment !== undefined ? { comment } : {}),
      });
      const index = num(jget(v, 'index'));
      b.placeRule(c, rule, { mode: 'add', ...(index !== undefined ? { index } : {}) }, v.r);
      return;
    }
    case 'set':
    case 'map':
      b.addSet(tableOf(v, b, d), jsonSet(k, v, b, d, handle), create);
      return;
    case 'element': {
      const t = tableOf(v, b, d);
      const s = b.needSet(t, str(jget(v, 'name')) ?? '', v.r);
      if (s) b.addElements(s, elements(jget(v, 'elem'), d), v.r);
      return;
    }
    case 'flowtable': {
      const t = tableOf(v, b, d);
      const devs = strList(jget(v, 'dev'));
      b.addFlowtable(
        t,
        withHandle({
          family: t.family,
          table: t.name,
          name: str(jget(v, 'name')) ?? '',
          hook: str(jget(v, 'hook')) ?? '',
          priority: priority(jget(v, 'prio'), t.family),
          devices: devs,
          flags: strList(jget(v, 'flags')),
          range: v.r,
        }),
      );
      return;
    }
    case 'counter':
    case 'quota':
    case 'limit':
    case 'ct helper':
    case 'ct timeout':
    case 'ct expectation':
    case 'secmark':
    case 'synproxy': {
      const t = tableOf(v, b, d);
      const props: Record<string, string | number | boolean> = {};
      if (v.t === 'obj') {
        for (const [pk, pv] of v.v) {
          if (['family', 'table', 'name', 'handle', 'comment'].includes(pk)) continue;
          if (pv.t === 'str' || pv.t === 'num' || pv.t === 'bool') props[pk] = pv.v;
        }
      }
      const comment = str(jget(v, 'comment'));
      b.addObject(
        t,
        withHandle({
          family: t.family,
          table: t.name,
          type: k,
          name: str(jget(v, 'name')) ?? '',
          props,
          range: v.r,
          ...(comment !== undefined ? { comment } : {}),
        }),
      );
      return;
    }
    default:
      d.diag('unknown-command', `unknown object "${k}"`, v.r);
  }
}

function priority(n: JNode | undefined, fam: NftFamily): NftPriority {
  if (n?.t === 'num') return { value: n.v };
  const s = str(n);
  const named = s !== undefined ? namedPriority(fam, s) : undefined;
  return named !== undefined && s !== undefined ? { value: named, name: s } : { value: 0 };
}

function types(n: JNode | undefined): string[] | undefined {
  if (!n) return undefined;
  if (n.t === 'arr') return n.v.map(x => str(x) ?? '');
  const s = str(n);
  return s === undefined ? undefined : s.split(' . ');
}

function jsonSet(k: string, v: JNode, b: RulesetBuilder, d: Diags, handle: number | undefined): MSet {
  const t = tableOf(v, b, d);
  const s: MSet = {
    family: t.family,
    table: t.name,
    name: str(jget(v, 'name')) ?? '',
    flags: strList(jget(v, 'flags')),
    elements: elements(jget(v, 'elem'), d),
    range: v.r,
  };
  if (handle !== undefined) s.handle = handle;
  const type = types(jget(v, 'type'));
  if (type) s.type = type;
  const map = k === 'map' ? types(jget(v, 'map')) : undefined;
  if (map) s.map = map;
  const timeout = num(jget(v, 'timeout'));
  if (timeout !== undefined) s.timeout = timeout;
  const gc = num(jget(v, 'gc-interval'));
  if (gc !== undefined) s.gcInterval = gc;
  const size = num(jget(v, 'size'));
  if (size !== undefined) s.size = size;
  const policy = str(jget(v, 'policy'));
  if (policy === 'memory' || policy === 'performance') s.policy = policy;
  const comment = str(jget(v, 'comment'));
  if (comment !== undefined) s.comment = comment;
  if (jget(v, 'auto-merge')?.t === 'bool') s.autoMerge = true;
  return s;
}

function elements(n: JNode | undefined, d: Diags): NftExpr[] {
  if (!n) return [];
  if (n.t === 'arr') return n.v.map(x => jsonExpr(x, d, true));
  return [jsonExpr(n, d, true)];
}

/** `{"add": {"rule": …}}`, `{"delete": {"chain": …}}`, `{"flush": {"ruleset": null}}` … */
function command(cmd: string, v: JNode, b: RulesetBuilder, d: Diags): void {
  if (v.t !== 'obj' || v.v.length !== 1) {
    d.diag('bad-json', `"${cmd}" takes an object with one key`, v.r);
    return;
  }
  const [k, o] = v.v[0] as [string, JNode];
  if (cmd === 'add' || cmd === 'create') return addObject(k, o, b, d, cmd === 'create');
  if (cmd === 'flush' && k === 'ruleset') {
    for (const t of [...b.tables]) b.deleteTable(t);
    return;
  }
  const f = family(o, d);
  const t = b.table(f, str(jget(o, k === 'table' ? 'name' : 'table')) ?? '');
  if (!t) {
    if (cmd !== 'destroy') d.diag('unknown-table', `no table for "${cmd} ${k}"`, o.r);
    return;
  }
  const name = str(jget(o, k === 'rule' ? 'chain' : 'name')) ?? '';
  if (cmd === 'insert' || cmd === 'replace') {
    const c = b.needChain(t, name, o.r);
    const expr = jget(o, 'expr');
    if (!c || k !== 'rule') return;
    const stmts = expr?.t === 'arr' ? expr.v.map(s => jsonStmt(s, d, t.family)) : [];
    const handle = num(jget(o, 'handle'));
    const index = num(jget(o, 'index'));
    const rule = { family: t.family, table: t.name, chain: name, stmts, range: o.r };
    b.placeRule(
      c,
      rule,
      { mode: cmd, ...(handle !== undefined ? { handle } : {}), ...(index !== undefined ? { index } : {}) },
      o.r,
    );
    return;
  }
  if (k === 'table') {
    if (cmd === 'flush') for (const c of t.chains) c.rules.length = 0;
    else b.deleteTable(t);
    return;
  }
  if (k === 'chain') {
    const c = b.chain(t, name);
    if (!c) return void (cmd !== 'destroy' && d.diag('unknown-chain', `no chain ${name}`, o.r));
    if (cmd === 'flush') c.rules.length = 0;
    else b.deleteChain(t, c);
    return;
  }
  if (k === 'rule') {
    const c = b.chain(t, name);
    const h = num(jget(o, 'handle'));
    const i = c ? c.rules.findIndex(r => r.handle === h) : -1;
    if (c && i >= 0) c.rules.splice(i, 1);
    else if (cmd !== 'destroy') d.diag('bad-rule-number', `no rule with handle ${h ?? '?'} in chain ${name}`, o.r);
    return;
  }
  if (k === 'set' || k === 'map' || k === 'element') {
    const s = b.set(t, name);
    if (!s) return void (cmd !== 'destroy' && d.diag('unknown-set', `no set ${name}`, o.r));
    if (k === 'element') b.deleteElements(s, elements(jget(o, 'elem'), d), o.r);
    else if (cmd === 'flush') s.elements.length = 0;
    else b.deleteSet(t, s);
    return;
  }
  t.objects = t.objects.filter(x => !(x.type === k && x.name === name));
  if (k === 'flowtable') t.flowtables = t.flowtables.filter(x => x.name !== name);
}
