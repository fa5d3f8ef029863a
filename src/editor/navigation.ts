/**
 * Go to definition, find references and rename for chain names. A chain name is resolved in the table
 * whose section contains the line; every place it stands (declaration, `-A/-I/-N/-X/...` argument, `-j`/`-g`
 * target) inside that section is a reference, found from the words of each line.
 */
import { STANDARD_TARGETS, TARGETS } from '../engine/api.ts';
import { type ChainToken, chainTokenAt, chainTokensOnLine } from './chain-tokens.ts';
import type { DumpIndex, TableSpan } from './dump-index.ts';
import { type Range, type TextEdit, lineSpan } from './ranges.ts';

export interface ChainAtPosition {
  readonly span: TableSpan;
  readonly name: string;
  readonly token: ChainToken;
  /** Whether the table declares (or has built in) a chain of this name. */
  readonly declared: boolean;
}

/** The chain name under the cursor, if the word there stands where a chain name goes. */
export function chainAt(index: DumpIndex, line: number, character: number): ChainAtPosition | null {
  const token = chainTokenAt(index.lines.lineAt(line), character);
  const span = index.tableAt(line);
  if (!token || !span) return null;
  const declared = span.table.chains.has(token.name);
  // `-j ACCEPT` or `-j DNAT` name a verdict or a target extension, not a chain (unless one is declared).
  if (token.role === 'target' && !declared && (STANDARD_TARGETS.has(token.name) || TARGETS.has(token.name)))
    return null;
  return { span, name: token.name, token, declared };
}

/** Where the chain is declared: its `:NAME` line, or the `*table` line for an undeclared built-in chain. */
export function definitionOf(index: DumpIndex, at: ChainAtPosition): Range | null {
  const chain = at.span.table.chains.get(at.name);
  if (!chain) return null;
  return chain.range;
}

/** Every occurrence of the chain name in its table's section, in line order. */
export function chainOccurrences(
  index: DumpIndex,
  span: TableSpan,
  name: string,
): { range: Range; role: ChainToken['role'] }[] {
  const out: { range: Range; role: ChainToken['role'] }[] = [];
  for (let l = span.startLine; l <= span.endLine; l++) {
    const text = index.lines.lineAt(l);
    if (!text.includes(name)) continue;
    for (const t of chainTokensOnLine(text))
      if (t.name === name) out.push({ range: lineSpan(l, t.start, t.end), role: t.role });
  }
  return out;
}

export function referencesOf(index: DumpIndex, at: ChainAtPosition, includeDeclaration: boolean): Range[] {
  return chainOccurrences(index, at.span, at.name)
    .filter(o => includeDeclaration || o.role !== 'declaration')
    .map(o => o.range);
}

export type PrepareRename = { ok: true; range: Range; placeholder: string } | { ok: false; message: string };

export function prepareRename(index: DumpIndex, line: number, character: number): PrepareRename {
  const at = chainAt(index, line, character);
  if (!at) return { ok: false, message: 'Only chain names can be renamed here.' };
  const chain = at.span.table.chains.get(at.name);
  if (!chain) return { ok: false, message: `Chain ${at.name} is not declared in table ${at.span.table.name}.` };
  if (chain.builtin)
    return {
      ok: false,
      message: `${at.name} is a built-in chain of table ${at.span.table.name}; its name is fixed by the kernel.`,
    };
  return { ok: true, range: lineSpan(line, at.token.start, at.token.end), placeholder: at.name };
}

/**
 * Why a new chain name is refused, or null: iptables takes at most 28 characters (XT_EXTENSION_MAXNAMELEN
 * minus the NUL), no blanks or quotes, no leading `-` or `!`, and no name of a verdict or target
 * extension (iptables(8): "chain name may not clash with target name").
 */
export function invalidChainName(name: string, table: TableSpan): string | null {
  if (name.length === 0) return 'A chain name cannot be empty.';
  if (name.length > 28) return `Chain names have at most 28 characters (${name.length} given).`;
  if (/[\s"'\\]/.test(name)) return 'Chain names cannot contain blanks, quotes or backslashes.';
  if (name.startsWith('-') || name.startsWith('!')) return `A chain name cannot start with '${name[0]}'.`;
  if (STANDARD_TARGETS.has(name) || TARGETS.has(name))
    return `${name} is the name of a target; iptables refuses chains named like targets.`;
  if (table.table.chains.has(name)) return `Table ${table.table.name} already has a chain ${name}.`;
  return null;
}

export type RenameResult = { ok: true; edits: TextEdit[] } | { ok: false; message: string };

export function renameChain(index: DumpIndex, line: number, character: number, newName: string): RenameResult {
  const prep = prepareRename(index, line, character);
  if (!prep.ok) return prep;
  const at = chainAt(index, line, character)!;
  const problem = invalidChainName(newName, at.span);
  if (problem) return { ok: false, message: problem };
  return {
    ok: true,
    edits: chainOccurrences(index, at.span, at.name).map(o => ({ range: o.range, newText: newName })),
  };
}
