/**
 * A rule of a parsed dump and the chain that holds it. Reading a dump records, for every rule, only a row
 * (rule-store.ts): its line, and where its specification and `-j`/`-g` target are. A chain makes its rules'
 * objects when its `rules` are first read, and a rule compiles the rest (header checks, match modules,
 * target options) the first time something asks for it — a trace touches a few dozen of a 300k-rule
 * dump's rules — or for all rules at once by `validateRules`, which also collects their diagnostics.
 */
import { type Diagnostic, type Range, clipWords } from '../diagnostics.ts';
import type { Family } from '../net/addr.ts';
import type { CompileContext } from '../matches/types.ts';
import type { BaseChainInfo, Chain, Counters, IpMatch, MatchInstance, Rule, Table, TargetInstance } from '../model.ts';
import { STANDARD_TARGETS } from '../targets/registry.ts';
import { type PendingTarget, RuleSpecParser } from './rule.ts';
import type { RuleRows, TargetRef } from './rule-store.ts';
import { TokenBuffer } from './tokenize.ts';

export type { TargetRef } from './rule-store.ts';

const MODULE_WORD = new Map<string, RegExp>();

/** Whether `rule` loads match module `name`, without compiling an iptables rule to find out. */
export function loadsModule(rule: Rule, name: string): boolean {
  return rule instanceof IptRule ? rule.loadsModule(name) : rule.matches.some(m => m.module.name === name);
}

/** The rule's `-j NAME` / `-g NAME` without compiling an iptables rule (null when it has none). */
export function targetNameOf(rule: Rule): TargetRef | null {
  if (rule instanceof IptRule) return rule.targetRef;
  const t = rule.target;
  if (!t) return null;
  switch (t.kind) {
    case 'verdict':
      return { kind: 'jump', name: t.verdict, start: t.start, end: t.end };
    case 'target':
      return { kind: 'jump', name: t.module.name, start: t.start, end: t.end };
    case 'unknown':
      return { kind: 'jump', name: t.name, start: t.start, end: t.end };
    default:
      return { kind: t.kind, name: t.chain, start: t.start, end: t.end };
  }
}

interface Compiled {
  readonly ip: IpMatch;
  readonly matches: readonly MatchInstance[];
  readonly target: TargetInstance | null;
  readonly comment: string | null;
  readonly counters: Counters | null;
  readonly diagnostics: Diagnostic[] | null;
}

// One tokenizer and one rule parser serve every lazy compilation; compilation is synchronous and never
// re-entrant, so sharing them is safe.
const sharedTokens = new TokenBuffer();
let sink: Diagnostic[] = [];
const sharedParser = new RuleSpecParser((code, severity, message, line, start, end) => {
  sink.push({
    code,
    severity,
    message: clipWords(message),
    range: { start: { line, character: start }, end: { line, character: end } },
  });
});

/**
 * At most this many rules of one table stay compiled at once; compiling one more forgets the compiled form
 * of the table's oldest (rebuilt, the same, if it is asked for again, as after `release`). A comparison of
 * two 320k-rule dumps whose classes reach every rule kept 0.9 GB of compiled rules; a trace compiles a few
 * dozen, a class of the comparison a few hundred.
 */
export const MAX_COMPILED_PER_TABLE = 32_768;

/** The rules of one table compiled most recently: a ring, `next` its oldest slot. */
interface CompiledRing {
  readonly rules: (IptRule | undefined)[];
  next: number;
}

const rings = new WeakMap<Table, CompiledRing>();

export class IptRule implements Rule {
  index = 0;
  private compiled: Compiled | null = null;
  /** This rule's slot in its table's ring while it is compiled, else -1. */
  private slot = -1;

  constructor(
    private readonly rows: RuleRows,
    private readonly row: number,
    public chain: string,
  ) {}

  get table(): string {
    return this.rows.table.name;
  }

  get line(): number {
    return this.rows.lineNo(this.row);
  }

  /**
   * The source line as iptables-restore read it (no \r, up to a NUL). Read from the text on each access, not
   * kept: a comparison of two 320k-rule dumps reads every rule's, and keeping them (and the target
   * references) held 65 MB more than the rules themselves.
   */
  get raw(): string {
    return this.rows.line(this.row);
  }

  get specStart(): number {
    return this.rows.specStart(this.row);
  }

  /** `-j NAME` / `-g NAME` as found when the dump was read (null when the rule has none). */
  get targetRef(): TargetRef | null {
    return this.rows.targetRef(this.row);
  }

  /**
   * Whether the rule loads match module `name` (`-m name` / `--match name`). Once compiled the answer
   * comes from the compiled matches; before, from the words as read, so that long scans (chain hovers,
   * the diff's transparent jumps, affinity) need not compile every rule to ask.
   */
  loadsModule(name: string): boolean {
    if (this.compiled) return this.compiled.matches.some(m => m.explicit && m.module.name === name);
    let re = MODULE_WORD.get(name);
    if (!re)
      MODULE_WORD.set(name, (re = new RegExp(`(?:^|\\s)(?:-m|--match)\\s+${name.replace(/[^\w-]/g, '')}(?=\\s|$)`)));
    return re.test(this.raw.slice(this.specStart));
  }

