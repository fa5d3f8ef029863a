/**
 * Work done once a table is complete (at COMMIT): number the rules, classify every `-j NAME` as a standard
 * verdict, a chain or a target extension (a declared chain wins over an extension of the same name, as in
 * iptables), check where targets may be used, and find jump loops, which the kernel refuses to load
 * (`mark_source_chains` in net/ipv4/netfilter/ip_tables.c returns ELOOP). All of it needs only the target
 * names found while reading, not the compiled rules.
 */
import { type Diagnostic, clipWords } from '../diagnostics.ts';
import type { Family } from '../net/addr.ts';
import { type Chain, type HookName, type Ruleset, type Table, TABLE_HOOKS } from '../model.ts';
import { STANDARD_TARGETS, TARGETS } from '../targets/registry.ts';
import { IptChain, IptRule, checkRowDiagnostics, ruleCountOf } from './rule-node.ts';
import type { TargetRef } from './rule-store.ts';
import { RowProver } from './row-proof.ts';

/**
 * Target extensions iptables 1.8 ships (libxt_*, libipt_*, libip6t_* with upper-case names). A `-j NAME`
 * that is neither one of these nor a declared chain is refused by iptables-restore.
 */
const KERNEL_TARGETS = new Set([
  'AUDIT',
  'CHECKSUM',
  'CLASSIFY',
  'CLUSTERIP',
  'CONNMARK',
  'CONNSECMARK',
  'CT',
  'DNAT',
  'DNPT',
  'DSCP',
  'ECN',
  'HL',
  'HMARK',
  'IDLETIMER',
  'LED',
  'LOG',
  'MARK',
  'MASQUERADE',
  'NETMAP',
  'NFLOG',
  'NFQUEUE',
  'NOTRACK',
  'RATEEST',
  'REDIRECT',
  'REJECT',
  'SECMARK',
  'SET',
  'SNAT',
  'SNPT',
  'SYNPROXY',
  'TCPMSS',
  'TCPOPTSTRIP',
  'TEE',
  'TOS',
  'TPROXY',
  'TRACE',
  'TTL',
  'ULOG',
  'NFACCT',
]);

/**
 * The words of the kernel's tools for a target that is no chain of the table, checked against
 * iptables-legacy-restore and iptables-nft-restore 1.8.9 (test/fixtures/kernel/restore-refusals).
 */
function undeclaredMessage(kind: 'jump' | 'goto', name: string, table: string): string {
  const legacy =
    kind === 'goto' ? `goto '${name}' is not a chain` : `Couldn't load target \`${name}':No such file or directory`;
  return `${kind === 'goto' ? 'goto' : 'jump to'} ${name}, which is not a chain of table ${table} (no ':${name} - [0:0]' line) nor a target extension: iptables-restore refuses the file ("${legacy}"; iptables-nft-restore: "Chain '${name}' does not exist")`;
}

function refOf(rule: unknown): TargetRef | null {
  return rule instanceof IptRule ? rule.targetRef : null;
}

