/**
 * A JSON reader that keeps the source range of every value, so that `nft -j` input gets ranged
 * diagnostics like the text forms (JSON.parse keeps no positions). It never throws: a syntax error is
 * returned with its position. Nesting deeper than MAX_DEPTH is refused (bounded stack on hostile input).
 */
import type { Range } from '../diagnostics.ts';

export type JNode =
  | { readonly t: 'obj'; readonly v: ReadonlyArray<readonly [string, JNode]>; readonly r: Range }
  | { readonly t: 'arr'; readonly v: readonly JNode[]; readonly r: Range }
  | { readonly t: 'str'; readonly v: string; readonly r: Range }
  | { readonly t: 'num'; readonly v: number; readonly r: Range }
  | { readonly t: 'bool'; readonly v: boolean; readonly r: Range }
  | { readonly t: 'null'; readonly r: Range };

export interface JsonError {
  readonly message: string;
  readonly range: Range;
}

const MAX_DEPTH = 256;

export function readJson(src: string): { value?: JNode; error?: JsonError } {
  const p = new JsonReader(src);
  try {
    p.ws();
    const value = p.value(0);
    p.ws();
    if (p.pos < src.length) p.fail('unexpected text after the JSON value');
    return { value };
  } catch (e) {
    if (e instanceof JsonSyntax) return { error: { message: e.message, range: e.range } };
    return { error: { message: `JSON reader failed: ${e instanceof Error ? e.message : String(e)}`, range: p.here() } };
  }
}

/** Look up a key of an object node. */
export function jget(n: JNode | undefined, key: string): JNode | undefined {
  if (!n || n.t !== 'obj') return undefined;
  for (const [k, v] of n.v) if (k === key) return v;
  return undefined;
}

class JsonSyntax extends Error {
  constructor(
    message: string,
    readonly range: Range,
  ) {
    super(message);
  }
}

class JsonReader {
  pos = 0;
  private line = 0;
  private lineStart = 0;

  constructor(private readonly s: string) {}

  here(): Range {
    const p = { line: this.line, character: this.pos - this.lineStart };
    return { start: p, end: p };
  }

  fail(message: string): never {
    throw new JsonSyntax(message, this.here());
  }

  ws(): void {
    const s = this.s;
    for (;;) {
      const c = s.charCodeAt(this.pos);
      if (c === 10) {
        this.pos++;
        this.line++;
        this.lineStart = this.pos;
      } else if (c === 32 || c === 9 || c === 13) this.pos++;
      else return;
    }
  }

  private range(startLine: number, startCol: number): Range {
    return {
      start: { line: startLine, character: startCol },
      end: { line: this.line, character: this.pos - this.lineStart },
    };
  }

  value(depth: number): JNode {
    if (depth > MAX_DEPTH) this.fail(`JSON nested deeper than ${MAX_DEPTH} levels`);
    const s = this.s;
    const c = s.charCodeAt(this.pos);
    const sl = this.line;
    const sc = this.pos - this.lineStart;
    if (c === 0x7b) return this.object(depth, sl, sc);
    if (c === 0x5b) return this.array(depth, sl, sc);
    if (c === 0x22) return { t: 'str', v: this.string(), r: this.range(sl, sc) };
    if (s.startsWith('true', this.pos)) {
      this.pos += 4;
      return { t: 'bool', v: true, r: this.range(sl, sc) };
    }
    if (s.startsWith('false', this.pos)) {
      this.pos += 5;
      return { t: 'bool', v: false, r: this.range(sl, sc) };
    }
    if (s.startsWith('null', this.pos)) {
      this.pos += 4;
      return { t: 'null', r: this.range(sl, sc) };
    }
    const m = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
    m.lastIndex = this.pos;
    const num = m.exec(s);
    if (num) {
      this.pos += num[0].length;
      return { t: 'num', v: Number(num[0]), r: this.range(sl, sc) };
    }
    return this.fail(this.pos >= s.length ? 'unexpected end of JSON' : `unexpected character "${s.charAt(this.pos)}"`);
  }

  private object(depth: number, sl: number, sc: number): JNode {
    this.pos++;
    const v: [string, JNode][] = [];
    this.ws();
    if (this.s.charCodeAt(this.pos) === 0x7d) {
      this.pos++;
      return { t: 'obj', v, r: this.range(sl, sc) };
    }
    for (;;) {
      this.ws();
      if (this.s.charCodeAt(this.pos) !== 0x22) this.fail('expected a quoted key');
      const key = this.string();
      this.ws();
      if (this.s.charCodeAt(this.pos) !== 0x3a) this.fail('expected ":"');
      this.pos++;
      this.ws();
      v.push([key, this.value(depth + 1)]);
      this.ws();
      const c = this.s.charCodeAt(this.pos);
      this.pos++;
      if (c === 0x2c) continue;
      if (c === 0x7d) return { t: 'obj', v, r: this.range(sl, sc) };
      this.pos--;
      this.fail('expected "," or "}"');
    }
  }

  private array(depth: number, sl: number, sc: number): JNode {
    this.pos++;
    const v: JNode[] = [];
    this.ws();
    if (this.s.charCodeAt(this.pos) === 0x5d) {
      this.pos++;
      return { t: 'arr', v, r: this.range(sl, sc) };
    }
    for (;;) {
      this.ws();
      v.push(this.value(depth + 1));
      this.ws();
      const c = this.s.charCodeAt(this.pos);
      this.pos++;
      if (c === 0x2c) continue;
      if (c === 0x5d) return { t: 'arr', v, r: this.range(sl, sc) };
      this.pos--;
      this.fail('expected "," or "]"');
    }
  }

  private string(): string {
    const s = this.s;
    const start = ++this.pos;
    let end = s.indexOf('"', start);
    const bs = s.indexOf('\\', start);
    const nl = s.indexOf('\n', start);
    if (end >= 0 && (bs < 0 || bs > end) && (nl < 0 || nl > end)) {
      this.pos = end + 1;
      return s.slice(start, end);
    }
    // The slow path: escapes. JSON.parse decodes them exactly once the extent is known.
    let p = start;
    for (;;) {
      const c = s.charCodeAt(p);
      if (p >= s.length || c === 10) {
        this.pos = p;
        this.fail('unterminated string');
      }
      if (c === 0x5c) p += 2;
      else if (c === 0x22) break;
      else p++;
    }
    end = p;
    this.pos = end + 1;
    try {
      return JSON.parse(s.slice(start - 1, end + 1)) as string;
    } catch {
      this.pos = start;
      return this.fail('bad escape in string');
    }
  }
}
