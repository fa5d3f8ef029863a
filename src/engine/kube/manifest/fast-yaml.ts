/**
 * A fast reader for the plain YAML that manifests almost always are (block maps and sequences, one-line flow
 * collections, plain and quoted one-line scalars, `|`/`|-` literal blocks, comments, `---` documents). It
 * gives the same values and the same source ranges as the `yaml` package's composer (YAML 1.2 core schema),
 * at a fraction of its cost: reading 10k Services + EndpointSlices (8.2 MB) took 5–7 s through `yaml`
 * (lexer, CST, composer and a node object per token).
 *
 * It reads a strict subset and **gives up** (returns null) on anything else — anchors, aliases, tags,
 * directives, multi-line plain or quoted scalars, folded or kept block scalars, multi-line flow collections,
 * explicit keys, tabs, CR line breaks, syntax errors, and comment placements whose effect on `yaml`'s ranges
 * is intricate. The caller then reads the file with `yaml` as before, so any file the subset cannot read
 * exactly is read as it always was. test/kube/fast-yaml.test.ts checks values and ranges against `yaml` on
 * every manifest of the repository and on generated documents.
 */

import {
  GIVE_UP,
  literalBlock,
  NOT_PLAIN_START,
  plainEnd,
  quotedEnd,
  quotedValue,
  resolvePlain,
} from './fast-yaml-scalars.ts';

export { resolvePlain };

/** `[start, valueEnd, nodeEnd]`, as `yaml`'s `Node.range`. */
export type FastRange = [number, number, number];

/**
 * Nodes keep their offsets as numbers and build `range` only when asked (a location is wanted for few
 * nodes): a million short-lived arrays less on 8 MB of manifests.
 */
abstract class FastBase {
  constructor(
    /** `range[0]`, `range[1]`, `range[2]`. */
    public start: number,
    public end: number,
    public end2: number,
  ) {}
  get range(): FastRange {
    return [this.start, this.end, this.end2];
  }
}
export class FastScalar extends FastBase {
  readonly fast = 'scalar';
  constructor(
    readonly value: unknown,
    start: number,
    end: number,
    end2: number,
  ) {
    super(start, end, end2);
  }
}
export interface FastPair {
  readonly key: FastScalar;
  readonly value: FastNode;
}
export class FastMap extends FastBase {
  readonly fast = 'map';
  readonly items: FastPair[] = [];
}
export class FastSeq extends FastBase {
  readonly fast = 'seq';
  readonly items: FastNode[] = [];
}
export type FastNode = FastScalar | FastMap | FastSeq;

/** Characters left to `yaml`: control characters (tab and CR among them), DEL and a byte-order mark. */
// eslint-disable-next-line no-control-regex -- these are exactly the characters the subset excludes
const NOT_IN_SUBSET = /[\x00-\x09\x0b-\x1f\x7f\ufeff]/;

/** Nesting deeper than this is left to `yaml` (bounded recursion here). */
const MAX_DEPTH = 64;

class Reader {
  private pos = 0;
  private depth = 0;
  /** Comment lines skipped since the last value ended its line (see `nextContent`). */
  private commentsSkipped = false;
  private firstCommentIndent = -1;
  /** Whether the node `node()` returned last is a block collection (it ends where the next line starts). */
  private block = false;
  /** Set while the value of a document's root `items:` key is being read (see `onListItem`). */
  private listItems = false;
  constructor(
    private readonly t: string,
    /**
     * Receives each item of a document's root `items:` block sequence (a `kind: List`) as soon as it is
     * read, and the sequence keeps none: a List's objects are read one at a time instead of after the
     * whole tree of the document is built (a 100k-Service List built ~500 MB of nodes first).
     */
    private readonly onListItem: ((item: FastNode) => void) | null = null,
  ) {}

  /** The documents, one at a time (so each one's nodes can be read and dropped before the next is built). */
  *documents(): Generator<FastNode | null> {
    const t = this.t;
    let open = false; // a `---` started a document that has no content yet
    for (;;) {
      this.skipBlankAndCommentLines();
      if (this.pos >= t.length) {
        if (open) yield null;
        return;
      }
      if (this.atMarker('...')) throw GIVE_UP;
      if (this.atMarker('---')) {
        if (open) yield null;
        open = true;
        this.pos += 3;
        this.endOfLine(false);
        continue;
      }
      const col = this.pos - this.lineStart(this.pos);
      const node = this.node(this.pos, col, -1);
      if (node.end2 < 0) node.end2 = node.end;
      // After the root node: only the end of input or a document marker.
      this.skipBlankAndCommentLines();
      if (this.pos < t.length && !this.atMarker('---')) throw GIVE_UP;
      open = false;
      yield node;
    }
  }

