/**
 * Work done once a table is complete (at COMMIT): number the rules, resolve every `-j NAME` to a standard
 * verdict, a chain or a target extension (a declared chain wins over an extension of the same name, as in
 * iptables), check where targets may be used, and find jump loops, which the kernel refuses to load
 * (`mark_source_chains` in net/ipv4/netfilter/ip_tables.c returns ELOOP).
 */
import type { Diagnostic } from '../diagnostics.ts';
import type { Family } from '../net/addr.ts';
import type { CompileContext } from '../matches/types.ts';
import { type HookName, type Rule, type Table, type TargetInstance, TABLE_HOOKS } from '../model.ts';
import { STANDARD_TARGETS } from '../targets/registry.ts';
import type { PendingTarget } from './rule.ts';

export function resolveTable(table: Table, family: Family, diagnostics: Diagnostic[]): void {
  for (const chain of table.chains.values()) {
    for (let i = 0; i < chain.rules.length; i++) {
      const rule = chain.rules[i]!;
      rule.index = i + 1;
      rule.chain = chain.name;
      const pending = rule.target as unknown as PendingTarget | TargetInstance | null;
      if (pending && (pending.kind === 'jump' || pending.kind === 'goto') && 'name' in pending) {
        rule.target = resolveTarget(table, rule, pending, family, diagnostics);
      }
    }
  }
  findLoops(table, diagnostics);
}

function resolveTarget(table: Table, rule: Rule, p: PendingTarget, family: Family, diagnostics: Diagnostic[]): TargetInstance {
  const report = (code: Diagnostic['code'], message: string, severity: Diagnostic['severity'] = 'error', range = p.range) =>
    diagnostics.push({ code, severity, message, range });
  if (p.kind === 'jump' && STANDARD_TARGETS.has(p.name)) {
    if (p.options.length) report('unknown-option', `${p.name} takes no options (${p.options.map((o) => o.name).join(' ')})`);
    return { kind: 'verdict', verdict: p.name as 'ACCEPT', range: p.range };
  }
  const chain = table.chains.get(p.name);
  if (chain) {
    if (chain.builtin) report('builtin-chain', `cannot ${p.kind} to built-in chain ${p.name}: only user chains can be targets`);
    if (p.options.length) report('unknown-option', `a jump to chain ${p.name} takes no options (${p.options.map((o) => o.name).join(' ')})`);
    return { kind: p.kind, chain: p.name, range: p.range };
  }
  if (p.kind === 'goto' || !p.module) {
    const looksLikeTarget = /^[A-Z0-9_]+$/.test(p.name) && !p.name.includes('-');
    report(
      looksLikeTarget ? 'unknown-target' : 'undeclared-target',
      looksLikeTarget && p.kind === 'jump'
        ? `target ${p.name} is not modelled: traces that reach this rule end as unknown`
        : `${p.kind === 'goto' ? 'goto' : 'jump'} to chain ${p.name}, which is not declared in table ${table.name}`,
      looksLikeTarget && p.kind === 'jump' ? 'warning' : 'error',
    );
    return { kind: 'unknown', name: p.name, options: p.options, range: p.range };
  }
  const mod = p.module;
  const ctx: CompileContext = {
    family,
    proto: rule.ip.proto && !rule.ip.proto.negated ? rule.ip.proto.value : null,
    report(option, code, message, severity = 'error') {
      const range = option ? { start: { line: option.line, character: option.start }, end: { line: option.line, character: option.end } } : p.range;
      diagnostics.push({ code, severity, message: `${mod.name}: ${message}`, range });
    },
  };
  const spec = mod.compile(p.options, ctx);
  if (mod.tables && !mod.tables.includes(table.name)) {
    report('target-not-allowed', `${mod.name} is only valid in the ${mod.tables.join(', ')} table${mod.tables.length > 1 ? 's' : ''}, not ${table.name}: the kernel refuses this rule`);
  }
  const chainHooks = TABLE_HOOKS[table.name]?.hooks ?? {};
  if (mod.hooks && rule.chain in chainHooks && !mod.hooks.includes(rule.chain as HookName)) {
    report('target-not-allowed', `${mod.name} is only valid in ${mod.hooks.join(', ')}, not ${rule.chain}: the kernel refuses this rule`);
  }
  return { kind: 'target', module: mod, spec, options: p.options, range: p.range };
}

/** Iterative DFS over jump/goto edges; reports each cycle once, at the rule that closes it. */
function findLoops(table: Table, diagnostics: Diagnostic[]): void {
  const state = new Map<string, 1 | 2>();
  for (const start of table.chains.values()) {
    if (state.has(start.name)) continue;
    const stack: { name: string; i: number; via: Rule | null }[] = [{ name: start.name, i: 0, via: null }];
    state.set(start.name, 1);
    while (stack.length) {
      const top = stack[stack.length - 1]!;
      const chain = table.chains.get(top.name);
      const rules = chain?.rules ?? [];
      if (top.i >= rules.length) {
        state.set(top.name, 2);
        stack.pop();
        continue;
      }
      const rule = rules[top.i++]!;
      const t = rule.target;
      if (!t || (t.kind !== 'jump' && t.kind !== 'goto')) continue;
      const s = state.get(t.chain);
      if (s === 1) {
        const from = stack.findIndex((f) => f.name === t.chain);
        const cycle = [...stack.slice(from).map((f) => f.name), t.chain].join(' → ');
        diagnostics.push({
          code: 'jump-loop',
          severity: 'error',
          message: `jump loop ${cycle}: the kernel refuses to load this table (ELOOP)`,
          range: t.range,
        });
      } else if (s === undefined) {
        state.set(t.chain, 1);
        stack.push({ name: t.chain, i: 0, via: rule });
      }
    }
  }
}