export function resolveTable(table: Table, _family: Family, diagnostics: Diagnostic[]): void {
  // Chains by ordinal, and for every rule (in chain order) the ordinal of the chain it jumps or goes to
  // (-1: none), so the loop search below walks arrays instead of looking names up again.
  // An iptables chain carries its ordinal; a Map is built only for chains of another kind.
  const chains: Chain[] = [];
  const names: string[] = [];
  let others: Map<string, number> | null = null;
  let ruleTotal = 0;
  for (const [name, chain] of table.chains) {
    if (chain instanceof IptChain) chain.ordinal = chains.length;
    else (others ??= new Map()).set(name, chains.length);
    chains.push(chain);
    names.push(name);
    ruleTotal += ruleCountOf(chain);
  }
  const ordinalOf = (name: string): number => {
    const chain = table.chains.get(name);
    if (chain === undefined) return -1;
    return chain instanceof IptChain ? chain.ordinal : (others?.get(name) ?? -1);
  };
  const firstRule = new Int32Array(chains.length + 1);
  const edge = new Int32Array(ruleTotal).fill(-1);
  const classify = new TargetClassifier(table, chains, diagnostics);
  // The names of recent targets and their chain ordinals, by `targetNameKey`: most rules of a dump jump to
  // a few names (KUBE-MARK-MASQ, DNAT), found again here without a string or a lookup among 100k chains;
  // and the chain declared after the last one jumped to, which kube-proxy's KUBE-SVC chains jump to next.
  const cacheName: (string | undefined)[] = new Array<string | undefined>(256);
  const cacheTo = new Int32Array(256);
  let lastTo = -1;
  let seq = 0;
  for (let c = 0; c < chains.length; c++) {
    const chain = chains[c]!;
    firstRule[c] = seq;
    if (chain instanceof IptChain && chain.inRows) {
      // Rules not made objects yet: their targets are read from the rows (rule-store.ts).
      const rows = chain.rows;
      for (let r = chain.firstRow; r >= 0; r = rows.next(r), seq++) {
        const kind = rows.targetKind(r);
        if (kind === 0 || (kind === 1 && rows.targetIsStandard(r))) continue;
        const key = rows.targetNameKey(r);
        let name = cacheName[key];
        let to: number;
        if (name !== undefined && rows.targetNameIs(r, name)) to = cacheTo[key]!;
        else {
          const after = names[lastTo + 1];
          if (after !== undefined && rows.targetNameIs(r, after)) {
            name = after;
            to = lastTo + 1;
          } else {
            name = rows.targetName(r);
            to = ordinalOf(name);
          }
          cacheName[key] = name;
          cacheTo[key] = to;
        }
        if (to >= 0) lastTo = to;
        edge[seq] = classify.target(
          chain,
          kind === 2 ? 'goto' : 'jump',
          name,
          to,
          rows.lineNo(r),
          rows.targetStart(r),
          rows.targetEnd(r),
        );
      }
      continue;
    }
    const rules = chain.rules;
    for (let i = 0; i < rules.length; i++, seq++) {
      const rule = rules[i]!;
      rule.index = i + 1;
      // Usually already so (the reader names it): no write, no write barrier on 320k old-space rules.
      if (rule.chain !== chain.name) rule.chain = chain.name;
      const t = refOf(rule);
      if (!t || (t.kind === 'jump' && STANDARD_TARGETS.has(t.name))) continue;
      edge[seq] = classify.target(chain, t.kind, t.name, ordinalOf(t.name), rule.line, t.start, t.end);
    }
  }
  firstRule[chains.length] = seq;
  findLoops(chains, firstRule, edge, diagnostics);
}

/** What a `-j NAME`/`-g NAME` that is no standard verdict names: a chain (its ordinal) or a target extension. */
class TargetClassifier {
  /** The table's built-in chains (a Set: `name in object` made each of 100k chain names a string-table lookup). */
  private readonly hooks: ReadonlySet<string>;

  constructor(
    private readonly table: Table,
    private readonly chains: readonly Chain[],
    private readonly diagnostics: Diagnostic[],
  ) {
    this.hooks = new Set(Object.keys(TABLE_HOOKS[table.name]?.hooks ?? {}));
  }

  /**
   * The ordinal of the chain the rule jumps or goes to (`to`, the ordinal of the chain called `name`, or
   * -1), or -1; reports what the kernel refuses.
   */
  target(
    chain: Chain,
    kind: 'jump' | 'goto',
    name: string,
    to: number,
    line: number,
    start: number,
    end: number,
  ): number {
    const table = this.table;
    if (to >= 0) {
      if (this.chains[to]!.builtin)
        this.report(
          line,
          start,
          end,
          'builtin-chain',
          `cannot ${kind} to built-in chain ${name}: only user chains can be targets`,
        );
      return to;
    }
    const mod = kind === 'jump' ? TARGETS.get(name) : undefined;
    if (!mod) {
      if (kind === 'jump' && KERNEL_TARGETS.has(name))
        this.report(
          line,
          start,
          end,
          'unknown-target',
          `target ${name} is not modelled: traces that reach this rule end as unknown`,
          'warning',
        );
      else this.report(line, start, end, 'undeclared-target', undeclaredMessage(kind, name, table.name));
      return -1;
    }
    if (mod.tables && !mod.tables.includes(table.name)) {
      this.report(
        line,
        start,
        end,
        'target-not-allowed',
        `${mod.name} is only valid in the ${mod.tables.join(', ')} table${mod.tables.length > 1 ? 's' : ''}, not ${table.name}: the kernel refuses this rule`,
      );
    } else if (mod.hooks && this.hooks.has(chain.name) && !mod.hooks.includes(chain.name as HookName)) {
      this.report(
        line,
        start,
        end,
        'target-not-allowed',
        `${mod.name} is only valid in ${mod.hooks.join(', ')}, not ${chain.name}: the kernel refuses this rule`,
      );
    }
    return -1;
  }