  private lineStart(p: number): number {
    return this.t.lastIndexOf('\n', p - 1) + 1;
  }

  private lineEnd(p: number): number {
    const e = this.t.indexOf('\n', p);
    return e < 0 ? this.t.length : e;
  }

  private atMarker(m: '---' | '...'): boolean {
    const t = this.t;
    const p = this.pos;
    if (t.startsWith(m, p) && (p === 0 || t[p - 1] === '\n')) {
      const c = t[p + 3];
      return c === undefined || c === '\n' || c === ' ';
    }
    return false;
  }

  /** From a line start: skips blank and comment-only lines; `pos` ends at the first content character. */
  private skipBlankAndCommentLines(): void {
    const t = this.t;
    for (;;) {
      let p = this.pos;
      while (t.charCodeAt(p) === 32) p++;
      if (p >= t.length) {
        this.pos = t.length;
        return;
      }
      const c = t[p];
      if (c === '\n' || c === '#') {
        if (c === '#' && !this.commentsSkipped) {
          this.commentsSkipped = true;
          this.firstCommentIndent = p - this.pos;
        }
        this.pos = this.lineEnd(p) + 1;
        if (this.pos > t.length) this.pos = t.length;
        continue;
      }
      this.pos = p;
      return;
    }
  }

  /**
   * After a value on its line: spaces, an optional comment, the newline. Returns the offset after them (the
   * value's `range[2]`); `pos` moves to the next line. Anything else on the line gives up.
   */
  private endOfLine(allowComment = true): number {
    const t = this.t;
    let p = this.pos;
    while (t.charCodeAt(p) === 32) p++;
    if (t[p] === '#') {
      if (!allowComment && p === this.pos) throw GIVE_UP;
      if (p === this.pos) throw GIVE_UP; // a comment must be separated by a space
      p = this.lineEnd(p);
    }
    if (p < t.length && t[p] !== '\n') throw GIVE_UP;
    this.pos = p < t.length ? p + 1 : p;
    return this.pos;
  }

  /**
   * Moves to the next content line after a value that ended its line and returns its indent, or -1 at the
   * end of the input or a document marker. `container` is the column of the block collection holding the
   * value: a comment line indented deeper than it would be folded into the value's range by `yaml`, so the
   * reader gives up there.
   */
  private nextContent(container: number, valueIsCollection: boolean): number {
    this.commentsSkipped = false;
    this.skipBlankAndCommentLines();
    if (this.commentsSkipped && this.firstCommentIndent > container && !valueIsCollection) throw GIVE_UP;
    if (this.pos >= this.t.length || this.atMarker('---') || this.atMarker('...')) return -1;
    return this.pos - this.lineStart(this.pos);
  }

  /** A node whose first character is at `p` (column `col`), inside a block collection at column `parent`. */
  private node(p: number, col: number, parent: number): FastNode {
    if (++this.depth > MAX_DEPTH) throw GIVE_UP;
    try {
      this.pos = p;
      const t = this.t;
      const c = t[p];
      if (c === '-' && (p + 1 >= t.length || t[p + 1] === ' ' || t[p + 1] === '\n')) {
        const seq = this.blockSeq(col);
        this.block = true;
        return seq;
      }
      if (this.keyAhead(p)) {
        const map = this.blockMap(col);
        this.block = true;
        return map;
      }
      const v = this.inlineValue(parent);
      this.block = false;
      return v;
    } finally {
      this.depth--;
    }
  }

