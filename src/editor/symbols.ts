/**
 * The outline of a dump: tables, and in each its chains with their rule counts. A chain's symbol covers its
 * block of rules (where iptables-save writes its body) and selects the chain name on the block's first
 * line; an empty chain's symbol is its declaration.
 */
import { type Chain, chainNameStart } from '../engine/api.ts';
import { type DumpIndex, ruleBlocks } from './dump-index.ts';
import { type Range, lineSpan, range } from './ranges.ts';

export interface OutlineSymbol {
  readonly name: string;
  /** `set` and `map` are nftables' named sets and maps. */
  readonly kind: 'table' | 'chain' | 'set' | 'map';
  readonly detail: string;
  readonly range: Range;
  readonly selectionRange: Range;
  readonly children: readonly OutlineSymbol[];
}

function plural(n: number, word: string): string {
  return `${n.toLocaleString('en-US')} ${word}${n === 1 ? '' : 's'}`;
}

function chainSymbol(index: DumpIndex, chain: Chain): OutlineSymbol {
  const parts = [plural(chain.rules.length, 'rule')];
  if (chain.builtin) parts.push(`policy ${chain.policy ?? 'ACCEPT'}`);
  const detail = parts.join(' · ');
  const first = ruleBlocks(chain)[0];
  if (first) {
    const rule = index.ruleAt(first[0]);
    const start = rule ? chainNameStart(rule, chain.name) : -1;
    const selection = start >= 0 ? lineSpan(first[0], start, start + chain.name.length) : lineSpan(first[0], 0, 0);
    const endLength = index.ruleAt(first[1])?.range.end.character ?? index.lines.lineAt(first[1]).length;
    return {
      name: chain.name,
      kind: 'chain',
      detail,
      range: range(first[0], 0, first[1], endLength),
      selectionRange: selection,
      children: [],
    };
  }
  return { name: chain.name, kind: 'chain', detail, range: chain.range, selectionRange: chain.range, children: [] };
}

export function outline(index: DumpIndex): OutlineSymbol[] {
  return index.tables.map(span => {
    const t = span.table;
    const chains = [...t.chains.values()].map(c => chainSymbol(index, c));
    const rules = [...t.chains.values()].reduce((n, c) => n + c.rules.length, 0);
    const header = lineSpan(span.startLine, 0, index.lines.lineAt(span.startLine).length);
    // A chain symbol must lie inside its table's range; a hand-written file may place rules oddly.
    const inside = chains.filter(c => c.range.start.line >= span.startLine && c.range.end.line <= span.endLine);
    return {
      name: t.name,
      kind: 'table' as const,
      detail: `${plural(t.chains.size, 'chain')} · ${plural(rules, 'rule')}`,
      range: range(span.startLine, 0, span.endLine, index.lines.lineAt(span.endLine).length),
      selectionRange: header,
      children: inside,
    };
  });
}
