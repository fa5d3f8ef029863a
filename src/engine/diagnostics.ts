/**
 * Diagnostics are values, not exceptions: every parser in the engine returns its result together with a
 * list of these, so one bad line never costs the user the rest of the file (see ARCHITECTURE.md).
 */

/** A zero-based position, as editors count: line 0 is the file's first line. */
export interface Position {
  readonly line: number;
  readonly character: number;
}

export interface Range {
  readonly start: Position;
  readonly end: Position;
}

export type Severity = 'error' | 'warning' | 'info' | 'hint';

/** Every code a diagnostic can carry; the editor's quick fixes and the tests key on these. */
export type DiagnosticCode =
  | 'binary-input'
  | 'input-too-large'
  | 'unknown-command'
  | 'unknown-option'
  | 'unknown-module'
  | 'unknown-target'
  | 'missing-argument'
  | 'bad-argument'
  | 'bad-address'
  | 'bad-port'
  | 'bad-mark'
  | 'bad-probability'
  | 'unterminated-quote'
  | 'rule-outside-table'
  | 'chain-outside-table'
  | 'missing-commit'
  | 'unknown-table'
  | 'unknown-chain'
  | 'undeclared-target'
  | 'duplicate-chain'
  | 'builtin-chain'
  | 'policy-on-user-chain'
  | 'chain-in-use'
  | 'bad-rule-number'
  | 'invalid-negation'
  | 'deprecated-syntax'
  | 'family-mismatch'
  | 'jump-loop'
  | 'unused-chain'
  | 'shadowed-rule'
  | 'target-not-allowed'
  | 'bad-packet'
  // Kubernetes manifests
  | 'yaml-syntax'
  | 'yaml-alias-limit'
  | 'bad-field'
  | 'missing-field'
  | 'selector-matches-nothing'
  | 'named-port-unresolved'
  | 'service-without-ports'
  | 'not-modelled'
  | 'prediction'
  | 'unknown-reference'
  // nftables (text, JSON and script front ends)
  | 'syntax-error'
  | 'unbalanced-braces'
  | 'unknown-statement'
  | 'unknown-expression'
  | 'undefined-variable'
  | 'define-cycle'
  | 'include-not-followed'
  | 'unknown-set'
  | 'unknown-object'
  | 'duplicate-object'
  | 'bad-json'
  | 'bad-value';

export interface Diagnostic {
  readonly code: DiagnosticCode;
  readonly severity: Severity;
  readonly message: string;
  readonly range: Range;
}

export function lineRange(line: number, startChar = 0, endChar = startChar): Range {
  return { start: { line, character: startChar }, end: { line, character: endChar } };
}

/** A diagnostic of one file among several (manifests come as sets of files). */
export interface FileDiagnostic extends Diagnostic {
  readonly file: string;
}

/** Formats a diagnostic as compilers do, `file:line:col: severity: message`, with one-based numbers. */
export function formatDiagnostic(file: string, d: Diagnostic): string {
  return `${file}:${d.range.start.line + 1}:${d.range.start.character + 1}: ${d.severity}: ${d.message}`;
}
