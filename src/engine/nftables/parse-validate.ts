/**
 * Reference checks every nftables front end runs on its result: a rule's `@set` must name a set or map of
 * its table, and `jump`/`goto` (in a rule, an anonymous verdict map or a named map's elements) must name a
 * chain of the table. nft refuses such a ruleset ("No such file or directory"); we report each reference
 * with its range and keep the rest.
 */
import type { Range } from '../diagnostics.ts';
import type { NftExpr, NftRuleset, NftStmt, NftTable } from './ast.ts';
import type { Cursor } from './parse-cursor.ts';

type Diag = Pick<Cursor, 'diag'>;

export function validateReferences(rs: NftRuleset, d: Diag): void {
  for (const t of rs.tables) new TableRefs(t, d).run();
}

class TableRefs {
  private readonly chains: Set<string>;
  private readonly sets: Set<string>;
  private readonly stack: NftExpr[] = [];

  constructor(
    private readonly t: NftTable,
    private readonly d: Diag,
  ) {
    this.chains = new Set(t.chains.map(c => c.name));
    this.sets = new Set(t.sets.map(s => s.name));
  }

  run(): void {
    for (const c of this.t.chains) for (const r of c.rules) for (const s of r.stmts) this.stmt(s);
    for (const s of this.t.sets) for (const e of s.elements) this.expr(e);
  }

  private target(name: string, range: Range): void {
    if (!this.chains.has(name))
      this.d.diag('unknown-chain', `no chain ${name} in table ${this.t.family} ${this.t.name}`, range);
  }

  private setName(name: string, range: Range): void {
    if (!this.sets.has(name))
      this.d.diag('unknown-set', `no set or map @${name} in table ${this.t.family} ${this.t.name}`, range);
  }

  /** Checks an expression tree depth-first, iteratively (deep input cannot overflow the stack). */
  private expr(root: NftExpr): void {
    const stack = this.stack;
    stack.push(root);
    while (stack.length) {
      const e = stack.pop() as NftExpr;
      if (e.kind === 'value' || e.kind === 'payload' || e.kind === 'meta' || e.kind === 'ct') continue;
      if (e.kind === 'setref') this.setName(e.name, e.range);
      else if (e.kind === 'verdict' && e.target !== undefined) this.target(e.target, e.range);
      else pushChildren(e, stack);
    }
  }

  private stmt(s: NftStmt): void {
    switch (s.kind) {
      case 'verdict':
        if (s.target !== undefined) this.target(s.target, s.range);
        return;
      case 'match':
        this.expr(s.left);
        this.expr(s.right);
        return;
      case 'vmap':
        this.expr(s.key);
        this.expr(s.data);
        return;
      case 'mangle':
        this.expr(s.key);
        this.expr(s.value);
        return;
      case 'nat':
        if (s.addr) this.expr(s.addr);
        if (s.port) this.expr(s.port);
        return;
      case 'setop':
        this.setName(s.set, s.range);
        this.expr(s.elem);
        return;
      case 'counter':
        if (s.ref && s.ref.kind !== 'value') this.expr(s.ref);
        return;
      default:
        return;
    }
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