  private report(
    line: number,
    start: number,
    end: number,
    code: Diagnostic['code'],
    message: string,
    severity: Diagnostic['severity'] = 'error',
  ): void {
    const range = { start: { line, character: start }, end: { line, character: end } };
    this.diagnostics.push({ code, severity, message: clipWords(message), range });
  }
}

/**
 * Iterative DFS over the jump/goto edges (chain ordinals); reports each cycle once, at the rule that closes
 * it. Chains are visited in the table's order and each chain's rules in order.
 */
function findLoops(chains: readonly Chain[], firstRule: Int32Array, edge: Int32Array, diagnostics: Diagnostic[]): void {
  // 0: not seen, 1: on the stack, 2: done.
  const state = new Uint8Array(chains.length);
  const stack = new Int32Array(chains.length);
  const at = new Int32Array(chains.length);
  for (let start = 0; start < chains.length; start++) {
    if (state[start] !== 0) continue;
    let depth = 0;
    stack[0] = start;
    at[0] = firstRule[start]!;
    state[start] = 1;
    while (depth >= 0) {
      const c = stack[depth]!;
      const r = at[depth]!;
      if (r >= firstRule[c + 1]!) {
        state[c] = 2;
        depth--;
        continue;
      }
      at[depth] = r + 1;
      const to = edge[r]!;
      if (to < 0) continue;
      const s = state[to];
      if (s === 1) {
        const names: string[] = [];
        let from = 0;
        while (stack[from] !== to) from++;
        for (let k = from; k <= depth; k++) names.push(chains[stack[k]!]!.name);
        names.push(chains[to]!.name);
        const rule = chains[c]!.rules[r - firstRule[c]!]!;
        const t = refOf(rule)!;
        diagnostics.push({
          code: 'jump-loop',
          severity: 'error',
          message: clipWords(
            `jump loop ${names.join(' → ')}: the kernel refuses to load this table (ELOOP; iptables-restore fails at the table's COMMIT, iptables-nft-restore with "RULE_APPEND failed (Too many links)")`,
          ),
          range: { start: { line: rule.line, character: t.start }, end: { line: rule.line, character: t.end } },
        });
      } else if (s === 0) {
        state[to] = 1;
        stack[++depth] = to;
        at[depth] = firstRule[to]!;
      }
    }
  }
}

const validated = new WeakSet<Ruleset>();

/** Whether `validateRules` has run: only then do the diagnostics include every rule option's errors. */
export function isValidated(rs: Ruleset): boolean {
  return validated.has(rs);
}

/**
 * Compiles every rule and adds the diagnostics of their options (bad addresses, unknown options, …) to the
 * ruleset's list, sorted by position. Idempotent.
 */
export function validateRules(rs: Ruleset, options: { readonly release?: boolean } = {}): void {
  if (validated.has(rs)) return;
  validated.add(rs);
  for (const t of rs.tables.values()) {
    const prover = options.release ? new RowProver(t.chains, rs.family) : null;
    for (const c of t.chains.values()) {
      if (prover && c instanceof IptChain && c.inRows) {
        // Rules nothing has asked for yet are checked from their rows, without making their objects; the
        // common shapes are proven valid from their characters (row-proof.ts), the rest go to the validator.
        const rows = c.rows;
        const text = rows.text;
        for (let r = c.firstRow; r >= 0; r = rows.next(r)) {
          if (prover.proves(text, rows.lineStart(r), rows.lineLength(r), rows.specStart(r))) continue;
          for (const d of checkRowDiagnostics(rows, r)) rs.diagnostics.push(d);
        }
        continue;
      }
      for (const r of c.rules) {
        if (!(r instanceof IptRule)) continue;
        // `release`: rules compiled only for this check are forgotten again, so checking a 100 MB dump
        // holds its diagnostics, not 700k compiled rules.
        const diagnostics = options.release && !r.isCompiled() ? r.checkDiagnostics() : r.diagnostics();
        for (const d of diagnostics) rs.diagnostics.push(d);
      }
    }
  }
  rs.diagnostics.sort(
    (a, b) => a.range.start.line - b.range.start.line || a.range.start.character - b.range.start.character,
  );
}
