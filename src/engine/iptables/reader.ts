/**
 * The line loop of the iptables-save / iptables-restore reader: splits the text into lines as
 * iptables-restore reads them (a trailing \r kept, a NUL ending the line), skips comments, and hands each
 * line to the one place that knows its kind: `*table`, `COMMIT`, `:CHAIN` declarations here, the fast path
 * for `-A` lines (find-target.ts), every other command to its handler (commands.ts).
 */
import {
  type Diagnostic,
  type DiagnosticCode,
  type Range,
  type Severity,
  clip,
  clipWords,
  lineRange,
} from '../diagnostics.ts';
import type { Family } from '../net/addr.ts';
import { type Chain, type Ruleset, type Table, TABLE_HOOKS, bare, iptablesBase } from '../model.ts';
import { lostLineBreaks } from './line-breaks.ts';
import { argvLimit } from './line-limits.ts';
import { BOM } from './encoding.ts';
import { TokenBuffer } from './tokenize.ts';
import { resolveTable } from './resolve.ts';
import { type FastAppendState, fastAppend, parseCounters, unterminatedQuoteMessage } from './find-target.ts';
import { type CommandLine, COMMANDS, unknownCommand } from './commands.ts';
import { IptChain, ruleCountOf } from './rule-node.ts';
import { RuleRows } from './rule-store.ts';

const BUILTIN_CHAINS: Record<string, string[]> = bare(
  Object.fromEntries(Object.entries(TABLE_HOOKS).map(([t, v]) => [t, Object.keys(v.hooks)])),
);

/** A chain declaration's words and where they are in its line (-1: the word is missing). */
interface DeclarationWords {
  readonly name: string;
  readonly cstart: number;
  readonly cend: number;
  readonly policy: string | undefined;
  readonly policyStart: number;
  readonly policyEnd: number;
  readonly counters: string | undefined;
  readonly countersStart: number;
  readonly countersEnd: number;
}

