/**
 * The ruleset under construction, shared by the three nftables front ends. A script's commands are applied
 * in order, as `nft -f` applies them to an empty ruleset (nft(8) "RULESET" / "TABLES" … commands): `add`
 * creates or merges, `create` fails on an existing object, `insert` prepends, `replace` swaps a rule by
 * handle, `delete` removes, `flush` empties. A listing (`nft list ruleset`, JSON) is the same as a script
 * that only adds.
 */
import type { Range } from '../diagnostics.ts';
import type {
  NftChain,
  NftExpr,
  NftFamily,
  NftFlowtable,
  NftLog,
  NftObject,
  NftRule,
  NftSet,
  NftTable,
} from './ast.ts';
import type { Cursor } from './parse-cursor.ts';
import { SourceRule } from './rule-source.ts';

/** Elements kept per set: beyond this a set is cut short with a diagnostic (bounded memory and time). */
export const MAX_SET_ELEMENTS = 1_000_000;

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
export type MTable = Mutable<NftTable>;
export type MChain = Mutable<NftChain>;
export type MSet = Mutable<NftSet>;

type Diag = Pick<Cursor, 'diag'>;

export class RulesetBuilder {
  readonly tables: MTable[] = [];
  // Lookups are per table (no key strings built per lookup: a large script looks chains up ~10^6 times).
  private readonly index = new Map<string, MTable>();
  private readonly chainIndex = new WeakMap<NftTable, Map<string, MChain>>();
  private readonly setIndex = new WeakMap<NftTable, Map<string, MSet>>();
  private readonly elementCut = new Set<MSet>();
  /** A chain or set was deleted: rules read before may name what is gone (parse-validate.ts `exact`). */
  namesDeleted = false;

  constructor(private readonly d: Diag) {}

  table(family: NftFamily, name: string): MTable | undefined {
    return this.index.get(`${family} ${name}`);
  }

  /** `add table` (merge) or `create table` (must not exist). */
  addTable(family: NftFamily, name: string, range: Range, create = false): MTable {
    const have = this.table(family, name);
    if (have) {
      if (create) this.d.diag('duplicate-object', `table ${family} ${name} already exists`, range);
      return have;
    }
    const t: MTable = { family, name, flags: [], chains: [], sets: [], flowtables: [], objects: [], range };
    this.tables.push(t);
    this.index.set(`${family} ${name}`, t);
    return t;
  }

  needTable(family: NftFamily, name: string, range: Range): MTable | undefined {
    const t = this.table(family, name);
    if (!t) this.d.diag('unknown-table', `no table ${family} ${name}`, range);
    return t;
  }

  chain(t: NftTable, name: string): MChain | undefined {
    return this.chainIndex.get(t)?.get(name);
  }

  addChain(t: MTable, name: string, range: Range, create = false): MChain {
    const have = this.chain(t, name);
    if (have) {
      if (create) this.d.diag('duplicate-object', `chain ${name} already exists in table ${t.family} ${t.name}`, range);
      return have;
    }
    const c: MChain = { family: t.family, table: t.name, name, rules: [], range };
    t.chains.push(c);
    this.chainsOf(t).set(name, c);
    return c;
  }

  needChain(t: MTable, name: string, range: Range): MChain | undefined {
    const c = this.chain(t, name);
    if (!c) this.d.diag('unknown-chain', `no chain ${name} in table ${t.family} ${t.name}`, range);
    return c;
  }

  deleteChain(t: MTable, c: MChain): void {
    this.namesDeleted = true;
    t.chains.splice(t.chains.indexOf(c), 1);
    this.chainsOf(t).delete(c.name);
  }

  deleteTable(t: MTable): void {
    this.tables.splice(this.tables.indexOf(t), 1);
    this.index.delete(`${t.family} ${t.name}`);
    this.chainIndex.delete(t);
    this.setIndex.delete(t);
  }

  set(t: NftTable, name: string): MSet | undefined {
    return this.setIndex.get(t)?.get(name);
  }

  addSet(t: MTable, s: MSet, create = false): MSet {
    const have = this.set(t, s.name);
    if (have) {
      if (create)
        this.d.diag('duplicate-object', `set ${s.name} already exists in table ${t.family} ${t.name}`, s.range);
      this.addElements(have, s.elements, s.range);
      return have;
    }
    const elements = s.elements;
    s.elements = [];
    t.sets.push(s);
    this.setsOf(t).set(s.name, s);
    this.addElements(s, elements, s.range);
    return s;
  }

