/**
 * The lexer shared by the nftables text and script front ends. nft's own scanner (src/scanner.l) has
 * hundreds of keyword tokens; we only need to split the input the way nft prints and writes it:
 * - punctuation `{ } ; , ( ) @ $` stands alone;
 * - `"…"` is a string (nft has no escapes inside quotes);
 * - `#` starts a comment to the end of the line, and `# handle N` (what `nft -a` appends) becomes a
 *   handle token;
 * - everything else up to whitespace or punctuation is one word: `10.0.0.0/8`, `fe80::1`,
 *   `10.180.0.1:80`, `[fd00::10]:8080`, `1000-2000`, `10/second`, `==`, `.`, `:` and chain names such as
 *   `endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80` (scanner.l lets `/`, `-`, `.` and `_` follow the
 *   first character of a string).
 * The lexer is a pull lexer over the input string so that a large ruleset never becomes one big token array.
 */
import type { Range } from '../diagnostics.ts';

export type TokKind = 'word' | 'string' | 'punct' | 'nl' | 'handle' | 'eof';

export interface Tok {
  readonly kind: TokKind;
  /** The word, the string without quotes, the punctuation character, or the handle number as text. */
  readonly text: string;
  readonly line: number;
  readonly col: number;
  readonly endLine: number;
  readonly endCol: number;
  /** Offset of the token's first character in the source (of the `$` for a substituted variable). */
  readonly offset: number;
  /** The token's range, made once and shared by every single-token node built from it. */
  readonly range: Range;
  /** A string that had no closing quote on its line. */
  readonly unterminated?: boolean;
}

export function tokRange(a: Tok, b: Tok = a): Range {
  return a === b ? a.range : { start: a.range.start, end: b.range.end };
}

const PUNCT = new Set(['{', '}', ';', ',', '(', ')', '@', '$']);

/** Character codes that end a word: whitespace, punctuation, quote and comment start. */
function endsWord(c: number): boolean {
  return (
    c === 32 ||
    c === 9 ||
    c === 10 ||
    c === 13 ||
    c === 0x7b ||
    c === 0x7d ||
    c === 0x3b ||
    c === 0x2c ||
    c === 0x28 ||
    c === 0x29 ||
    c === 0x40 ||
    c === 0x24 ||
    c === 0x22 ||
    c === 0x23
  );
}

/** Words of at most this length are shared strings (a large script repeats `ip`, `jump`, table names…). */
const MAX_SHARED_WORD = 24;
/** Distinct shared words at most (bounded memory on hostile input). */
const MAX_SHARED_WORDS = 50_000;

export class Lexer {
  private pos: number;
  private line: number;
  private lineStart: number;
  private readonly words = new Map<string, string>();

  /** Reads `src` from the start, or from `offset` on 0-based `line` (whose first character is at `lineStart`). */
  constructor(
    private readonly src: string,
    offset = 0,
    line = 0,
    lineStart = 0,
  ) {
    this.pos = offset;
    this.line = line;
    this.lineStart = lineStart;
  }

  next(): Tok {
    const s = this.src;
    const n = s.length;
    for (;;) {
      if (this.pos >= n) return this.make('eof', '', this.pos, this.pos);
      const c = s.charCodeAt(this.pos);
      if (c === 32 || c === 9 || c === 13) {
        this.pos++;
        continue;
      }
      // A backslash before a newline continues the line (scanner.l treats `\\\n` as whitespace).
      if (c === 0x5c && s.charCodeAt(this.pos + 1) === 10) {
        this.pos += 2;
        this.line++;
        this.lineStart = this.pos;
        continue;
      }
      if (c === 10) {
        const t = this.make('nl', '\n', this.pos, this.pos + 1);
        this.pos++;
        this.line++;
        this.lineStart = this.pos;
        return t;
      }
      if (c === 0x23) return this.comment();
      if (c === 0x22) return this.quoted();
      const ch = s.charAt(this.pos);
      if (PUNCT.has(ch)) {
        const t = this.make('punct', ch, this.pos, this.pos + 1);
        this.pos++;
        return t;
      }
      const start = this.pos;
      let p = this.pos + 1;
      while (p < n && !endsWord(s.charCodeAt(p))) p++;
      this.pos = p;
      return this.make('word', this.word(start, p), start, p);
    }
  }

  /** The word's text, one string for each short word however often it occurs. */
  private word(start: number, end: number): string {
    const w = this.src.slice(start, end);
    if (end - start > MAX_SHARED_WORD) return w;
    const known = this.words.get(w);
    if (known !== undefined) return known;
    if (this.words.size < MAX_SHARED_WORDS) this.words.set(w, w);
    return w;
  }

  private comment(): Tok {
    const s = this.src;
    const start = this.pos;
    let p = s.indexOf('\n', start);
    if (p < 0) p = s.length;
    this.pos = p;
    const m = /^#\s*handle\s+(\d+)\s*$/.exec(s.slice(start, p));
    if (m) return this.make('handle', m[1] ?? '', start, p);
    return this.next();
  }

  private quoted(): Tok {
    const s = this.src;
    const start = this.pos;
    let p = start + 1;
    while (p < s.length && s.charCodeAt(p) !== 0x22 && s.charCodeAt(p) !== 10) p++;
    if (p < s.length && s.charCodeAt(p) === 0x22) {
      this.pos = p + 1;
      return this.make('string', s.slice(start + 1, p), start, p + 1);
    }
    this.pos = p;
    return { ...this.make('string', s.slice(start + 1, p), start, p), unterminated: true };
  }

  private make(kind: TokKind, text: string, start: number, end: number): Tok {
    const col = start - this.lineStart;
    const line = this.line;
    const endCol = col + (end - start);
    return {
      kind,
      text,
      line,
      col,
      endLine: line,
      endCol,
      offset: start,
      range: { start: { line, character: col }, end: { line, character: endCol } },
    };
  }
}
