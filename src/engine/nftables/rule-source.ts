/**
 * Rules of a large script that keep where they were written instead of their statements. kube-proxy's
 * nftables script for 23k Services (101 MB, 483k rules) held 1.3 GB as ASTs: every statement, operand and
 * token range of every rule alive at once. A `SourceRule` keeps the offset of its statements in the text
 * and the `define`s in force there, and reads them again each time `stmts` is asked for (the same
 * grammar, parse-text-stmt.ts, on the same text: the same statements, ranges included). What whole-ruleset
 * passes need without reading every rule again is collected while the rule is first read: the sets its
 * statements update (lower.ts) and its `@set`/`jump` references not yet declared then (parse-validate.ts).
 *
 * A rule is kept this way only when reading it again is certain to give the same statements: no variable
 * in it was left unsubstituted for the expansion bound, and the parser did not look at the token before the
 * rule (parse-cursor.ts `mark`). Otherwise it keeps its statements like any rule.
 */
import type { Range } from '../diagnostics.ts';
import type { NftExpr, NftFamily, NftRule, NftStmt } from './ast.ts';
import { Cursor, type Define } from './parse-cursor.ts';
import { parseRuleBody } from './parse-text-stmt.ts';
import { stmtRefs } from './parse-validate.ts';
import type { Tok } from './parse-tokenizer.ts';

/** A reference of a rule to a chain (`jump`, `goto`, verdict maps) or a set (`@name`, `update @name`). */
export interface RuleRef {
  readonly kind: 'chain' | 'set';
  readonly name: string;
  readonly range: Range;
}

export class SourceRule implements NftRule {
  // The range as numbers (a range object and its two positions cost 120 bytes a rule).
  private readonly startLine: number;
  private readonly startChar: number;
  private readonly endLine: number;
  private readonly endChar: number;

  constructor(
    readonly family: NftFamily,
    readonly table: string,
    readonly chain: string,
    range: Range,
    /** Offset of the first character of the line the rule's range starts on. */
    private readonly rangeLineStart: number,
    readonly comment: string | undefined,
    readonly handle: number | undefined,
    private readonly text: string,
    private readonly offset: number,
    private readonly line: number,
    private readonly lineStart: number,
    private readonly defines: ReadonlyMap<string, Define>,
    /** The sets the rule's statements add to, update or delete from (`update @s { … }`). */
    readonly setUpdates: readonly string[] | undefined,
    /** References to chains and sets the table did not have when the rule was read, in statement order. */
    readonly pendingRefs: readonly RuleRef[] | undefined,
  ) {
    this.startLine = range.start.line;
    this.startChar = range.start.character;
    this.endLine = range.end.line;
    this.endChar = range.end.character;
  }

  /** The rule's range (a new object each time). */
  get range(): Range {
    return {
      start: { line: this.startLine, character: this.startChar },
      end: { line: this.endLine, character: this.endChar },
    };
  }

  /** The 0-based line the rule starts on. */
  get firstLine(): number {
    return this.startLine;
  }

  /** The text of the line the rule starts on (what `text.split('\n')[firstLine]` is). */
  firstLineText(): string {
    const end = this.text.indexOf('\n', this.rangeLineStart);
    return this.text.slice(this.rangeLineStart, end < 0 ? undefined : end);
  }

  /** The rule's statements, read again from the text (the last rule read is remembered). */
  get stmts(): readonly NftStmt[] {
    if (last.rule === this) return last.stmts;
    const cur = new Cursor(this.text, {
      offset: this.offset,
      line: this.line,
      lineStart: this.lineStart,
      defines: this.defines,
    });
    const stmts = parseRuleBody(cur, this.family).stmts;
    last = { rule: this, stmts };
    return stmts;
  }

  /** The same rule with another handle (`replace rule` keeps the old rule's handle). */
  withHandle(handle: number): SourceRule {
    return new SourceRule(
      this.family,
      this.table,
      this.chain,
      this.range,
      this.rangeLineStart,
      this.comment,
      handle,
      this.text,
      this.offset,
      this.line,
      this.lineStart,
      this.defines,
      this.setUpdates,
      this.pendingRefs,
    );
  }