  needSet(t: MTable, name: string, range: Range): MSet | undefined {
    const s = this.set(t, name);
    if (!s) this.d.diag('unknown-set', `no set or map ${name} in table ${t.family} ${t.name}`, range);
    return s;
  }

  deleteSet(t: MTable, s: MSet): void {
    this.namesDeleted = true;
    t.sets.splice(t.sets.indexOf(s), 1);
    this.setsOf(t).delete(s.name);
  }

  private chainsOf(t: NftTable): Map<string, MChain> {
    let m = this.chainIndex.get(t);
    if (!m) this.chainIndex.set(t, (m = new Map()));
    return m;
  }

  private setsOf(t: NftTable): Map<string, MSet> {
    let m = this.setIndex.get(t);
    if (!m) this.setIndex.set(t, (m = new Map()));
    return m;
  }

  addElements(s: MSet, items: readonly NftExpr[], range: Range): void {
    for (const e of items) {
      if (s.elements.length >= MAX_SET_ELEMENTS) {
        if (!this.elementCut.has(s)) {
          this.elementCut.add(s);
          this.d.diag(
            'input-too-large',
            `set ${s.name} has more than ${MAX_SET_ELEMENTS} elements; the rest are not read`,
            range,
          );
        }
        return;
      }
      s.elements.push(e);
    }
  }

  /** `delete element`: removes the elements equal (ignoring positions) to the given ones. */
  deleteElements(s: MSet, items: readonly NftExpr[], range: Range): void {
    const gone = new Set(items.map(e => elementKey(e)));
    const before = s.elements.length;
    s.elements = s.elements.filter(e => !gone.has(elementKey(e)));
    if (before - s.elements.length < gone.size)
      this.d.diag('bad-value', `some elements to delete are not in set ${s.name}`, range, 'warning');
  }

  addFlowtable(t: MTable, f: NftFlowtable): void {
    t.flowtables.push(f);
  }

  addObject(t: MTable, o: NftObject): void {
    const i = t.objects.findIndex(x => x.type === o.type && x.name === o.name);
    if (i >= 0) t.objects[i] = o;
    else t.objects.push(o);
  }

  /** Places a rule: at the end, at the start (`insert`), or after/before the rule with a handle or index. */
  placeRule(c: MChain, rule: NftRule, where: RulePlace, range: Range): void {
    let at: number;
    if (where.handle !== undefined || where.index !== undefined) {
      const i = where.handle !== undefined ? c.rules.findIndex(r => r.handle === where.handle) : (where.index ?? -1);
      if (i < 0 || i >= c.rules.length) {
        this.d.diag(
          'bad-rule-number',
          `no rule ${where.handle !== undefined ? `with handle ${where.handle}` : `at index ${where.index}`} in chain ${c.name}`,
          range,
        );
        return;
      }
      if (where.mode === 'replace') {
        // The replaced rule keeps its handle (checked with nft 1.0.6: `nft -a list` shows the same handle).
        const old = c.rules[i] as NftRule;
        c.rules[i] =
          old.handle === undefined
            ? rule
            : rule instanceof SourceRule
              ? rule.withHandle(old.handle)
              : { ...rule, handle: old.handle };
        return;
      }
      at = where.mode === 'insert' ? i : i + 1;
    } else {
      if (where.mode === 'replace') {
        this.d.diag('missing-argument', 'replace rule needs a handle', range);
        return;
      }
      at = where.mode === 'insert' ? 0 : c.rules.length;
    }
    c.rules.splice(at, 0, rule);
  }
}

export interface RulePlace {
  readonly mode: 'add' | 'insert' | 'replace';
  readonly handle?: number;
  readonly index?: number;
}

/** A position-free key of an element, to find it again (`delete element`). */
export function elementKey(e: NftExpr): string {
  const v = e.kind === 'mapping' ? e.key : e;
  const inner = v.kind === 'elem' ? v.value : v;
  return JSON.stringify(inner, (k, x: unknown) => (k === 'range' ? undefined : x));
}

/** A `log` statement from the fields either syntax gave; absent fields stay absent, as nft prints them. */
export function logStatement(
  f: { prefix?: string; level?: string; group?: number; snaplen?: number; queueThreshold?: number },
  flags: readonly string[],
  range: Range,
): NftLog {
  const present = Object.fromEntries(Object.entries(f).filter(([, v]) => v !== undefined));
  return { kind: 'log', ...present, flags, range };
}
