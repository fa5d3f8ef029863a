/**
 * A read-only view of a YAML node that remembers where it stands in its file, so every value read from a
 * manifest can be pointed at by CodeLens, hovers and diagnostics. Alias expansion is bounded per document:
 * an "alias bomb" (aliases of aliases of lists) stops with a diagnostic instead of exhausting memory.
 */
import { type LineCounter, type Node, isAlias, isMap, isScalar, isSeq, type Document } from 'yaml';
import type { Range } from '../../diagnostics.ts';

export interface Loc {
  readonly file: string;
  readonly range: Range;
}

export class YamlContext {
  visits = 0;
  exhausted = false;
  constructor(
    readonly file: string,
    readonly lines: LineCounter,
    readonly doc: Document,
    readonly budget = 100_000,
  ) {}

  loc(node: Node | null | undefined, fallback?: Loc): Loc {
    const r = node?.range;
    if (!r) return fallback ?? { file: this.file, range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } } };
    return { file: this.file, range: this.range(r[0], r[1]) };
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
    readonly node: Node | null,
    readonly ctx: YamlContext,
    readonly path: string,
  ) {}

  private resolved(): Node | null {
    let n: unknown = this.node;
    let hops = 0;
    while (isAlias(n)) {
      if (++this.ctx.visits > this.ctx.budget || ++hops > 50) {
        this.ctx.exhausted = true;
        return null;
      }
      n = (n as { resolve(doc: Document): unknown }).resolve(this.ctx.doc) ?? null;
    }
    if (++this.ctx.visits > this.ctx.budget) {
      this.ctx.exhausted = true;
      return null;
    }
    return (n as Node | null) ?? null;
  }

  get loc(): Loc {
    return this.ctx.loc(this.node);
  }

  get present(): boolean {
    const n = this.resolved();
    return n !== null && !(isScalar(n) && n.value === null);
  }

  get(key: string): Y {
    const n = this.resolved();
    if (isMap(n)) {
      for (const pair of n.items) {
        const k = isScalar(pair.key) ? pair.key.value : pair.key;
        if (k === key) return new Y((pair.value as Node | null) ?? null, this.ctx, `${this.path}.${key}`);
      }
    }
    return new Y(null, this.ctx, `${this.path}.${key}`);
  }

  /** The key node's location, for pointing at `type:` rather than its value. */
  keyLoc(key: string): Loc | null {
    const n = this.resolved();
    if (!isMap(n)) return null;
    for (const pair of n.items) {
      const k = isScalar(pair.key) ? pair.key.value : null;
      if (k === key) return this.ctx.loc(pair.key as Node);
    }
    return null;
  }

  isMap(): boolean {
    return isMap(this.resolved());
  }

  isSeq(): boolean {
    return isSeq(this.resolved());
  }

  items(): Y[] {
    const n = this.resolved();
    if (!isSeq(n)) return [];
    return n.items.map((it, i) => new Y((it as Node | null) ?? null, this.ctx, `${this.path}[${i}]`));
  }

  entries(): [string, Y][] {
    const n = this.resolved();
    if (!isMap(n)) return [];
    const out: [string, Y][] = [];
    for (const pair of n.items) {
      const k = isScalar(pair.key) ? pair.key.value : null;
      if (typeof k === 'string' || typeof k === 'number') out.push([String(k), new Y((pair.value as Node | null) ?? null, this.ctx, `${this.path}.${k}`)]);
    }
    return out;
  }

  scalar(): unknown {
    const n = this.resolved();
    return isScalar(n) ? n.value : undefined;
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
    return this.items().map((i) => i.str()).filter((s): s is string => s !== null);
  }
}
