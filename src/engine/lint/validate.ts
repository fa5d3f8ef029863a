/**
 * The diagnostics of every rule's options, computed in slices: the same as `validateRules` (which
 * compiles every rule at once and adds them to the ruleset), but as a generator that yields every few
 * thousand rules, so an editor can spread a 300k-rule dump's validation over many short tasks and stay
 * responsive. It does not change the ruleset's own diagnostics.
 */
import type { Diagnostic } from '../diagnostics.ts';
import { IptRule } from '../iptables/rule-node.ts';
import type { Ruleset } from '../model.ts';

export function* ruleOptionDiagnostics(rs: Ruleset, batch = 2000): Generator<number, Diagnostic[]> {
  const out: Diagnostic[] = [];
  let done = 0;
  for (const t of rs.tables.values()) {
    for (const c of t.chains.values()) {
      for (const r of c.rules) {
        if (r instanceof IptRule) for (const d of r.diagnostics()) out.push(d);
        if (++done % batch === 0) yield done;
      }
    }
  }
  return out;
}
