/**
 * A rule of a parsed dump. Reading a dump records, for every rule, only what the structure needs: its
 * chain, its line, and where its `-j`/`-g` target is. The rest (header checks, match modules, target
 * options) is compiled the first time something asks for it — a trace touches a few dozen of a 300k-rule
 * dump's rules — or for all rules at once by `validateRules`, which also collects their diagnostics.
 */
import { type Diagnostic, type Range, clipWords } from '../diagnostics.ts';
import type { Family } from '../net/addr.ts';
import type { CompileContext } from '../matches/types.ts';
import type { Counters, IpMatch, MatchInstance, Rule, Table, TargetInstance } from '../model.ts';
import { STANDARD_TARGETS } from '../targets/registry.ts';
import { type PendingTarget, RuleSpecParser } from './rule.ts';
import { TokenBuffer } from './tokenize.ts';

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

/** `-j NAME` / `-g NAME` as found when the dump was read. */
export interface TargetRef {
  readonly kind: 'jump' | 'goto';
  readonly name: string;
  readonly start: number;
  readonly end: number;
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
    private readonly tableRef: Table,
    public chain: string,
    readonly line: number,
    readonly raw: string,
    private readonly prefixCounters: Counters | null,
    readonly specStart: number,
    private readonly startChar: number,
    readonly targetRef: TargetRef | null,
    private readonly family: Family,
  ) {}

  get table(): string {
    return this.tableRef.name;
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
      start: { line: this.line, character: this.startChar },
      end: { line: this.line, character: this.raw.length },
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
    return this.prefixCounters ?? this.compile().counters;
  }

  /** Diagnostics of the rule's options (compiling it if needed). */
  diagnostics(): readonly Diagnostic[] {
    return this.compile().diagnostics ?? [];
  }

  /**
   * The diagnostics of the rule's options without keeping its compiled form (what a whole-file check
   * needs): the same words, parser and target compilation as `compile`, minus what only a trace reads — a
   * target with no options and no extension of its name (a chain, a verdict or an unknown name) has no
   * diagnostics, so it is not looked up.
   */
  checkDiagnostics(): readonly Diagnostic[] {
    if (this.compiled) return this.compiled.diagnostics ?? [];
    const diags: Diagnostic[] = [];
    this.readSpec(diags, spec => {
      const p = spec.target;
      if (p && (p.options.length > 0 || p.module)) compileTarget(this.tableRef, p, this.family, spec.ip, diags);
    });
    return diags;
  }

  /** Reads the rule's words once more (the shared tokens and parser), with diagnostics going to `diags`. */
  private readSpec(diags: Diagnostic[], use: (spec: ReturnType<typeof sharedParser.parse>) => void): void {
    const outer = sink;
    sink = diags;
    try {
      sharedTokens.fillFrom(this.raw, this.specStart);
      use(sharedParser.parse(sharedTokens, 0, this.line, this.family));
    } finally {
      sink = outer;
    }
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
    let ring = rings.get(this.tableRef);
    if (!ring) rings.set(this.tableRef, (ring = { rules: [], next: 0 }));
    const old = ring.rules[ring.next];
    if (old && old.slot === ring.next) old.release();
    ring.rules[ring.next] = this;
    this.slot = ring.next;
    ring.next = (ring.next + 1) % MAX_COMPILED_PER_TABLE;
  }

  private compile(): Compiled {
    if (this.compiled) return this.compiled;
    const diags: Diagnostic[] = [];
    let compiled: Compiled | null = null;
    this.readSpec(diags, spec => {
      const target = spec.target ? compileTarget(this.tableRef, spec.target, this.family, spec.ip, diags) : null;
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
