// Test helper: an nftables AST without what legitimately differs between the forms of one ruleset.
import type { NftRuleset } from '../../src/engine/nftables/ast.ts';

export interface NormalizeOptions {
  /** Also drop counter values (a script says `counter`, a listing `counter packets 0 bytes 0`). */
  readonly counters?: boolean;
}

/**
 * Drops source ranges and handles; priorities keep only their number; sets lose `typeof` expressions,
 * `auto-merge` and the `dynamic` flag, and elements their `expires` (nft 1.0.6's JSON prints none of these,
 * and `expires` counts down between two listings).
 */
export function normalize(rs: NftRuleset, opts: NormalizeOptions = {}): unknown {
  // nft 1.0.6's JSON prints no comments of tables and chains (rules, sets and elements keep theirs).
  // Set elements are unordered: nft lists them in its own (hash or interval) order.
  const tables = rs.tables.map(t => ({
    ...t,
    comment: undefined,
    chains: t.chains.map(c => ({ ...c, comment: undefined })),
    sets: t.sets.map(s => ({
      ...s,
      elements: [...s.elements].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0)),
    })),
  }));
  return JSON.parse(
    JSON.stringify(tables, (k, v: unknown) => {
      if (
        k === 'range' ||
        k === 'handle' ||
        k === 'typeofKey' ||
        k === 'typeofData' ||
        k === 'autoMerge' ||
        k === 'expires'
      )
        return undefined;
      // Named objects are parsed and noted, not evaluated; text and JSON spell their properties differently.
      if (k === 'props') return undefined;
      // nft 1.0.6's JSON prints no device of a netdev base chain.
      if (k === 'devices') return undefined;
      if (k === 'priority' && v && typeof v === 'object') return { value: (v as { value: number }).value };
      if (k === 'flags' && Array.isArray(v)) return v.filter(f => f !== 'dynamic');
      if (opts.counters && (k === 'packets' || k === 'bytes')) return undefined;
      return v;
    }),
  );
}

function key(e: unknown): string {
  return JSON.stringify(e, (k, v: unknown) => (k === 'range' ? undefined : v));
}
