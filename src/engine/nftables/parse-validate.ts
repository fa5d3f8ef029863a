/**
 * Reference checks every nftables front end runs on its result: a rule's `@set` must name a set or map of
 * its table, and `jump`/`goto` (in a rule, an anonymous verdict map or a named map's elements) must name a
 * chain of the table. nft refuses such a ruleset ("No such file or directory"); we report each reference
 * with its range and keep the rest.
 */
import type { Range } from '../diagnostics.ts';
import type { NftExpr, NftRuleset, NftStmt, NftTable } from './ast.ts';
import type { Cursor } from './parse-cursor.ts';
import { type RuleRef, SourceRule } from './rule-source.ts';

type Diag = Pick<Cursor, 'diag'>;

/**
 * `exact`: the pending references of rules kept as source (rule-source.ts) are all the references that can
 * fail — true unless a chain or set was deleted after rules were read (parse-build.ts `namesDeleted`).
 */
export function validateReferences(rs: NftRuleset, d: Diag, exact = true): void {
  for (const t of rs.tables) new TableRefs(t, d, exact).run();
}

class TableRefs {
  private readonly chains: Set<string>;
  private readonly sets: Set<string>;
  private readonly stack: NftExpr[] = [];
  private readonly check = (kind: RuleRef['kind'], name: string, range: Range): void => {
    if (kind === 'chain') this.target(name, range);
    else this.setName(name, range);
  };

  constructor(
    private readonly t: NftTable,
    private readonly d: Diag,
    private readonly exact: boolean,
  ) {
    this.chains = new Set(t.chains.map(c => c.name));
    this.sets = new Set(t.sets.map(s => s.name));
  }

  run(): void {
    for (const c of this.t.chains)
      for (const r of c.rules) {
        if (r instanceof SourceRule && this.exact) {
          for (const ref of r.pendingRefs ?? []) this.check(ref.kind, ref.name, ref.range);
        } else for (const s of r.stmts) stmtRefs(s, this.stack, this.check);
      }
    for (const s of this.t.sets) for (const e of s.elements) exprRefs(e, this.stack, this.check);
  }

  private target(name: string, range: Range): void {
    if (!this.chains.has(name))
      this.d.diag('unknown-chain', `no chain ${name} in table ${this.t.family} ${this.t.name}`, range);
  }

  private setName(name: string, range: Range): void {
    if (!this.sets.has(name))
      this.d.diag('unknown-set', `no set or map @${name} in table ${this.t.family} ${this.t.name}`, range);
  }
}

type RefVisit = (kind: RuleRef['kind'], name: string, range: Range) => void;

/** The chain and set references of an expression tree, depth-first, iteratively (deep input cannot overflow the stack). */
function exprRefs(root: NftExpr, stack: NftExpr[], visit: RefVisit): void {
  stack.push(root);
  while (stack.length) {
    const e = stack.pop() as NftExpr;
    if (e.kind === 'value' || e.kind === 'payload' || e.kind === 'meta' || e.kind === 'ct') continue;
    if (e.kind === 'setref') visit('set', e.name, e.range);
    else if (e.kind === 'verdict' && e.target !== undefined) visit('chain', e.target, e.range);
    else pushChildren(e, stack);
  }
}

/** The chain and set references of a statement, in the order the checks report them. */
export function stmtRefs(s: NftStmt, stack: NftExpr[], visit: RefVisit): void {
  switch (s.kind) {
    case 'verdict':
      if (s.target !== undefined) visit('chain', s.target, s.range);
      return;
    case 'match':
      exprRefs(s.left, stack, visit);
      exprRefs(s.right, stack, visit);
      return;
    case 'vmap':
      exprRefs(s.key, stack, visit);
      exprRefs(s.data, stack, visit);
      return;
    case 'mangle':
      exprRefs(s.key, stack, visit);
      exprRefs(s.value, stack, visit);
      return;
    case 'nat':
      if (s.addr) exprRefs(s.addr, stack, visit);
      if (s.port) exprRefs(s.port, stack, visit);
      return;
    case 'setop':
      visit('set', s.set, s.range);
      exprRefs(s.elem, stack, visit);
      return;
    case 'counter':
      if (s.ref && s.ref.kind !== 'value') exprRefs(s.ref, stack, visit);
      return;
    default:
      return;
  }
}

/** Visits an expression tree depth-first (iteratively, so that deep input cannot overflow the stack). */
export function walkExpr(root: NftExpr, visit: (e: NftExpr) => void): void {
  const stack: NftExpr[] = [root];
  while (stack.length) {
    const e = stack.pop() as NftExpr;
    visit(e);
    pushChildren(e, stack);
  }
}

function pushChildren(e: NftExpr, stack: NftExpr[]): void {
  switch (e.kind) {
    case 'prefix':
      stack.push(e.addr);
      break;
    case 'range':
      stack.push(e.low, e.high);
      break;
    case 'concat':
    case 'set':
    case 'list':
      for (const i of e.items) stack.push(i);
      break;
    case 'elem':
      stack.push(e.value);
      break;
    case 'mapping':
    case 'map':
      stack.push(e.key, e.data);
      break;
    case 'binop':
      stack.push(e.left, e.right);
      break;
    case 'hash':
      if (e.expr) stack.push(e.expr);
      break;
    default:
      break;
  }
}
