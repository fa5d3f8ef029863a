/**
 * The outline and folds of an nftables file: tables, and in each its chains (hook, priority and policy for
 * base chains; rule counts), sets and maps (type and element count). Ranges come from the AST; a chain's
 * selection is its name where it is declared. In an `nft -f` script a table is one `add table` line and its
 * chains are elsewhere: the table's range then reaches from its first to its last object.
 */
import type { NftChain, NftSet, NftTable, Range } from '../../engine/api.ts';
import type { Fold } from '../folding.ts';
import type { OutlineSymbol } from '../symbols.ts';
import type { LineSource } from '../text-lines.ts';
import { NftIndex } from './nft-index.ts';

function plural(n: number, word: string): string {
  return `${n.toLocaleString('en-US')} ${word}${n === 1 ? '' : 's'}`;
}

export function chainDetail(c: NftChain): string {
  const parts: string[] = [];
  if (c.base) {
    const p = c.base.priority;
    parts.push(
      `${c.base.type} hook ${c.base.hook} priority ${p.name ? `${p.name}${p.offset ? ` ${p.offset > 0 ? '+' : '-'} ${Math.abs(p.offset)}` : ''} (${p.value})` : p.value}`,
    );
    parts.push(`policy ${c.base.policy ?? 'accept'}`);
  }
  parts.push(plural(c.rules.length, 'rule'));
  return parts.join(' · ');
}

export function setKind(s: NftSet): 'set' | 'map' | 'verdict map' {
  if (!s.map) return 'set';
  return s.map.length === 1 && s.map[0] === 'verdict' ? 'verdict map' : 'map';
}

export function setDetail(s: NftSet): string {
  const key = s.type?.join(' . ') ?? 'typeof';
  const type = s.map ? `${key} : ${s.map.join(' . ')}` : key;
  return `${setKind(s)} · ${type} · ${plural(s.elements.length, 'element')}`;
}

function before(a: Range, b: Range): boolean {
  return a.start.line < b.start.line || (a.start.line === b.start.line && a.start.character <= b.start.character);
}

function cover(ranges: readonly Range[]): Range {
  let start = ranges[0]!.start;
  let end = ranges[0]!.end;
  for (const r of ranges) {
    if (before(r, { start, end })) start = r.start;
    if (r.end.line > end.line || (r.end.line === end.line && r.end.character > end.character)) end = r.end;
  }
  return { start, end };
}

/**
 * A table's extent: the AST's table range is its header; the block reaches over its chains and sets to the
 * closing `}` that follows the last of them (in a script, the table's objects may stand anywhere).
 */
export function tableExtent(t: NftTable, lines: LineSource): Range {
  const r = cover([t.range, ...t.chains.map(c => c.range), ...t.sets.map(x => x.range)]);
  for (let l = r.end.line + 1; l < lines.lineCount && l <= r.end.line + 50; l++) {
    const text = lines.lineAt(l).trim();
    if (text === '' || text.startsWith('#')) continue;
    if (text === '}') return { start: r.start, end: { line: l, character: lines.lineAt(l).length } };
    break;
  }
  return r;
}

function nameRange(nft: NftIndex, kind: 'chain' | 'set', t: NftTable, name: string, fallback: Range): Range {
  const d = nft.names.declaration(kind, NftIndex.key(t), name);
  return d ? d.range : { start: fallback.start, end: fallback.start };
}

export function nftOutline(nft: NftIndex, lines: LineSource): OutlineSymbol[] {
  return nft.ast.tables.map(t => {
    const chains: OutlineSymbol[] = t.chains.map(c => ({
      name: c.name,
      kind: 'chain',
      detail: chainDetail(c),
      range: c.range,
      selectionRange: nameRange(nft, 'chain', t, c.name, c.range),
      children: [],
    }));
    const sets: OutlineSymbol[] = t.sets.map(s => ({
      name: s.name,
      kind: s.map ? 'map' : 'set',
      detail: setDetail(s),
      range: s.range,
      selectionRange: nameRange(nft, 'set', t, s.name, s.range),
      children: [],
    }));
    const children = [...sets, ...chains].sort((a, b) => (before(a.range, b.range) ? -1 : 1));
    const rules = t.chains.reduce((n, c) => n + c.rules.length, 0);
    const range = tableExtent(t, lines);
    return {
      name: `${t.family} ${t.name}`,
      kind: 'table' as const,
      detail: `${plural(t.chains.length, 'chain')} · ${plural(t.sets.length, 'set')} · ${plural(rules, 'rule')}`,
      range,
      selectionRange: { start: t.range.start, end: t.range.start },
      children,
    };
  });
}

/** Folds: every table, chain, set and map block of more than one line, and runs of `#` comment lines. */
export function nftFolds(nft: NftIndex, lines: LineSource): Fold[] {
  const folds: Fold[] = [];
  const block = (r: Range) => {
    if (r.end.line > r.start.line) folds.push({ start: r.start.line, end: r.end.line, kind: 'region' });
  };
  for (const t of nft.ast.tables) {
    if (t.range.end.line > t.range.start.line || lines.lineAt(t.range.start.line).includes('{'))
      block(tableExtent(t, lines));
    for (const c of t.chains) block(c.range);
    for (const s of t.sets) block(s.range);
  }
  let commentStart = -1;
  const n = lines.lineCount;
  for (let l = 0; l <= n; l++) {
    const isComment = l < n && lines.lineAt(l).trimStart().startsWith('#');
    if (isComment && commentStart < 0) commentStart = l;
    if (!isComment && commentStart >= 0) {
      if (l - 1 > commentStart) folds.push({ start: commentStart, end: l - 1, kind: 'comment' });
      commentStart = -1;
    }
  }
  return folds.sort((a, b) => a.start - b.start || b.end - a.end);
}
