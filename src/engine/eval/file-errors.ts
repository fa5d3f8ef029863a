/**
 * The caveat every answer on a broken file starts with. iptables-restore applies a file all or nothing
 * (each table is one atomic replace, and the first error aborts the run: "iptables-restore: line N
 * failed"), so a trace through a file with errors describes rules the kernel would never hold; the user
 * must read that before any percentage.
 */
import type { Ruleset } from '../model.ts';
import { isValidated } from '../iptables/resolve.ts';
import type { FileErrors } from './trace-types.ts';
import { clip } from '../diagnostics.ts';

const LISTED = 3;
const MAX_LINES = 1000;

export function describeFileErrors(rs: Ruleset): FileErrors | null {
  const errors = rs.diagnostics.filter(d => d.severity === 'error');
  const checked = isValidated(rs) || rs.ruleCount === 0;
  if (errors.length === 0) return null;
  const n = errors.length;
  const listed = errors.slice(0, LISTED).map(d => `line ${d.range.start.line + 1}: ${clip(d.message, 160)}`);
  const more = n > LISTED ? `; ${n - LISTED} more (packetlens check lists them)` : '';
  const message =
    `this file has ${n} error${n === 1 ? '' : 's'}${checked ? '' : ' or more (rule options were not all checked)'}; the kernel would refuse it (iptables-restore loads none of it); ` +
    `results assume the file as packetlens could read it, ignoring what it could not (a rule with an unknown option matches as if the option were absent; a misplaced target acts as written) — ${listed.join('; ')}${more}`;
  const lines = [...new Set(errors.slice(0, MAX_LINES).map(d => d.range.start.line + 1))];
  return { count: n, message, lines };
}

export function fileErrorsOf(rs: Ruleset): { fileErrors?: FileErrors } {
  const f = describeFileErrors(rs);
  return f ? { fileErrors: f } : {};
}