/** Characters that make the tokenizer read a declaration differently from splitting it at its spaces. */
const PLAIN_DECLARATION_REFUSES = /[\t"\\\r]/;

/** The state of one reading: the tables so far, the open table, the diagnostics. */
export class RestoreReader {
  readonly diagnostics: Diagnostic[] = [];
  readonly tables = new Map<string, Table>();
  table: Table | null = null;
  /** The rows of the open table's rules (rule-store.ts). */
  rows: RuleRows | null = null;
  /** Where the line being read starts in the text. */
  lineStart = 0;
  private tableCommitted = true;
  /** Lines read so far (the 0-based number of the next line). */
  private lineNo = 0;
  private readonly tok = new TokenBuffer();
  private readonly fast: FastAppendState = { error: null, chain: null, prev: null };
  /** The open table's chain declared last (`IptChain.declaredNext`). */
  private lastDeclared: IptChain | null = null;
  private crlfReported = false;
  private nulReported = false;

  constructor(
    private readonly text: string,
    readonly file: string,
    readonly family: Family,
    /** The text was decoded from UTF-8 with a byte-order mark that it no longer shows (an editor's document). */
    private readonly decodedBom = false,
  ) {}

  report(code: DiagnosticCode, severity: Severity, message: string, line: number, start: number, end: number): void {
    this.diagnostics.push({
      code,
      severity,
      message: clipWords(message),
      range: { start: { line, character: start }, end: { line, character: end } },
    });
  }

  /** Reads every line and returns the ruleset (rules not compiled yet). */
  read(): Ruleset {
    const text = this.text;
    const len = text.length;
    let pos = 0;
    const bom = text.charCodeAt(0) === BOM;
    if (bom || this.decodedBom) {
      if (bom) pos = 1;
      this.diagnostics.push({
        code: 'bad-argument',
        severity: 'error',
        message: `the file starts with a UTF-8 byte-order mark (U+FEFF): iptables-restore refuses it ("line 1 failed"); save it as UTF-8 without BOM. The rest is read as if it were not there`,
        range: lineRange(0, 0, 1),
      });
    }
    while (pos <= len) {
      let eol = text.indexOf('\n', pos);
      if (eol < 0) eol = len;
      const thisLine = this.lineNo;
      const line = this.clean(text.slice(pos, eol), thisLine);
      this.lineStart = pos;
      pos = eol + 1;
      this.lineNo++;
      this.readLine(line, thisLine);
    }
    this.finishTable();
    let total = 0;
    for (const t of this.tables.values()) for (const c of t.chains.values()) total += ruleCountOf(c);
    return {
      family: this.family,
      file: this.file,
      tables: this.tables,
      diagnostics: this.diagnostics,
      ruleCount: total,
      lineCount: this.lineNo,
    };
  }

  /** The line as iptables-restore sees it: without its \r (reported once), up to its first NUL (reported once). */
  private clean(line: string, thisLine: number): string {
    if (line.charCodeAt(line.length - 1) === 13) {
      // iptables-restore keeps the \r as part of the last word: `*filter\r` is no table.
      line = line.slice(0, -1);
      if (!this.crlfReported && line.length) {
        this.crlfReported = true;
        this.report(
          'bad-argument',
          'error',
          `this file has Windows line ends (\\r\\n): iptables-restore refuses it at line ${thisLine + 1} (it keeps the \\r in the last word, e.g. "unable to initialize table 'filter\\r'"); convert it with dos2unix. The rest is read without the \\r`,
          thisLine,
          line.length,
          line.length + 1,
        );
      }
    }
    const nulAt = line.indexOf('\0');
    if (nulAt >= 0) {
      if (!this.nulReported) {
        this.nulReported = true;
        this.report(
          'binary-input',
          'error',
          `NUL byte (\\0) in this line: iptables-restore reads a line only up to its first NUL, so it sees ${JSON.stringify(clip(line.slice(0, nulAt), 120))}; remove the NUL bytes (later lines with NULs are read the same way)`,
          thisLine,
          nulAt,
          nulAt + 1,
        );
      }
      line = line.slice(0, nulAt);
    }
    return line;
  }

  private readLine(line: string, thisLine: number): void {
    let k = 0;
    while (k < line.length && (line.charCodeAt(k) === 32 || line.charCodeAt(k) === 9)) k++;
    // A comment or table line that long is likely a whole file whose line breaks were lost.
    if (line.length > 120 && (line.charCodeAt(k) === 35 || line.charCodeAt(k) === 42)) this.checkLost(line, thisLine);
    if (k >= line.length || line.charCodeAt(k) === 35 /* # */ || (k === line.length - 1 && line.charCodeAt(k) === 13)) {
      // iptables-restore skips empty lines and comments, but a line of spaces or tabs reaches its command
      // parser with no words and fails: "no command specified", "Error occurred at line: N"
      // (iptables/iptables-restore.c; checked with iptables-legacy-restore and iptables-nft-restore 1.8.9).
      if (k > 0 && (k >= line.length || line.charCodeAt(k) === 13)) {
        this.report(
          'whitespace-line',
          'error',
          `this line holds only ${line.charCodeAt(0) === 9 ? 'tabs or spaces' : 'spaces'}: iptables-restore refuses the file here ("no command specified"; line ${thisLine + 1} failed); delete the spaces or the line`,
          thisLine,
          0,
          k,
        );
      }
      return;
    }
    const c0 = line.charCodeAt(k);
    const limit = argvLimit(line);
    if (limit) {
      this.checkLost(line, thisLine);
      this.report('bad-argument', 'error', limit, thisLine, k, Math.min(line.length, k + 200));
      return;
    }
    if (c0 === 42 /* * */) return this.tableHeader(line, k, thisLine);
    if (line.startsWith('COMMIT', k)) {
      if (!this.table) this.report('rule-outside-table', 'error', `COMMIT outside a table`, thisLine, k, k + 6);
      else {
        this.tableCommitted = true;
        this.finishTable();
      }
      return;
    }
    if (c0 === 58 /* : */ && k === 0 && this.plainDeclaration(line, thisLine)) return;
    if (this.table && fastAppend(line, this.lineStart, k, c0, this.table, this.rows!, thisLine, this.fast)) {
      if (line.length > 2000) this.checkLost(line, thisLine);
      return;
    }
    this.wordsLine(line, k, c0, thisLine);
  }

  /** A line that needs its words: a chain declaration or a command. */
  private wordsLine(line: string, k: number, c0: number, thisLine: number): void {
    const tok = this.tok;
    this.forgetChains();
    const err = this.fast.error;
    if (err) {
      this.report('bad-argument', 'error', `'${err}' is not a [packets:bytes] counter`, thisLine, k, k + err.length);
      this.fast.error = null;
    }
    if (line.length > 120) this.checkLost(line, thisLine);
    tok.fill(line);
    if (tok.unterminatedQuoteAt >= 0)
      this.report(
        'unterminated-quote',
        'warning',
        unterminatedQuoteMessage(line, tok.unterminatedQuoteAt),
        thisLine,
        tok.unterminatedQuoteAt,
        line.length,
      );
    if (tok.count === 0) return;
    if (c0 === 58 /* : */) return this.chainDeclaration(line, k, thisLine);
    let first = 0;
    let countersEnd = 0;
    if (c0 === 91 /* [ */) {
      const counters = parseCounters(tok.text[0]!);
      if (counters) countersEnd = tok.end[0]!;
      else
        this.report(
          'bad-argument',
          'error',
          `'${tok.text[0]}' is not a [packets:bytes] counter`,
          thisLine,
          tok.start[0]!,
          tok.end[0]!,
        );
      first = 1;
    }
    const cmd = tok.text[first] ?? '';
    if (!this.table) {
      this.report(
        'rule-outside-table',
        'error',
        `'${cmd}' outside a table: start a table with a line such as '*filter'`,
        thisLine,
        tok.start[first]!,
        line.length,
      );
      return;
    }
    const c: CommandLine = {
      reader: this,
      table: this.table,
      tok,
      first,
      cmd,
      chainName: tok.text[first + 1],
      line,
      lineNo: thisLine,
      k,
      countersEnd,
    };
    (COMMANDS.get(cmd) ?? unknownCommand)(c);
  }

  /** `*table`: closes the open table and opens this one with its built-in chains. */
  private tableHeader(line: string, k: number, thisLine: number): void {
    this.finishTable();
    const name = line.slice(k + 1).trim();
    const range: Range = { start: { line: thisLine, character: k }, end: { line: thisLine, character: line.length } };
    if (!TABLE_HOOKS[name])
      this.report(
        'unknown-table',
        'error',
        `unknown table '${name}' (raw, mangle, nat, filter, security)`,
        thisLine,
        k,
        line.length,
      );
    if (this.tables.has(name))
      this.report(
        'duplicate-chain',
        'warning',
        `table ${name} appears again: iptables-restore flushes it and reads this section instead`,
        thisLine,
        k,
        line.length,
      );
    const family = this.family;
    const t: Table = {
      name,
      kind: TABLE_HOOKS[name]?.kind ?? 'filter',
      family: family === 6 ? 'ip6' : 'ip',
      line: thisLine,
      range,
      chains: new Map(),
    };
    const rows = new RuleRows(this.text, t, family);
    for (const b of BUILTIN_CHAINS[name] ?? []) {
      // Built-in chains exist even when a hand-written file does not declare them; their policy is ACCEPT.
      // They are base chains at the table's fixed hook and priority (TABLE_HOOKS).
      t.chains.set(
        b,
        new IptChain(b, name, true, iptablesBase(name, b, family), 'ACCEPT', null, thisLine, k, line.length, rows),
      );
    }
    this.rows = rows;
    this.tables.set(name, t);
    this.table = t;
    this.tableCommitted = false;
  }

  /**
   * `:CHAIN POLICY [pkts:bytes]` written plainly (three words, one space apart, no tab, quote, backslash or
   * carriage return): declared without the tokenizer, as the general path would (110k of a 320k-rule
   * dump's lines). Returns false for any other line.
   */
  private plainDeclaration(line: string, thisLine: number): boolean {
    if (line.length > 120) return false;
    const a = line.indexOf(' ');
    const b = a < 0 ? -1 : line.indexOf(' ', a + 1);
    if (b < 0 || a === 1 || b === a + 1 || b === line.length - 1 || line.indexOf(' ', b + 1) >= 0) return false;
    if (PLAIN_DECLARATION_REFUSES.test(line)) return false;
    this.forgetChains();
    this.declareChain(line, 0, thisLine, {
      name: line.slice(1, a),
      cstart: 1,
      cend: a,
      policy: line.slice(a + 1, b),
      policyStart: a + 1,
      policyEnd: b,
      counters: line.slice(b + 1),
      countersStart: b + 1,
      countersEnd: line.length,
    });
    return true;
  }

  /**
   * `:CHAIN POLICY [pkts:bytes]`, its words read by the tokenizer. (The buffer keeps an earlier line's words
   * past `count`: a declaration without a policy or counters has none, not those.)
   */
  private chainDeclaration(line: string, k: number, thisLine: number): void {
    const tok = this.tok;
    const n = tok.count;
    this.declareChain(line, k, thisLine, {
      name: tok.text[0]!.slice(1),
      cstart: tok.start[0]! + 1,
      cend: tok.end[0]!,
      policy: n > 1 ? tok.text[1] : undefined,
      policyStart: n > 1 ? tok.start[1]! : -1,
      policyEnd: n > 1 ? tok.end[1]! : -1,
      counters: n > 2 ? tok.text[2] : undefined,
      countersStart: n > 2 ? tok.start[2]! : -1,
      countersEnd: n > 2 ? tok.end[2]! : -1,
    });
  }

  /** Declares a chain from the words of its declaration and where they are in the line. */
  private declareChain(line: string, k: number, thisLine: number, w: DeclarationWords): void {
    const { name, cstart, cend } = w;
    const table = this.table;
    const policy = w.policy ?? '-';
    const counterText = w.counters;
    if (!table) {
      this.report(
        'chain-outside-table',
        'error',
        `chain ${name} is declared outside a table (add a '*filter' or '*nat' line first)`,
        thisLine,
        cstart,
        cend,
      );
      return;
    }
    if (name === '') {
      this.report('bad-argument', 'error', `chain declaration without a name`, thisLine, k, line.length);
      return;
    }
    // iptables-restore.c: `policy = strtok(NULL, " \t\n"); if (!policy) … "line N policy invalid"` (both
    // back ends, test/fixtures/kernel/restore-refusals/no-policy.rules). Read on as if it were '-'.
    if (w.policy === undefined)
      this.report(
        'missing-argument',
        'error',
        `chain ${name} is declared without a policy: iptables-restore refuses the file ("line ${thisLine + 1} policy invalid"); write '-' for a user chain, ACCEPT or DROP for a built-in one`,
        thisLine,
        cstart,
        cend,
      );
    const ctr = counterText ? parseCounters(counterText) : null;
    if (counterText && !ctr)
      this.report(
        'bad-argument',
        'warning',
        `'${counterText}' is not [packets:bytes]`,
        thisLine,
        w.countersStart,
        w.countersEnd,
      );
    const existing = table.chains.get(name);
    if (existing?.builtin) {
      // iptables-restore leaves the policy unchanged for '-' (`iptables-restore.c`).
      if (policy === 'ACCEPT' || policy === 'DROP') existing.policy = policy;
      else if (policy !== '-')
        this.report(
          'bad-argument',
          'error',
          `built-in chain ${name} needs policy ACCEPT, DROP or -, not '${policy}'`,
          thisLine,
          w.policyStart,
          w.policyEnd,
        );
      existing.counters = ctr;
      const range: Range = { start: { line: thisLine, character: cstart }, end: { line: thisLine, character: cend } };
      table.chains.set(
        name,
        existing instanceof IptChain
          ? existing.moved(name, thisLine, cstart, cend)
          : { ...existing, line: thisLine, range },
      );
    } else if (existing && existing.line !== table.line) {
      this.report(
        'duplicate-chain',
        'error',
        `chain ${name} is declared twice (first on line ${existing.line + 1})`,
        thisLine,
        cstart,
        cend,
      );
    } else {
      if (policy !== '-')
        this.report(
          'policy-on-user-chain',
          'error',
          `user chain ${name} cannot have a policy ('${policy}'): only built-in chains have one; write '-'`,
          thisLine,
          w.policyStart,
          w.policyEnd,
        );
      if (name.length > 28)
        this.report('bad-argument', 'error', `chain name ${name} is longer than 28 characters`, thisLine, cstart, cend);
      if (existing instanceof IptChain) existing.retired = true;
      const chain = new IptChain(name, table.name, false, undefined, null, ctr, thisLine, cstart, cend, this.rows!);
      table.chains.set(name, chain);
      if (this.lastDeclared) this.lastDeclared.declaredNext = chain;
      this.lastDeclared = chain;
    }
  }

  /** At COMMIT, the next `*table` or the end: resolves the open table's targets (and reports a missing COMMIT). */
  private finishTable(): void {
    const table = this.table;
    if (table) {
      resolveTable(table, this.family, this.diagnostics);
      if (!this.tableCommitted) {
        const text = this.text;
        const lineNo = this.lineNo;
        const cut =
          text.length > 0 && text.charCodeAt(text.length - 1) !== 10
            ? `; the file ends in the middle of line ${lineNo}, so it was probably cut off`
            : '';
        this.report(
          'missing-commit',
          'error',
          `table ${clip(table.name, 40)} (line ${table.line + 1}) has no COMMIT: iptables-restore refuses the file ("COMMIT expected at line ${lineNo + (cut ? 1 : 0)}")${cut}; it is read as if committed`,
          table.line,
          0,
          table.name.length + 1,
        );
      }
    }
    this.table = null;
    this.rows = null;
    this.forgetChains();
    this.lastDeclared = null;
    this.tableCommitted = true;
  }

  /** Another line than a fast-path rule may add, delete or rename chains: the fast path's guesses start again. */
  private forgetChains(): void {
    this.fast.chain = null;
    this.fast.prev = null;
  }

  private checkLost(line: string, at: number): void {
    const lost = lostLineBreaks(line);
    if (lost) this.report('line-breaks-lost', 'error', lost, at, 0, Math.min(line.length, 200));
  }

  /**
   * The open table's chain `name`; an undeclared one is reported and, when `create`, created so the rest of
   * the file still reads.
   */
  getChain(name: string, line: number, start: number, end: number, create: boolean): Chain | null {
    const table = this.table;
    if (!table) return null;
    const c = table.chains.get(name);
    if (c) return c;
    this.report(
      'unknown-chain',
      'error',
      `chain ${name} is not declared in table ${table.name}${create ? '; it is created here so the rest of the file still reads' : ''}`,
      line,
      start,
      end,
    );
    if (!create) return null;
    const chain = new IptChain(name, table.name, false, undefined, null, null, line, start, end, this.rows!);
    table.chains.set(name, chain);
    return chain;
  }
}