  /** Whether a block mapping key (`key:` followed by a space or the end of the line) starts at `p`. */
  private keyAhead(p: number): boolean {
    const t = this.t;
    const c = t[p]!;
    if (c === '"' || c === "'") {
      const e = quotedEnd(t, p);
      let q = e;
      while (t.charCodeAt(q) === 32) q++;
      return t[q] === ':' && (q + 1 >= t.length || t[q + 1] === ' ' || t[q + 1] === '\n');
    }
    if (NOT_PLAIN_START.has(c)) return false;
    if ((c === '?' || c === ':') && (t[p + 1] === ' ' || t[p + 1] === '\n' || p + 1 >= t.length)) throw GIVE_UP;
    return plainEnd(this.t, p, true).key;
  }

  private scalar(value: unknown, start: number, end: number): FastScalar {
    return new FastScalar(value, start, end, end);
  }

  private key(): FastScalar {
    const t = this.t;
    const p = this.pos;
    let node: FastScalar;
    if (t[p] === '"' || t[p] === "'") {
      const e = quotedEnd(t, p);
      node = this.scalar(quotedValue(t, p, e), p, e);
      this.pos = e;
    } else {
      const c = t[p]!;
      if (NOT_PLAIN_START.has(c) || ((c === '?' || c === ':' || c === '-') && (t[p + 1] === ' ' || t[p + 1] === '\n')))
        throw GIVE_UP;
      const { end, key } = plainEnd(this.t, p, true);
      if (!key) throw GIVE_UP;
      node = this.scalar(resolvePlain(t.slice(p, end)), p, end);
      this.pos = end;
    }
    while (t.charCodeAt(this.pos) === 32) this.pos++;
    if (t[this.pos] !== ':') throw GIVE_UP;
    this.pos++;
    return node;
  }

  private blockMap(col: number): FastMap {
    const t = this.t;
    const map = new FastMap(this.pos, 0, 0);
    let lastEnd = -1;
    for (;;) {
      const key = this.key();
      const afterColon = this.pos;
      let p = afterColon;
      while (t.charCodeAt(p) === 32) p++;
      let value: FastNode;
      let isCollection = false;
      if (p >= t.length || t[p] === '\n' || t[p] === '#') {
        if (t[p] === '#' && p === afterColon) throw GIVE_UP;
        this.pos = p;
        const hadComment = t[p] === '#';
        this.endOfLine();
        const ind = this.nextContent(Infinity, true);
        const skipped = this.commentsSkipped || hadComment;
        const seqHere = ind === col && t[this.pos] === '-' && /^-( |\n|$)/.test(t.slice(this.pos, this.pos + 2));
        if (ind > col || seqHere) {
          this.listItems = this.onListItem !== null && this.depth === 1 && key.value === 'items';
          value = this.node(this.pos, ind, col);
          this.listItems = false;
          isCollection = this.block;
          if (!isCollection) throw GIVE_UP; // a scalar or flow collection on the line after its key: multi-line forms, left to yaml
        } else {
          if (skipped) throw GIVE_UP;
          value = this.scalar(null, p, p);
          map.items.push({ key, value });
          lastEnd = p;
          if (ind === col) continue; // pos is at the next key
          map.end = lastEnd;
          map.end2 = lastEnd;
          return map;
        }
      } else {
        this.pos = p;
        const c = t[p];
        if (c === '-' && (t[p + 1] === ' ' || t[p + 1] === '\n' || p + 1 >= t.length)) throw GIVE_UP;
        value = this.inlineValue(col);
      }
      map.items.push({ key, value });
      lastEnd = value.end2;
      const ind = isCollection ? this.indentHere() : this.nextContent(col, false);
      if (ind === col) {
        if (!this.keyAhead(this.pos)) throw GIVE_UP;
        continue;
      }
      if (ind > col) throw GIVE_UP;
      if (lastEnd < 0) throw GIVE_UP; // the last value's end depends on comments `yaml` attaches to it
      map.end = lastEnd;
      map.end2 = this.commentsSkipped ? -1 : lastEnd;
      return map;
    }
  }

  /** The indent of the line `pos` stands on after a nested collection returned (-1 at the end). */
  private indentHere(): number {
    if (this.pos >= this.t.length || this.atMarker('---') || this.atMarker('...')) return -1;
    return this.pos - this.lineStart(this.pos);
  }

