/**
 * The token cursor of the nftables text/script front ends: lookahead over the pull lexer, `$variable`
 * substitution from `define`s (nft resolves a define's value when it is defined, src/parser_bison.y
 * `define_cmd` / `variable_expr`), and the diagnostics list. Work is bounded: substitutions expand at most
 * MAX_EXPANDED tokens in total, and diagnostics stop at MAX_DIAGNOSTICS.
 */
import type { Diagnostic, DiagnosticCode, Range, Severity } from '../diagnostics.ts';
import { Lexer, tokRange, type Tok } from './parse-tokenizer.ts';

const MAX_EXPANDED = 1_000_000;
const MAX_DIAGNOSTICS = 1000;

export interface Define {
  readonly tokens: readonly Tok[];
  readonly range: Range;
}

/** Where a cursor starts reading: a rule body read again (rule-source.ts), with the defines then in force. */
export interface CursorStart {
  readonly offset: number;
  readonly line: number;
  readonly lineStart: number;
  readonly defines: ReadonlyMap<string, Define>;
}

export class Cursor {
  private readonly lexer: Lexer;
  private buf: Tok[] = [];
  private head = 0;
  private expanded = 0;
  private defs: Map<string, Define>;
  /** `defs` is shared with rules read so far (definesNow): the next change copies it first. */
  private defsShared = false;
  readonly diagnostics: Diagnostic[] = [];
  /** Set while a `define` value is read, to name a self-reference a cycle. */
  definingName: string | null = null;
  private last: Tok;
  /** Rules keep where they were written instead of their statements (rule-source.ts). */
  compactRules = false;
  /** Tokens consumed so far, and whether `prev()` was asked before the `mark()`ed token was consumed. */
  private consumed = 0;
  private markAt = -1;
  private prevBeforeMark = false;

  constructor(
    readonly src: string,
    start?: CursorStart,
  ) {
    this.lexer = start ? new Lexer(src, start.offset, start.line, start.lineStart) : new Lexer(src);
    // A rule read again never defines anything, so it may read the shared map itself.
    this.defs = start ? (start.defines as Map<string, Define>) : new Map();
    this.defsShared = start !== undefined;
    const p0 = { line: 0, character: 0 };
    this.last = {
      kind: 'eof',
      text: '',
      line: 0,
      col: 0,
      endLine: 0,
      endCol: 0,
      offset: 0,
      range: { start: p0, end: p0 },
    };
  }

  /** The k-th token ahead (0 = current), after variable substitution. */
  peek(k = 0): Tok {
    while (this.buf.length - this.head <= k) this.fill();
    return this.buf[this.head + k] as Tok;
  }

  /** The variables defined now. */
  get defines(): ReadonlyMap<string, Define> {
    return this.defs;
  }

  /**
   * The variables defined now, as a map that never changes: later `define`/`undefine`s copy it first
   * (copy on write), so rules between two changes share one map.
   */
  definesNow(): ReadonlyMap<string, Define> {
    this.defsShared = true;
    return this.defs;
  }

  define(name: string, value: Define): void {
    this.ownDefines().set(name, value);
  }

  undefine(name: string): void {
    if (this.defs.has(name)) this.ownDefines().delete(name);
  }

  private ownDefines(): Map<string, Define> {
    if (this.defsShared) {
      this.defs = new Map(this.defs);
      this.defsShared = false;
    }
    return this.defs;
  }

  /** Variables expanded so far stayed within the bound (none was left unsubstituted for it). */
  expansionsComplete(): boolean {
    return this.expanded <= MAX_EXPANDED;
  }

  /** Starts watching whether `prev()` is asked before the current token is consumed (see `readPrevBeforeMark`). */
  mark(): void {
    this.markAt = this.consumed;
    this.prevBeforeMark = false;
  }

  /** `prev()` was asked while the token before the `mark()` was still the last one consumed; ends the watch. */
  readPrevBeforeMark(): boolean {
    this.markAt = -1;
    return this.prevBeforeMark;
  }

  next(): Tok {
    const t = this.peek();
    this.head++;
    if (this.head > 4096) {
      this.buf = this.buf.slice(this.head);
      this.head = 0;
    }
    if (t.kind !== 'eof') {
      this.last = t;
      this.consumed++;
    }
    return t;
  }

  /** The last token consumed (for the end of ranges). */
  prev(): Tok {
    if (this.consumed === this.markAt) this.prevBeforeMark = true;
    return this.last;
  }

  isWord(text: string, k = 0): boolean {
    const t = this.peek(k);
    return t.kind === 'word' && t.text === text;
  }

  isPunct(text: string, k = 0): boolean {
    const t = this.peek(k);
    return t.kind === 'punct' && t.text === text;
  }

  /** True at the end of a statement list: newline, `;`, `}`, a handle comment or the end of input. */
  atEnd(): boolean {
    const t = this.peek();
    return (
      t.kind === 'nl' ||
      t.kind === 'eof' ||
      t.kind === 'handle' ||
      (t.kind === 'punct' && (t.text === ';' || t.text === '}'))
    );
  }

  skipNewlines(): void {
    while (this.peek().kind === 'nl') this.next();
  }

  diag(code: DiagnosticCode, message: string, range: Range, severity: Severity = 'error'): void {
    if (this.diagnostics.length < MAX_DIAGNOSTICS) this.diagnostics.push({ code, severity, message, range });
  }

  /** Skips to the end of the current statement list entry, keeping braces balanced. */
  skipToEnd(): void {
    let depth = 0;
    for (;;) {
      const t = this.peek();
      if (t.kind === 'eof') return;
      if (depth === 0 && this.atEnd()) return;
      if (t.kind === 'punct' && t.text === '{') depth++;
      if (t.kind === 'punct' && t.text === '}') depth--;
      this.next();
    }
  }

  private fill(): void {
    const t = this.lexer.next();
    if (t.kind === 'punct' && t.text === '$') {
      const name = this.lexer.next();
      if (name.kind !== 'word') {
        this.diag('syntax-error', 'a variable name must follow "$"', tokRange(t));
        this.buf.push(name);
        return;
      }
      this.substitute(t, name);
      return;
    }
    this.buf.push(t);
  }

  private substitute(dollar: Tok, name: Tok): void {
    const range = tokRange(dollar, name);
    const def = this.defs.get(name.text);
    if (!def) {
      if (this.definingName === name.text) {
        this.diag('define-cycle', `define "${name.text}" refers to itself`, range);
      } else {
        this.diag('undefined-variable', `undefined variable "$${name.text}"`, range);
      }
      // Keep a placeholder word so that the statement still has an operand where the variable was.
      this.buf.push({ ...name, kind: 'word', text: `$${name.text}`, col: dollar.col, offset: dollar.offset, range });
      return;
    }
    this.expanded += def.tokens.length;
    if (this.expanded > MAX_EXPANDED) {
      if (this.expanded - def.tokens.length <= MAX_EXPANDED) {
        this.diag(
          'input-too-large',
          `variables expand to more than ${MAX_EXPANDED} tokens; "$${name.text}" not substituted`,
          range,
        );
      }
      this.buf.push({ ...name, kind: 'word', text: `$${name.text}`, col: dollar.col, offset: dollar.offset, range });
      return;
    }
    // Substituted tokens take the position of the `$name` they replace, so diagnostics point at the use.
    for (const d of def.tokens) {
      this.buf.push({
        ...d,
        line: dollar.line,
        col: dollar.col,
        endLine: name.endLine,
        endCol: name.endCol,
        offset: dollar.offset,
        range,
      });
    }
  }
}