  get range(): Range {
    return {
      start: { line: this.line, character: this.rows.first(this.row) },
      end: { line: this.line, character: this.rows.lineLength(this.row) },
    };
  }

  get ip(): IpMatch {
    return this.compile().ip;
  }

  get matches(): readonly MatchInstance[] {
    return this.compile().matches;
  }

  get target(): TargetInstance | null {
    return this.compile().target;
  }

  get comment(): string | null {
    return this.compile().comment;
  }

  get counters(): Counters | null {
    return this.rows.counters(this.row) ?? this.compile().counters;
  }

  /** Diagnostics of the rule's options (compiling it if needed). */
  diagnostics(): readonly Diagnostic[] {
    return this.compile().diagnostics ?? [];
  }

  /** The diagnostics of the rule's options without keeping its compiled form (`checkRowDiagnostics`). */
  checkDiagnostics(): readonly Diagnostic[] {
    if (this.compiled) return this.compiled.diagnostics ?? [];
    return checkRowDiagnostics(this.rows, this.row);
  }

  isCompiled(): boolean {
    return this.compiled !== null;
  }

  /** Forgets the compiled form (it is rebuilt on demand): a whole-file check keeps only the diagnostics. */
  release(): void {
    this.compiled = null;
    this.slot = -1;
  }

  /** Takes the oldest slot of the table's ring, forgetting the compiled form of the rule that held it. */
  private remember(): void {
    const table = this.rows.table;
    let ring = rings.get(table);
    if (!ring) rings.set(table, (ring = { rules: [], next: 0 }));
    const old = ring.rules[ring.next];
    if (old && old.slot === ring.next) old.release();
    ring.rules[ring.next] = this;
    this.slot = ring.next;
    ring.next = (ring.next + 1) % MAX_COMPILED_PER_TABLE;
  }

  private compile(): Compiled {
    if (this.compiled) return this.compiled;
    const diags: Diagnostic[] = [];
    const rows = this.rows;
    let compiled: Compiled | null = null;
    // Read in place from the dump's text, as `checkRowDiagnostics` does: the same words as from `raw`, without
    // reading them through a slice of the line.
    const at = rows.lineStart(this.row);
    const len = rows.lineLength(this.row);
    readSpec(rows.text, at, len, rows.specStart(this.row), rows.lineNo(this.row), rows.family, diags, spec => {
      const target = spec.target ? compileTarget(rows.table, spec.target, rows.family, spec.ip, diags) : null;
      compiled = {
        ip: spec.ip,
        matches: spec.matches,
        target,
        comment: spec.comment,
        counters: spec.counters,
        diagnostics: diags.length ? diags : null,
      };
    });
    this.compiled = compiled!;
    this.remember();
    return this.compiled;
  }
}

/** Reads a rule's words once more (the shared tokens and parser), with diagnostics going to `diags`. */
function readSpec(
  text: string,
  lineStart: number,
  lineLength: number,
  specStart: number,
  lineNo: number,
  family: Family,
  diags: Diagnostic[],
  use: (spec: ReturnType<typeof sharedParser.parse>) => void,
): void {
  const outer = sink;
  sink = diags;
  try {
    sharedTokens.fillText(text, lineStart, specStart, lineLength);
    use(sharedParser.parse(sharedTokens, 0, lineNo, family));
  } finally {
    sink = outer;
  }
}

/**
 * The diagnostics of a row's options without making its rule object or keeping a compiled form (what a
 * whole-file check needs): the same words, parser and target compilation as `IptRule.compile`, minus what
 * only a trace reads — a target with no options and no extension of its name (a chain, a verdict or an
 * unknown name) has no diagnostics, so it is not looked up.
 */
export function checkRowDiagnostics(rows: RuleRows, row: number): Diagnostic[] {
  const diags: Diagnostic[] = [];
  const at = rows.lineStart(row);
  readSpec(rows.text, at, rows.lineLength(row), rows.specStart(row), rows.lineNo(row), rows.family, diags, spec => {
    const p = spec.target;
    if (p && (p.options.length > 0 || p.module)) compileTarget(rows.table, p, rows.family, spec.ip, diags);
  });
  return diags;
}

function pendingRange(p: PendingTarget): Range {
  return { start: { line: p.line, character: p.start }, end: { line: p.line, character: p.end } };
}

function optionNames(p: PendingTarget): string {
  return p.options.map(o => o.name).join(' ');
}

/**
 * The compile-time half of target resolution: the same classification as the structural pass
 * (resolve.ts), plus the target extension's own options.
 */