  private blockSeq(col: number): FastSeq {
    const t = this.t;
    const seq = new FastSeq(this.pos, 0, 0);
    // Only the root `items:` sequence itself streams, not the sequences inside its items.
    const sink = this.listItems ? this.onListItem : null;
    this.listItems = false;
    const push = (value: FastNode) => (sink ? sink(value) : seq.items.push(value));
    let lastEnd = -1;
    for (;;) {
      // pos is at '-'
      const dash = this.pos;
      let p = dash + 1;
      while (t.charCodeAt(p) === 32) p++;
      let value: FastNode;
      let isCollection = false;
      if (p >= t.length || t[p] === '\n' || t[p] === '#') {
        if (t[p] === '#') throw GIVE_UP; // `-` then a comment: left to yaml
        this.pos = p;
        this.endOfLine();
        const ind = this.nextContent(Infinity, true);
        if (ind > col) {
          value = this.node(this.pos, ind, col);
          isCollection = this.block;
          if (!isCollection) throw GIVE_UP;
        } else {
          if (this.commentsSkipped) throw GIVE_UP;
          value = this.scalar(null, p, p);
          push(value);
          lastEnd = p;
          if (ind === col && this.dashHere()) continue;
          seq.end = lastEnd;
          seq.end2 = lastEnd;
          return seq;
        }
      } else {
        const ccol = p - this.lineStart(p);
        value = this.node(p, ccol, col);
        isCollection = this.block;
      }
      push(value);
      lastEnd = value.end2;
      const ind = isCollection ? this.indentHere() : this.nextContent(col, false);
      // A line at this column without `-` ends a sequence that is a map value at the map's own column.
      if (ind === col && this.dashHere()) continue;
      if (ind > col) throw GIVE_UP;
      if (lastEnd < 0) throw GIVE_UP;
      seq.end = lastEnd;
      seq.end2 = this.commentsSkipped ? -1 : lastEnd;
      return seq;
    }
  }

  private dashHere(): boolean {
    const t = this.t;
    const p = this.pos;
    return t[p] === '-' && (p + 1 >= t.length || t[p + 1] === ' ' || t[p + 1] === '\n');
  }

  /**
   * A value that starts and ends on this line (plain, quoted, flow, or a `|` block). `pos` moves past its
   * line; the node's `range[2]` is the offset after the line's newline, as `yaml` gives it.
   */
  private inlineValue(parent: number): FastScalar | FastMap | FastSeq {
    const t = this.t;
    const p = this.pos;
    const c = t[p]!;
    if (c === '[' || c === '{') {
      const node = this.flow(p, 0);
      const end = this.pos;
      const after = this.endOfLine();
      node.start = p;
      node.end = end;
      node.end2 = after;
      return node;
    }
    if (c === '"' || c === "'") {
      const e = quotedEnd(t, p);
      const value = quotedValue(t, p, e);
      this.pos = e;
      return new FastScalar(value, p, e, this.endOfLine());
    }
    if (c === '|') {
      const block = literalBlock(t, p, parent);
      this.pos = block.end;
      return new FastScalar(block.value, p, block.end, block.end);
    }
    if (NOT_PLAIN_START.has(c)) throw GIVE_UP;
    if ((c === '?' || c === ':' || c === '-') && (t[p + 1] === ' ' || t[p + 1] === '\n' || p + 1 >= t.length))
      throw GIVE_UP;
    const { end, key } = plainEnd(this.t, p, false);
    if (key) throw GIVE_UP;
    this.pos = end;
    return new FastScalar(resolvePlain(t.slice(p, end)), p, end, this.endOfLine());
  }

