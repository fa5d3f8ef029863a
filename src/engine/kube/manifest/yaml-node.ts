/**
 * A read-only view of a YAML node that remembers where it stands in its file, so every value read from a
 * manifest can be pointed at by CodeLens, hovers and diagnostics. Alias expansion is bounded per document:
 * an "alias bomb" (aliases of aliases of lists) stops with a diagnostic instead of exhausting memory.
 * The same budget also stops a document that is simply large; the reads made through aliases are counted
 * apart so the diagnostic can name the true cause.
 */
import { type LineCounter, type Node, isAlias, isMap, isScalar, isSeq, visit, type Document } from 'yaml';
import type { Range } from '../../diagnostics.ts';
import type { FastNode } from './fast-yaml.ts';

/** A node from the `yaml` package or from the fast reader (fast-yaml.ts); both carry `range`. */
type AnyNode = Node | FastNode;
type MapLike = { items: { key: unknown; value: unknown }[] };

const fastKind = (n: unknown): string | undefined => (n as { fast?: string } | null)?.fast;
const isMapNode = (n: unknown): n is MapLike => {
  const k = fastKind(n);
  return k !== undefined ? k === 'map' : isMap(n);
};
const isSeqNode = (n: unknown): n is { items: unknown[] } => {
  const k = fastKind(n);
  return k !== undefined ? k === 'seq' : isSeq(n);
};
const isScalarNode = (n: unknown): n is { value: unknown } => {
  const k = fastKind(n);
  return k !== undefined ? k === 'scalar' : isScalar(n);
};
/** A key's value: a scalar's, or the key node itself (a collection used as a key). */
const keyValue = (k: unknown): unknown => (isScalarNode(k) ? k.value : k);

export interface Loc {
  readonly file: string;
  readonly range: Range;
}

export class YamlContext {
  visits = 0;
  /** Of `visits`, those made inside a node reached through an alias. */
  aliasVisits = 0;
  /** The furthest source offset read, for saying where reading stopped. */
  furthest = 0;
  exhausted = false;
  constructor(
    readonly file: string,
    readonly lines: Pick<LineCounter, 'linePos'>,
    /** The `yaml` document, for resolving aliases; null for a document the fast reader read (no aliases). */
    readonly doc: Document | null,
    readonly budget = 100_000,
  ) {}

  loc(node: AnyNode | null | undefined, fallback?: Loc): Loc {
    const r = node?.range;
    if (!r)
      return (
        fallback ?? { file: this.file, range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } } }
      );
    return { file: this.file, range: this.range(r[0], r[1]) };
  }

  /** Anchors by name, in document order: `yaml`'s own `Alias.resolve` searches the whole document per alias. */
  private anchors: Map<string, { start: number; node: unknown }[]> | null = null;

  /**
   * The node an alias stands for: the last anchor of that name before the alias (YAML 1.2 §3.2.2.2), from
   * an index built once per document, so n aliases cost n lookups instead of n document walks.
   */
  resolveAlias(alias: { source: string; range?: [number, number, number] | null }): unknown {
    if (!this.doc) return null;
    if (!this.anchors) {
      const index = new Map<string, { start: number; node: unknown }[]>();
      visit(this.doc, (_key, node) => {
        const n = node as { anchor?: string; range?: [number, number, number] };
        if (n && typeof n.anchor === 'string') {
          const list = index.get(n.anchor) ?? [];
          list.push({ start: n.range?.[0] ?? 0, node });
          index.set(n.anchor, list);
        }
      });
      this.anchors = index;
    }
    const list = this.anchors.get(alias.source);
    if (!list) return null;
    const at = alias.range?.[0] ?? Infinity;
    // The list is in document order: binary search for the last anchor before the alias.
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (list[mid]!.start < at) lo = mid + 1;
      else hi = mid;
    }
    return lo > 0 ? list[lo - 1]!.node : null;
  }

  range(start: number, end: number): Range {
    const a = this.lines.linePos(start);
    const b = this.lines.linePos(end);
    return { start: { line: a.line - 1, character: a.col - 1 }, end: { line: b.line - 1, character: b.col - 1 } };
  }
}

