/**
 * Where a table's rules live while nothing has asked for them: one row of integers per rule (where its
 * line is in the dump's text, its line number, where its specification, counters and `-j`/`-g` target
 * are), in one Int32Array, and the chains as linked lists of rows. A chain builds its `Rule` objects
 * (`IptRule`, rule-node.ts) the first time its `rules` are read, and from then on holds them as an array;
 * the resolution at COMMIT (resolve.ts) and `packetlens check` (`validateRules` with `release`) read the
 * rows directly, so checking a 320k-rule dump allocates no object per rule. Every consumer still reads
 * the one model: `chain.rules` is the same array of rules it always was.
 */
import type { Family } from '../net/addr.ts';
import type { Counters, Table } from '../model.ts';
import { STANDARD_TARGETS } from '../targets/registry.ts';

/** `-j NAME` / `-g NAME` as found when the dump was read. */
export interface TargetRef {
  readonly kind: 'jump' | 'goto';
  readonly name: string;
  readonly start: number;
  readonly end: number;
}

// The fields of a row. Offsets other than LINE_START are characters of the rule's line.
const LINE_START = 0; // where the line starts in the text
const LINE_LEN = 1; // its length as iptables-restore reads it (no \r, up to a NUL)
const LINE_NO = 2; // 0-based line number
const SPEC = 3; // where the specification (after `-A CHAIN`) starts
const FIRST = 4; // where the line's first word starts (a `[pkts:bytes]` prefix or the command)
const COUNTERS_END = 5; // end of the `[pkts:bytes]` prefix that starts at FIRST, 0 without one
const T_KIND = 6; // 0: no target, 1: -j, 2: -g
const T_START = 7; // the target's range: the `-j` word…
const T_END = 8; // …to the end of its name
const T_NAME = 9; // where the name starts (it ends at T_END unless it was quoted: `names`)
const NEXT = 10; // the chain's next row, -1 at its end
const WIDTH = 11;

/** `[0:0]`, shared: every chain of a dump declares it. */
const ZERO_COUNTERS: Counters = Object.freeze({ packets: '0', bytes: '0' });

/** `[packets:bytes]` as iptables-save -c writes it, or null. */
export function parseCounters(text: string): Counters | null {
  if (text === '[0:0]') return ZERO_COUNTERS;
  // `^\[(\d+):(\d+)\]$` by hand: a dump has one per chain and, with -c, one per rule.
  const n = text.length;
  if (n < 5 || text.charCodeAt(0) !== 91 /* [ */ || text.charCodeAt(n - 1) !== 93 /* ] */) return null;
  const colon = text.indexOf(':');
  if (colon < 2 || colon > n - 3) return null;
  for (let i = 1; i < n - 1; i++) {
    const c = text.charCodeAt(i);
    if (i !== colon && (c < 48 || c > 57)) return null;
  }
  return { packets: text.slice(1, colon), bytes: text.slice(colon + 1, n - 1) };
}

/** The rows of one table's rules (rule-node.ts reads them; the reader and the commands add them). */
export class RuleRows {
  private cells = new Int32Array(WIDTH * 1024);
  private count = 0;
  /** Target names that are not the plain text of their range (a quoted `-j "NAME"`), by row. */
  private names: Map<number, string> | null = null;

  constructor(
    readonly text: string,
    readonly table: Table,
    readonly family: Family,
  ) {}

  /**
   * Adds a rule's row: where its line starts in the text and its length, its line number, and (in the
   * line) where its specification, first word and `[pkts:bytes]` prefix end are. `kind` is 0 without a
   * target, 1 for `-j`, 2 for `-g`; the target's range runs from `targetStart` to `targetEnd`, its name from
   * `nameStart` to `targetEnd` unless `quotedName` (a quoted `-j "NAME"`) says otherwise.
   */
  add(
    lineStart: number,
    lineLength: number,
    lineNo: number,
    specStart: number,
    first: number,
    countersEnd: number,
    kind: number,
    targetStart: number,
    nameStart: number,
    targetEnd: number,
    quotedName?: string,
  ): number {
    const row = this.count++;
    let cells = this.cells;
    const at = row * WIDTH;
    if (at + WIDTH > cells.length) {
      const grown = new Int32Array(cells.length * 2);
      grown.set(cells);
      this.cells = cells = grown;
    }
    cells[at + LINE_START] = lineStart;
    cells[at + LINE_LEN] = lineLength;
    cells[at + LINE_NO] = lineNo;
    cells[at + SPEC] = specStart;
    cells[at + FIRST] = first;
    cells[at + COUNTERS_END] = countersEnd;
    cells[at + T_KIND] = kind;
    cells[at + T_START] = targetStart;
    cells[at + T_END] = targetEnd;
    cells[at + T_NAME] = nameStart;
    cells[at + NEXT] = -1;
    if (quotedName !== undefined) (this.names ??= new Map()).set(row, quotedName);
    return row;
  }

