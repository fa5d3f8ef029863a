/**
 * CodeLens above each chain: how many rules jump to it (a click lists them) and "Trace from here", which
 * opens the trace input with a packet that would reach the chain. The lens stands on the chain's first
 * rule, where its body starts (an empty chain: its declaration).
 */
import type { Chain, ChainReference } from '../engine/api.ts';
import { type DumpIndex, firstRuleLine } from './dump-index.ts';
import { type Range, lineSpan } from './ranges.ts';

export interface ChainLens {
  readonly range: Range;
  readonly table: string;
  readonly chain: string;
  readonly builtin: boolean;
  readonly references: readonly ChainReference[];
}

const cache = new WeakMap<DumpIndex, readonly ChainLens[]>();

/** The chain lenses of a parsed dump, computed once per parse. */
export function chainLenses(index: DumpIndex): readonly ChainLens[] {
  let lenses = cache.get(index);
  if (!lenses) cache.set(index, (lenses = computeChainLenses(index)));
  return lenses;
}

function computeChainLenses(index: DumpIndex): ChainLens[] {
  const out: ChainLens[] = [];
  for (const span of index.tables) {
    const table = span.table;
    for (const chain of table.chains.values()) {
      const line = firstRuleLine(chain) ?? chain.range.start.line;
      out.push({
        range: lineSpan(line, 0, 0),
        table: table.name,
        chain: chain.name,
        builtin: chain.builtin,
        references: chain.builtin ? [] : index.referencesTo(table.name, chain.name),
      });
    }
  }
  return out;
}

/**
 * Whether a chain's lens helps: a user chain that rules jump to (its references and "Trace from here").
 * A built-in chain's lens would only repeat its header line, an unreferenced chain's has nothing to list,
 * and after a trace every lens on a line competes with the trace's own.
 */
export function isHelpfulChainLens(lens: ChainLens): boolean {
  return !lens.builtin && lens.references.length > 0;
}

export function referencesTitle(lens: ChainLens, chain?: Chain): string {
  if (lens.builtin) return `hook ${lens.chain} · policy ${chain?.policy ?? 'ACCEPT'}`;
  const n = lens.references.length;
  return n === 0 ? 'not referenced' : `referenced by ${n.toLocaleString('en-US')}`;
}

export const TRACE_FROM_HERE_TITLE = '▶ Trace from here';