  /** A one-line flow collection at `p`; `pos` ends after its closing bracket. */
  private flow(p: number, depth: number): FastMap | FastSeq {
    if (depth > MAX_DEPTH) throw GIVE_UP;
    const t = this.t;
    const isMap = t.charCodeAt(p) === 123; // '{'
    const close = isMap ? 125 : 93; // '}' or ']'
    const map = isMap ? new FastMap(p, 0, 0) : null;
    const seq = isMap ? null : new FastSeq(p, 0, 0);
    let q = p + 1;
    while (t.charCodeAt(q) === 32) q++;
    if (t.charCodeAt(q) !== close) {
      for (;;) {
        while (t.charCodeAt(q) === 32) q++;
        const key = this.flowItem(q, depth, isMap);
        q = this.pos;
        while (t.charCodeAt(q) === 32) q++;
        if (isMap) {
          if (key.fast !== 'scalar' || t.charCodeAt(q) !== 58 || t.charCodeAt(q + 1) !== 32) throw GIVE_UP;
          q += 2;
          while (t.charCodeAt(q) === 32) q++;
          const value = this.flowItem(q, depth, false);
          q = this.pos;
          map!.items.push({ key: key as FastScalar, value });
          while (t.charCodeAt(q) === 32) q++;
        } else {
          if (t.charCodeAt(q) === 58) throw GIVE_UP; // an implicit pair in a sequence
          seq!.items.push(key);
        }
        const ch = t.charCodeAt(q);
        if (ch === 44) {
          // ','
          q++;
          while (t.charCodeAt(q) === 32) q++;
          const nx = t.charCodeAt(q);
          if (nx === close || nx === 44) throw GIVE_UP; // trailing or empty entries: left to yaml
          continue;
        }
        if (ch === close) break;
        throw GIVE_UP;
      }
    }
    this.pos = q + 1;
    const node = (map ?? seq)!;
    node.end = node.end2 = q + 1;
    return node;
  }

  /** One flow scalar or nested collection at `q`; `pos` ends after it. */
  private flowItem(q: number, depth: number, isKey: boolean): FastNode {
    const t = this.t;
    const c = t[q];
    if (c === undefined || c === '\n') throw GIVE_UP;
    if (c === '[' || c === '{') {
      if (isKey) throw GIVE_UP;
      return this.flow(q, depth + 1);
    }
    if (c === '"' || c === "'") {
      // JSON-like `"a":b` adjacency is left to yaml (the caller requires `: `).
      const e = quotedEnd(t, q);
      this.pos = e;
      return this.scalar(quotedValue(t, q, e), q, e);
    }
    if (NOT_PLAIN_START.has(c)) throw GIVE_UP;
    if ((c === '?' || c === ':' || c === '-') && !/[^ \n,[\]{}]/.test(t[q + 1] ?? ' ')) throw GIVE_UP;
    let e = q;
    let last = q;
    const n = t.length;
    for (; e < n; e++) {
      const ch = t.charCodeAt(e);
      // \n , [ ] { }
      if (ch === 10 || ch === 44 || ch === 91 || ch === 93 || ch === 123 || ch === 125) break;
      if (ch === 58) {
        const nx = t.charCodeAt(e + 1);
        if (nx === 32 || nx === 44 || nx === 93 || nx === 125 || nx === 10 || e + 1 >= n) break;
      } else if (ch === 35 && t.charCodeAt(e - 1) === 32) throw GIVE_UP;
      if (ch !== 32) last = e + 1;
    }
    const stop = t.charCodeAt(e);
    if (stop === 91 || stop === 123) throw GIVE_UP;
    this.pos = last;
    return this.scalar(resolvePlain(t.slice(q, last)), q, last);
  }
}

/**
 * The documents of `text` (null for an empty one), one at a time, or null when the text leaves the subset
 * this reader handles exactly — the caller then uses the `yaml` package. The iterator throws `FastYamlGaveUp`
 * when a later document leaves the subset: the caller drops what it read and starts again with `yaml`.
 */
export function fastYamlDocuments(
  text: string,
  /** Streams a root `items:` block sequence's items (see `Reader`): the yielded document has them not. */
  onListItem: ((item: FastNode) => void) | null = null,
): Iterable<FastNode | null> | null {
  // Tabs, CR, BOM, control characters and directives: left to yaml.
  if (NOT_IN_SUBSET.test(text) || /^%/m.test(text)) return null;
  const docs = new Reader(text, onListItem).documents();
  return {
    *[Symbol.iterator]() {
      try {
        yield* docs;
      } catch (e) {
        if (e === GIVE_UP || e instanceof RangeError) throw new FastYamlGaveUp();
        throw e;
      }
    },
  };
}

/** The text left the fast reader's subset part-way. */
export class FastYamlGaveUp extends Error {}

/** All documents at once, or null when the text leaves the subset. */
export function readFastYaml(text: string): (FastNode | null)[] | null {
  const docs = fastYamlDocuments(text);
  if (!docs) return null;
  try {
    return [...docs];
  } catch (e) {
    if (e instanceof FastYamlGaveUp) return null;
    throw e;
  }
}
