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

export class Cursor {
  private readonly lexer: Lexer;
  private buf: Tok[] = [];
  private head = 0;
  private expanded = 0;
  readonly defines = new Map<string, Define>();
  readonly diagnostics: Diagnostic[] = [];
  /** Set while a `define` value is read, to name a self-reference a cycle. */
  definingName: string | null = null;
  private last: Tok;

  constructor(src: string) {
    this.lexer = new Lexer(src);
    const p0 = { line: 0, character: 0 };
    this.last = { kind: 'eof', text: '', line: 0, col: 0, endLine: 0, endCol: 0, range: { start: p0, end: p0 } };
  }

  /** The k-th token ahead (0 = current), after variable substitution. */
  peek(k = 0): Tok {
    while (this.buf.length - this.head <= k) this.fill();
    return this.buf[this.head + k] as Tok;
  }

  next(): Tok {
    const t = this.peek();
    this.head++;
    if (this.head > 4096) {
      this.buf = this.buf.slice(this.head);
      this.head = 0;
    }
    if (t.kind !== 'eof') this.last = t;
    return t;
  }

  /** The last token consumed (for the end of ranges). */
  prev(): Tok {
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
    const def = this.defines.get(name.text);
    if (!def) {
      if (this.definingName === name.text) {
        this.diag('define-cycle', `define "${name.text}" refers to itself`, range);
      } else {
        this.diag('undefined-variable', `undefined variable "$${name.text}"`, range);
      }
      // Keep a placeholder word so that the statement still has an operand where the variable was.
      this.buf.push({ ...name, kind: 'word', text: `$${name.text}`, col: dollar.col, range });
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
      this.buf.push({ ...name, kind: 'word', text: `$${name.text}`, col: dollar.col, range });
      return;
    }
    // Substituted tokens take the position of the `$name` they replace, so diagnostics point at the use.
    for (const d of def.tokens) {
      this.buf.push({ ...d, line: dollar.line, col: dollar.col, endLine: name.endLine, endCol: name.endCol, range });
    }
  }
}