function compileTarget(
  table: Table,
  p: PendingTarget,
  family: Family,
  ip: IpMatch,
  diags: Diagnostic[],
): TargetInstance {
  if (p.kind === 'jump' && STANDARD_TARGETS.has(p.name)) {
    if (p.options.length)
      diags.push({
        code: 'unknown-option',
        severity: 'error',
        message: `${p.name} takes no options (${optionNames(p)})`,
        range: pendingRange(p),
      });
    return { kind: 'verdict', verdict: p.name as 'ACCEPT', start: p.start, end: p.end };
  }
  if (table.chains.has(p.name)) {
    if (p.options.length)
      diags.push({
        code: 'unknown-option',
        severity: 'error',
        message: `a jump to chain ${p.name} takes no options (${optionNames(p)})`,
        range: pendingRange(p),
      });
    return { kind: p.kind, chain: p.name, start: p.start, end: p.end };
  }
  const mod = p.kind === 'jump' ? p.module : null;
  if (!mod) return { kind: 'unknown', name: p.name, options: p.options, start: p.start, end: p.end };
  const ctx: CompileContext = {
    family,
    proto: ip.proto && !ip.proto.negated ? ip.proto.value : null,
    report(option, code, message, severity = 'error') {
      const range = option
        ? { start: { line: option.line, character: option.start }, end: { line: option.line, character: option.end } }
        : pendingRange(p);
      diags.push({ code, severity, message: `${mod.name}: ${message}`, range });
    },
  };
  return {
    kind: 'target',
    module: mod,
    spec: mod.compile(p.options, ctx),
    options: p.options,
    start: p.start,
    end: p.end,
  };
}

/**
 * An iptables chain: its rules are rows of the table's `RuleRows` (rule-store.ts) until `rules` is first
 * read, then an array of `IptRule` objects, which commands such as `-I`, `-D` and `-F` edit. Its range (the
 * name in its declaration) is kept as two numbers and made an object when asked for: a 320k-rule dump
 * declares 110k chains, and three objects each were a tenth of what the reader kept.
 */
export class IptChain implements Chain {
  declare readonly base?: BaseChainInfo;
  private list: Rule[] | null = null;
  /** The chain's first and last rows and their number, while `list` is null. */
  private head = -1;
  private tail = -1;
  private size = 0;
  /** Its place among its table's chains while the table is resolved (resolve.ts). */
  ordinal = -1;
  /**
   * The chain declared next in the dump (set by the reader): rules usually come in the order their chains
   * were declared, so the reader finds a rule's chain among a few such guesses before looking its name up.
   */
  declaredNext: IptChain | null = null;
  /** Replaced (`moved`) or deleted (`-X`): no longer the table's chain of its name, so never a guess. */
  retired = false;

  constructor(
    readonly name: string,
    readonly table: string,
    readonly builtin: boolean,
    base: BaseChainInfo | undefined,
    public policy: 'ACCEPT' | 'DROP' | null,
    public counters: Counters | null,
    readonly line: number,
    /** The range's first and last character on `line`. */
    private readonly from: number,
    private readonly to: number,
    readonly rows: RuleRows,
  ) {
    if (base) (this as { base?: BaseChainInfo }).base = base;
  }

  get range(): Range {
    return { start: { line: this.line, character: this.from }, end: { line: this.line, character: this.to } };
  }

  /** The same chain, rules included, under another name, line or range (`-E`, a built-in chain declared again). */
  moved(name: string, line: number, from: number, to: number): IptChain {
    this.retired = true;
    const c = new IptChain(
      name,
      this.table,
      this.builtin,
      this.base,
      this.policy,
      this.counters,
      line,
      from,
      to,
      this.rows,
    );
    c.list = this.list;
    c.head = this.head;
    c.tail = this.tail;
    c.size = this.size;
    return c;
  }

  get rules(): Rule[] {
    if (this.list === null) {
      const rows = this.rows;
      // Made at its size (the chain's rows are counted): a pushed-to `[]` keeps room for at least 17.
      const list: Rule[] = new Array<Rule>(this.size);
      let k = 0;
      for (let r = this.head; r >= 0; r = rows.next(r)) {
        const rule = new IptRule(rows, r, this.name);
        rule.index = k + 1;
        if (k < list.length) list[k] = rule;
        else list.push(rule);
        k++;
      }
      list.length = k;
      this.list = list;
    }
    return this.list;
  }

  set rules(rules: Rule[]) {
    this.list = rules;
  }

  /** Whether the rules are still rows (from `firstRow` on, `rows.next`), not yet objects. */
  get inRows(): boolean {
    return this.list === null;
  }

  get firstRow(): number {
    return this.head;
  }

  get ruleCount(): number {
    return this.list === null ? this.size : this.list.length;
  }

  /** Appends the rule of `row`: linked while the chain is rows, an object once it is an array. */
  append(row: number): void {
    if (this.list !== null) {
      this.list.push(new IptRule(this.rows, row, this.name));
      return;
    }
    if (this.size === 0) this.head = row;
    else this.rows.setNext(this.tail, row);
    this.tail = row;
    this.size++;
  }
}

/** The number of rules of any chain, without making objects of an iptables chain's rows. */
export function ruleCountOf(chain: Chain): number {
  return chain instanceof IptChain ? chain.ruleCount : chain.rules.length;
}
