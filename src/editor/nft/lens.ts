/**
 * CodeLens above each nftables chain: a base chain's hook, priority and policy; a regular chain's count
 * of `jump`/`goto` references (rules and verdict-map elements), which a click lists.
 */
import type { Range } from '../../engine/api.ts';
import type { ChainLensRow } from '../../shared/engine-protocol.ts';
import type { NftName } from './names.ts';
import { NftIndex } from './nft-index.ts';

/** The `jump`/`goto` occurrences of a chain (its references), in file order. */
export function chainRefs(nft: NftIndex, scope: string, chain: string): NftName[] {
  return nft.names.occurrences('chain', scope, chain).filter(n => n.role === 'jump' || n.role === 'goto');
}

export function nftChainLenses(nft: NftIndex): ChainLensRow[] {
  const out: ChainLensRow[] = [];
  for (const t of nft.ast.tables) {
    const scope = NftIndex.key(t);
    for (const c of t.chains) {
      const refs = c.base ? [] : chainRefs(nft, scope, c.name);
      const title = c.base
        ? `hook ${c.base.hook} · priority ${c.base.priority.value} · policy ${c.base.policy ?? 'accept'}`
        : refs.length === 0
          ? 'not referenced'
          : `referenced by ${refs.length.toLocaleString('en-US')}`;
      const line = nft.names.declaration('chain', scope, c.name)?.range.start.line ?? c.range.start.line;
      out.push({ line, table: scope, chain: c.name, title, references: refs.length });
    }
  }
  return out.sort((a, b) => a.line - b.line);
}

export function nftChainReferences(nft: NftIndex, scope: string, chain: string): Range[] {
  return chainRefs(nft, scope, chain).map(n => n.range);
}
