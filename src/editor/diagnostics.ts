/**
 * The diagnostics the editor shows for a dump: the parser's (structure, chain graph, loops), the rule
 * options' (every rule compiled) and the linter's, up to a size limit above which the expensive passes
 * are skipped and the user is told so. Computed in steps (a generator), so the extension can spread a
 * big dump's validation over short tasks and keep answering hovers meanwhile.
 */
import { type Diagnostic, type Range, lintSteps, ruleOptionDiagnostics } from '../engine/api.ts';
import type { DumpIndex } from './dump-index.ts';
import { lineSpan } from './ranges.ts';

export interface EditorDiagnostic extends Diagnostic {
  /** Code that never runs (unused chain, shadowed rule): editors fade it. */
  readonly unnecessary: boolean;
  readonly related: readonly { readonly range: Range; readonly message: string }[];
}

export interface DiagnosticsOptions {
  /** Compile every rule and lint only up to this many rules. */
  readonly maxRulesForFullCheck: number;
  /** At most this many diagnostics are returned. */
  readonly maxDiagnostics: number;
}

export interface DumpDiagnostics {
  readonly diagnostics: readonly EditorDiagnostic[];
  /** What was left out and why, for the user. */
  readonly notes: readonly string[];
}

const plain = (d: Diagnostic): EditorDiagnostic => ({
  code: d.code,
  severity: d.severity,
  message: d.message,
  range: d.range,
  unnecessary: false,
  related: [],
});

/** The diagnostics, one step at a time: each `yield` is a good moment to let other work run. */
export function* dumpDiagnosticSteps(index: DumpIndex, options: DiagnosticsOptions): Generator<void, DumpDiagnostics> {
  const rs = index.ruleset;
  const notes: string[] = [];
  const full = rs.ruleCount <= options.maxRulesForFullCheck;
  const out: EditorDiagnostic[] = rs.diagnostics.map(plain);
  if (full) {
    const seen = new Set(out.map(d => `${d.code}@${d.range.start.line}:${d.range.start.character}`));
    const steps = ruleOptionDiagnostics(rs);
    let step = steps.next();
    while (!step.done) {
      yield;
      step = steps.next();
    }
    for (const d of step.value)
      if (!seen.has(`${d.code}@${d.range.start.line}:${d.range.start.character}`)) out.push(plain(d));
    yield;
    const lint = lintSteps(rs, { references: index.references() });
    let found = lint.next();
    while (!found.done) {
      yield;
      found = lint.next();
    }
    for (const d of found.value) {
      const related =
        d.relatedLine !== null
          ? [
              {
                range: lineSpan(d.relatedLine, 0, index.lines.lineAt(d.relatedLine).length),
                message: d.relatedMessage ?? '',
              },
            ]
          : [];
      out.push({ code: d.code, severity: d.severity, message: d.message, range: d.range, unnecessary: true, related });
    }
  } else {
    notes.push(
      `rule options are not checked and the linter did not run: ${rs.ruleCount.toLocaleString('en-US')} rules is above packetlens.limits.fullCheckMaxRules (${options.maxRulesForFullCheck.toLocaleString('en-US')})`,
    );
  }
  out.sort((a, b) => a.range.start.line - b.range.start.line || a.range.start.character - b.range.start.character);
  if (out.length > options.maxDiagnostics) {
    notes.push(
      `${(out.length - options.maxDiagnostics).toLocaleString('en-US')} more diagnostics are not shown (packetlens.limits.maxDiagnostics is ${options.maxDiagnostics.toLocaleString('en-US')})`,
    );
    return { diagnostics: out.slice(0, options.maxDiagnostics), notes };
  }
  return { diagnostics: out, notes };
}

/** All the diagnostics at once. */
export function dumpDiagnostics(index: DumpIndex, options: DiagnosticsOptions): DumpDiagnostics {
  const steps = dumpDiagnosticSteps(index, options);
  let r = steps.next();
  while (!r.done) r = steps.next();
  return r.value;
}