/** A node plus its context. All accessors return null for absent or mistyped values; they never throw. */
export class Y {
  constructor(
    readonly node: AnyNode | null,
    readonly ctx: YamlContext,
    readonly path: string,
    /** Whether this node was reached through an alias (its own or an ancestor's). */
    readonly viaAlias = false,
  ) {}

  /** Set by `resolved()`: whether the node it returned was reached through an alias; children inherit it. */
  private through = false;

  private resolved(): AnyNode | null {
    let n: unknown = this.node;
    let hops = 0;
    this.through = this.viaAlias;
    while (fastKind(n) === undefined && isAlias(n)) {
      this.through = true;
      if (++this.ctx.visits > this.ctx.budget || ++hops > 50) {
        this.ctx.exhausted = true;
        return null;
      }
      this.ctx.aliasVisits++;
      n = this.ctx.resolveAlias(n as { source: string; range?: [number, number, number] | null }) ?? null;
    }
    if (++this.ctx.visits > this.ctx.budget) {
      this.ctx.exhausted = true;
      return null;
    }
    if (this.through) this.ctx.aliasVisits++;
    // (The fast reader's documents have no budget: nothing to say where reading stopped.)
    const start = this.ctx.budget === Infinity ? undefined : (n as AnyNode | null)?.range?.[0];
    if (start !== undefined && start > this.ctx.furthest) this.ctx.furthest = start;
    return (n as AnyNode | null) ?? null;
  }

  get loc(): Loc {
    return this.ctx.loc(this.node);
  }

  get present(): boolean {
    const n = this.resolved();
    return n !== null && !(isScalarNode(n) && n.value === null);
  }

  get(key: string): Y {
    const n = this.resolved();
    if (isMapNode(n)) {
      for (const pair of n.items) {
        if (keyValue(pair.key) === key)
          return new Y((pair.value as AnyNode | null) ?? null, this.ctx, `${this.path}.${key}`, this.through);
      }
    }
    return new Y(null, this.ctx, `${this.path}.${key}`, this.through);
  }

  /** The key node's location, for pointing at `type:` rather than its value. */
  keyLoc(key: string): Loc | null {
    const n = this.resolved();
    if (!isMapNode(n)) return null;
    for (const pair of n.items) {
      const k = isScalarNode(pair.key) ? pair.key.value : null;
      if (k === key) return this.ctx.loc(pair.key as AnyNode);
    }
    return null;
  }

  isMap(): boolean {
    return isMapNode(this.resolved());
  }

  isSeq(): boolean {
    return isSeqNode(this.resolved());
  }

  items(): Y[] {
    const n = this.resolved();
    if (!isSeqNode(n)) return [];
    return n.items.map((it, i) => new Y((it as AnyNode | null) ?? null, this.ctx, `${this.path}[${i}]`, this.through));
  }

  entries(): [string, Y][] {
    const n = this.resolved();
    if (!isMapNode(n)) return [];
    const out: [string, Y][] = [];
    for (const pair of n.items) {
      const k = isScalarNode(pair.key) ? pair.key.value : null;
      if (typeof k === 'string' || typeof k === 'number')
        out.push([
          String(k),
          new Y((pair.value as AnyNode | null) ?? null, this.ctx, `${this.path}.${k}`, this.through),
        ]);
    }
    return out;
  }

  scalar(): unknown {
    const n = this.resolved();
    return isScalarNode(n) ? n.value : undefined;
  }

  str(): string | null {
    const v = this.scalar();
    return typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : null;
  }

  num(): number | null {
    const v = this.scalar();
    if (typeof v === 'number' && Number.isFinite(v)) return v;
    if (typeof v === 'string' && /^-?\d+$/.test(v)) return Number(v);
    return null;
  }

  bool(): boolean | null {
    const v = this.scalar();
    return typeof v === 'boolean' ? v : v === 'true' ? true : v === 'false' ? false : null;
  }

  /** A string map such as labels or a selector. */
  stringMap(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [k, v] of this.entries()) {
      const s = v.str();
      if (s !== null) out[k] = s;
    }
    return out;
  }

  strings(): string[] {
    return this.items()
      .map(i => i.str())
      .filter((s): s is string => s !== null);
  }
}
