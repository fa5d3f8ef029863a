/**
 * An nft rule of the model whose program is lowered the first time it is read (a trace touches a few dozen
 * of 200k rules). A class, so that 200k rules share one shape and one getter: defining the lazy `nft`
 * property per object (a getter closure each) gave every rule a hidden class of its own — 1.2 KB a rule,
 * 270 MB for kube-proxy's 43 MB nftables script.
 */
import type { Range } from '../diagnostics.ts';
import type { Counters, IpMatch, MatchInstance, Rule, TargetInstance } from '../model.ts';
import type { NftRule } from './ast.ts';
import type { LowerCtx, NftProgram } from '../nft-program/program.ts';
import { lowerRuleProgram } from './stmt/index.ts';
import { SourceRule } from './rule-source.ts';

const NO_IP: IpMatch = Object.freeze({});
const NO_MATCHES: readonly MatchInstance[] = Object.freeze([]);

/** Lowering contexts of one table: the one that reports diagnostics, and a silent one for lowering again. */
export interface LazyCtx {
  readonly reporting: LowerCtx;
  readonly silent: LowerCtx;
}

export class LazyNftRule implements Rule {
  /** The rule's first line, unless its AST reads it from the text itself (rule-source.ts). */
  private readonly rawLine: string | null;
  target: TargetInstance | null = null;
  readonly comment: string | null;
  private program: NftProgram | null = null;
  /** The rule's diagnostics were added to the ruleset's list (by `nft` or `check`). */
  private reported = false;

  constructor(
    public index: number,
    readonly table: string,
    public chain: string,
    private readonly ast: NftRule,
    private readonly ctx: LazyCtx,
    lineAt: (line: number) => string,
  ) {
    this.rawLine = ast instanceof SourceRule ? null : lineAt(ast.range.start.line);
    this.comment = ast.comment ?? null;
  }

  // What every nft rule has alike, on the prototype rather than in each of 483k rules.
  get counters(): Counters | null {
    return null;
  }

  get specStart(): number {
    return 0;
  }

  get ip(): IpMatch {
    return NO_IP;
  }

  get matches(): readonly MatchInstance[] {
    return NO_MATCHES;
  }

  get raw(): string {
    return this.rawLine ?? (this.ast as SourceRule).firstLineText();
  }

  get line(): number {
    return this.ast instanceof SourceRule ? this.ast.firstLine : this.ast.range.start.line;
  }

  get range(): Range {
    return this.ast.range;
  }

  get nft(): NftProgram {
    if (!this.program) {
      this.program = lowerRuleProgram(this.ast, this.reported ? this.ctx.silent : this.ctx.reporting);
      this.reported = true;
    }
    return this.program;
  }

  /**
   * Adds the rule's diagnostics to the ruleset's list without keeping its program: checking every rule of
   * a 200k-rule script (the editor's diagnostics) then costs no more memory than reading it.
   */
  check(): void {
    if (this.reported) return;
    lowerRuleProgram(this.ast, this.ctx.reporting);
    this.reported = true;
  }
}

/** Adds the rule's lowering diagnostics, keeping its program only when it is not a lazy rule. */
export function checkLowering(rule: Rule): void {
  if (rule instanceof LazyNftRule) rule.check();
  else void rule.nft;
}
