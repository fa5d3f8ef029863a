/**
 * Reference checks every nftables front end runs on its result: a rule's `@set` must name a set or map of
 * its table, and `jump`/`goto` (in a rule, an anonymous verdict map or a named map's elements) must name a
 * chain of the table. nft refuses such a ruleset ("No such file or directory"); we report each reference
 * with its range and keep the rest.
 */
import type { NftExpr, NftRuleset, NftStmt, NftTable } from './ast.ts';
import type { Cursor } from './parse-cursor.ts';

type Diag = Pick<Cursor, 'diag'>;

export function validateReferences(rs: NftRuleset, d: Diag): void {
  for (const t of rs.tables) {
    const chains = new Set(t.chains.map((c) => c.name));
    const sets = new Set(t.sets.map((s) => s.name));
    const check = (e: NftExpr): void => walkExpr(e, (x) => {
      if (x.kind === 'setref' && !sets.has(x.name)) d.diag('unknown-set', `no set or map @${x.name} in table ${t.family} ${t.name}`, x.range);
      if (x.kind === 'verdict' && x.target !== undefined && !chains.has(x.target)) chainMissing(d, t, x.target, x.range);
    });
    for (const c of t.chains) {
      for (const r of c.rules) {
        for (const s of r.stmts) checkStmt(s, check, (target) => chains.has(target) || (chainMissing(d, t, target, s.range), true));
      }
    }
    for (const s of t.sets) for (const e of s.elements) check(e);
  }
}

function chainMissing(d: Diag, t: NftTable, target: string, range: NftExpr['range']): void {
  d.diag('unknown-chain', `no chain ${target} in table ${t.family} ${t.name}`, range);
}

function checkStmt(s: NftStmt, check: (e: NftExpr) => void, target: (name: string) => boolean): void {
  switch (s.kind) {
    case 'verdict':
      if (s.target !== undefined) target(s.target);
      return;
    case 'match':
      check(s.left);
      check(s.right);
      return;
    case 'vmap':
      check(s.key);
      check(s.data);
      return;
    case 'mangle':
      check(s.key);
      check(s.value);
      return;
    case 'nat':
      if (s.addr) check(s.addr);
      if (s.port) check(s.port);
      return;
    case 'setop':
      check({ kind: 'setref', name: s.set, range: s.range });
      check(s.elem);
      return;
    case 'counter':
      if (s.ref && s.ref.kind !== 'value') check(s.ref);
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
        stack.push(e.key, e.data);
        break;
      case 'binop':
        stack.push(e.left, e.right);
        break;
      case 'map':
        stack.push(e.key, e.data);
        break;
      case 'hash':
        if (e.expr) stack.push(e.expr);
        break;
      default:
        break;
    }
  }
}
