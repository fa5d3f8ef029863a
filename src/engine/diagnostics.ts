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
  | 'whitespace-line'
  | 'line-breaks-lost'
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
  | 'duplicate-object'
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
  | 'bad-value'
  // nftables linter
  | 'unused-set'
  | 'unreachable-chain';

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

/**
 * Quoting user text in a message: at most `max` characters (default 200), cut in the middle with the
 * number of characters left out, so a 20 MB line never lands whole in a message.
 */
export function clip(text: string, max = 200): string {
  if (text.length <= max) return text;
  const head = Math.ceil((max - 20) * 0.7);
  const tail = Math.max(0, max - 20 - head);
  return `${text.slice(0, head)}…[${text.length - head - tail} characters]…${tail ? text.slice(text.length - tail) : ''}`;
}

/**
 * Space, tab, line feed and carriage return break a run; other control characters (NUL in a binary file's
 * text) do not, so "x\0x\0x…" is one run and gets clipped (the fuzz campaign found it copied whole).
 */
function isBreak(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13;
}

/**
 * A message with every unbroken run of text longer than 200 characters clipped, and at most 1000 characters
 * in all (a scan: no regex, no recursion).
 */
export function clipWords(message: string): string {
  if (message.length <= 200) return message;
  let out = '';
  let i = 0;
  const n = message.length;
  while (i < n) {
    let j = i;
    while (j < n && !isBreak(message.charCodeAt(j))) j++;
    out += j - i > 200 ? clip(message.slice(i, j)) : message.slice(i, j);
    i = j;
    while (i < n && isBreak(message.charCodeAt(i))) out += message[i++];
    if (out.length > 4000) break;
  }
  return out.length > 1000 ? clip(out, 1000) : out;
}