  /**
   * Whether the rule's statements may name `word`: its text holds the word, or a variable (whose value
   * could). False means its statements, read again, do not name it — checked without reading them.
   */
  mayMention(word: string): boolean {
    let end = this.rangeLineStart;
    for (let l = this.startLine; l < this.endLine; l++) {
      const nl = this.text.indexOf('\n', end);
      if (nl < 0) break;
      end = nl + 1;
    }
    const span = this.text.slice(this.rangeLineStart + this.startChar, end + this.endChar);
    return span.includes(word) || span.includes('$');
  }

  /** The plain rule object a front end that keeps statements builds, for JSON and for comparisons. */
  toJSON(): NftRule {
    return {
      family: this.family,
      table: this.table,
      chain: this.chain,
      stmts: this.stmts,
      range: this.range,
      ...(this.comment !== undefined ? { comment: this.comment } : {}),
      ...(this.handle !== undefined ? { handle: this.handle } : {}),
    };
  }
}

let last: { rule: SourceRule | null; stmts: readonly NftStmt[] } = { rule: null, stmts: [] };

/** Where a rule's statements start, read before `parseRuleBody`; null when rules keep their statements. */
export interface BodyStart {
  readonly tok: Tok;
  readonly defines: ReadonlyMap<string, Define>;
}

export function bodyStart(cur: Cursor): BodyStart | null {
  if (!cur.compactRules) return null;
  const tok = cur.peek();
  const defines = cur.definesNow();
  cur.mark();
  return { tok, defines };
}

/** Reading the rule again from `start` gives the statements just read (see the file comment). */
export function canReadAgain(cur: Cursor, start: BodyStart | null): start is BodyStart {
  if (!start) return false;
  return !cur.readPrevBeforeMark() && cur.expansionsComplete();
}

/** The sets a rule's statements change (the scan lower.ts makes to mark sets dynamic). */
export function setUpdatesOf(stmts: readonly NftStmt[]): string[] | undefined {
  let out: string[] | undefined;
  for (const s of stmts) if (s.kind === 'setop') (out ??= []).push(s.set);
  return out;
}

/** Whether a rule's statements may name `word` (rules that keep their statements: always true). */
export function ruleMayMention(r: NftRule, word: string): boolean {
  return r instanceof SourceRule ? r.mayMention(word) : true;
}

/** The sets a rule's statements change, kept or read from them. */
export function ruleSetUpdates(r: NftRule): readonly string[] {
  if (r instanceof SourceRule) return r.setUpdates ?? [];
  return setUpdatesOf(r.stmts) ?? [];
}

/** What a front end knows of a rule just read. */
export interface ReadRule {
  readonly family: NftFamily;
  readonly table: string;
  readonly chain: string;
  readonly stmts: readonly NftStmt[];
  readonly range: Range;
  readonly comment: string | undefined;
  readonly handle: number | undefined;
}

/**
 * The rule just read: a `SourceRule` when it can be read again from `start` (then `declared` says which
 * chains and sets its table has now, to keep only the references that may fail), else the plain rule.
 */
export function makeRule(
  cur: Cursor,
  start: BodyStart | null,
  r: ReadRule,
  /** The token the rule's range starts at. */
  first: Tok,
  declared: (kind: RuleRef['kind'], name: string) => boolean,
): NftRule {
  if (!canReadAgain(cur, start)) {
    return {
      family: r.family,
      table: r.table,
      chain: r.chain,
      stmts: r.stmts,
      range: r.range,
      ...(r.comment !== undefined ? { comment: r.comment } : {}),
      ...(r.handle !== undefined ? { handle: r.handle } : {}),
    };
  }
  let pending: RuleRef[] | undefined;
  const stack: NftExpr[] = [];
  for (const s of r.stmts)
    stmtRefs(s, stack, (kind, name, range) => {
      if (!declared(kind, name)) (pending ??= []).push({ kind, name, range });
    });
  const tok = start.tok;
  return new SourceRule(
    r.family,
    r.table,
    r.chain,
    r.range,
    first.offset - first.col,
    r.comment,
    r.handle,
    cur.src,
    tok.offset,
    tok.line,
    tok.offset - tok.col,
    start.defines,
    setUpdatesOf(r.stmts),
    pending,
  );
}