  /** The rule's line as iptables-restore read it. */
  line(row: number): string {
    const at = row * WIDTH;
    const start = this.cells[at + LINE_START]!;
    return this.text.slice(start, start + this.cells[at + LINE_LEN]!);
  }

  /** Where the rule's line starts in `text`. */
  lineStart(row: number): number {
    return this.cells[row * WIDTH + LINE_START]!;
  }

  lineNo(row: number): number {
    return this.cells[row * WIDTH + LINE_NO]!;
  }

  lineLength(row: number): number {
    return this.cells[row * WIDTH + LINE_LEN]!;
  }

  specStart(row: number): number {
    return this.cells[row * WIDTH + SPEC]!;
  }

  first(row: number): number {
    return this.cells[row * WIDTH + FIRST]!;
  }

  /** The `[pkts:bytes]` prefix of the line, parsed (null without one). */
  counters(row: number): Counters | null {
    const at = row * WIDTH;
    const end = this.cells[at + COUNTERS_END]!;
    if (end === 0) return null;
    const start = this.cells[at + LINE_START]!;
    return parseCounters(this.text.slice(start + this.cells[at + FIRST]!, start + end));
  }

  /** 0: no target, 1: `-j`, 2: `-g`. */
  targetKind(row: number): number {
    return this.cells[row * WIDTH + T_KIND]!;
  }

  targetStart(row: number): number {
    return this.cells[row * WIDTH + T_START]!;
  }

  targetEnd(row: number): number {
    return this.cells[row * WIDTH + T_END]!;
  }

  /** The target's name (a rule without one: ''). */
  targetName(row: number): string {
    const at = row * WIDTH;
    if (this.cells[at + T_KIND] === 0) return '';
    const quoted = this.names?.get(row);
    if (quoted !== undefined) return quoted;
    const start = this.cells[at + LINE_START]!;
    return this.text.slice(start + this.cells[at + T_NAME]!, start + this.cells[at + T_END]!);
  }

  /** Whether the target's name is `name`, without making a string of it. */
  targetNameIs(row: number, name: string): boolean {
    const at = row * WIDTH;
    const cells = this.cells;
    if (cells[at + T_KIND] === 0) return false;
    if (this.names?.has(row)) return this.names.get(row) === name;
    const from = cells[at + T_NAME]!;
    return cells[at + T_END]! - from === name.length && this.text.startsWith(name, cells[at + LINE_START]! + from);
  }

  /** A small number equal target names share (from their length and last character), to index a cache. */
  targetNameKey(row: number): number {
    const at = row * WIDTH;
    const cells = this.cells;
    const end = cells[at + T_END]!;
    return ((end - cells[at + T_NAME]!) * 31 + this.text.charCodeAt(cells[at + LINE_START]! + end - 1)) & 255;
  }

  /**
   * Whether the target is `-j` to a standard verdict (ACCEPT, DROP, RETURN, QUEUE): its first character
   * and length rule out most names without making a string of them.
   */
  targetIsStandard(row: number): boolean {
    const at = row * WIDTH;
    if (this.cells[at + T_KIND] !== 1) return false;
    const length = this.cells[at + T_END]! - this.cells[at + T_NAME]!;
    const c = this.text.charCodeAt(this.cells[at + LINE_START]! + this.cells[at + T_NAME]!);
    const maybe = (length === 6 && (c === 65 || c === 82)) || (length === 4 && c === 68) || (length === 5 && c === 81);
    return (maybe || this.names?.has(row) === true) && STANDARD_TARGETS.has(this.targetName(row));
  }

  targetRef(row: number): TargetRef | null {
    const kind = this.targetKind(row);
    if (kind === 0) return null;
    return {
      kind: kind === 2 ? 'goto' : 'jump',
      name: this.targetName(row),
      start: this.targetStart(row),
      end: this.targetEnd(row),
    };
  }

  next(row: number): number {
    return this.cells[row * WIDTH + NEXT]!;
  }

  setNext(row: number, next: number): void {
    this.cells[row * WIDTH + NEXT] = next;
  }
}
