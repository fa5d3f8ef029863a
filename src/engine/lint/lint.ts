/**
 * The linter: findings beyond what the parser reports (it already reports undeclared jump targets, jump
 * loops, unknown modules and options, misplaced targets). It adds chains that nothing references and
 * rules an earlier rule leaves no packet to. Pure and deterministic; it reads the compiled rules (the editor
 * has compiled them for their option diagnostics by then) and the target names the parser recorded.
 */
import { type Diagnostic, clipWords } from '../diagnostics.ts';
import type { Ruleset } from '../model.ts';
import { type ChainReference, chainReferences } from './refs.ts';
import { shadowedRules } from './shadow.ts';
import { unusedChains } from './unused.ts';

/** A lint finding: a diagnostic plus what the editor needs for its quick fix and related information. */
export interface LintDiagnostic extends Diagnostic {
  readonly code: 'unused-chain' | 'shadowed-rule';
  readonly table: string;
  readonly chain: string;
  /** For `shadowed-rule`: the 0-based line of the earlier rule that takes the packets. */
  readonly relatedLine: number | null;
  readonly relatedMessage: string | null;
}

export interface LintOptions {
  /** Report unreferenced user chains (default true). */
  readonly unusedChains?: boolean;
  /** Report rules shadowed by earlier ones (default true). */
  readonly shadowedRules?: boolean;
  /** The tables' references when the caller already has them (`chainReferences`), by table name. */
  readonly references?: ReadonlyMap<string, ReadonlyMap<string, readonly ChainReference[]>>;
}

export function lintRuleset(rs: Ruleset, options: LintOptions = {}): LintDiagnostic[] {
  const steps = lintSteps(rs, options);
  let r = steps.next();
  while (!r.done) r = steps.next();
  return r.value;
}

/** The same findings, computed in steps of a few thousand chains (an editor runs them between other work). */
export function* lintSteps(
  rs: Ruleset,
  options: LintOptions = {},
  chainsPerStep = 5000,
): Generator<void, LintDiagnostic[]> {
  const out: LintDiagnostic[] = [];
  let chains = 0;
  for (const table of rs.tables.values()) {
    if (options.unusedChains !== false) {
      const refs = options.references?.get(table.name) ?? chainReferences(table);
      for (const chain of unusedChains(table, refs)) {
        const n = chain.rules.length;
        out.push({
          code: 'unused-chain',
          severity: 'warning',
          message: clipWords(
            `chain ${chain.name} is never jumped to: ${n === 0 ? 'it is empty and unused' : `its ${n} rule${n === 1 ? '' : 's'} never run`}`,
          ),
          range: chain.range,
          table: table.name,
          chain: chain.name,
          relatedLine: null,
          relatedMessage: null,
        });
      }
    }
    if (options.shadowedRules === false) continue;
    for (const chain of table.chains.values()) {
      if (++chains % chainsPerStep === 0) yield;
      for (const { rule, by } of shadowedRules(table, chain)) {
        out.push({
          code: 'shadowed-rule',
          severity: 'warning',
          message: clipWords(
            `rule ${rule.index} of ${table.name} ${chain.name} never matches: rule ${by.index} (line ${by.line + 1}) has the same criteria or fewer and takes every packet first`,
          ),
          range: rule.range,
          table: table.name,
          chain: chain.name,
          relatedLine: by.line,
          relatedMessage: `rule ${by.index} takes these packets first`,
        });
      }
    }
  }
  return out.sort(
    (a, b) => a.range.start.line - b.range.start.line || a.range.start.character - b.range.start.character,
  );
}
