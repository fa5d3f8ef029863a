/**
 * Go to definition, find references and rename in nftables text, for chains (`jump`/`goto` targets, in
 * rules and verdict-map elements), sets and maps (`@name`) and `define`s (`$name`). Names resolve inside
 * their table (`family name`); defines are global to the file.
 */
import type { Range } from '../../engine/api.ts';
import type { PrepareRename, RenameResult } from '../navigation.ts';
import type { TextEdit } from '../ranges.ts';
import type { NftName } from './names.ts';
import type { NftIndex } from './nft-index.ts';

export function nftNameAt(nft: NftIndex, line: number, character: number): NftName | undefined {
  return nft.names.at(line, character);
}

export function nftDefinition(nft: NftIndex, line: number, character: number): Range | null {
  const at = nftNameAt(nft, line, character);
  if (!at) return null;
  return nft.names.declaration(at.kind, at.scope, at.name)?.range ?? null;
}

export function nftReferences(
  nft: NftIndex,
  line: number,
  character: number,
  includeDeclaration: boolean,
): Range[] | null {
  const at = nftNameAt(nft, line, character);
  if (!at) return null;
  return nft.names
    .occurrences(at.kind, at.scope, at.name)
    .filter(n => includeDeclaration || n.role !== 'declaration')
    .map(n => n.range);
}

const WHAT = { chain: 'chain', set: 'set or map', define: 'variable' } as const;

export function nftPrepareRename(nft: NftIndex, line: number, character: number): PrepareRename {
  if (nft.format === 'nft-json') return { ok: false, message: 'Renaming is not offered in nft JSON rulesets.' };
  const at = nftNameAt(nft, line, character);
  if (!at) return { ok: false, message: 'Only chain, set, map and variable names can be renamed here.' };
  if (!nft.names.declaration(at.kind, at.scope, at.name))
    return {
      ok: false,
      message: `${WHAT[at.kind]} ${at.name} is not declared in this file${at.scope ? ` (table ${at.scope})` : ''}.`,
    };
  const range =
    at.role === 'variable'
      ? { start: { ...at.range.start, character: at.range.start.character + 1 }, end: at.range.end }
      : at.range;
  return { ok: true, range, placeholder: at.name };
}

/**
 * Why nft would refuse the new name, or null. nft's scanner reads an unquoted name as
 * `({letter}|_)({letter}|{digit}|[/\-_\.])*` (src/scanner.l `identifier`, with `$` and `@` prefixes for
 * variables and sets); the kernel takes at most 255 bytes (NFT_CHAIN_MAXNAMELEN / NFT_SET_MAXNAMELEN 256
 * with the NUL).
 */
export function invalidNftName(nft: NftIndex, at: NftName, name: string): string | null {
  if (name.length === 0) return 'A name cannot be empty.';
  if (name.length > 255) return `nft names have at most 255 characters (${name.length} given).`;
  const pattern = at.kind === 'define' ? /^[A-Za-z_][A-Za-z0-9_]*$/ : /^[A-Za-z_][A-Za-z0-9/_.-]*$/;
  if (!pattern.test(name))
    return at.kind === 'define'
      ? 'A variable name is a letter or _ followed by letters, digits and _.'
      : 'An unquoted nft name is a letter or _ followed by letters, digits, /, -, _ and . .';
  if (nft.names.occurrences(at.kind, at.scope, name).some(n => n.role === 'declaration'))
    return `${at.scope ? `Table ${at.scope}` : 'The file'} already has a ${WHAT[at.kind]} named ${name}.`;
  return null;
}

export function nftRename(nft: NftIndex, line: number, character: number, newName: string): RenameResult {
  const prep = nftPrepareRename(nft, line, character);
  if (!prep.ok) return prep;
  const at = nftNameAt(nft, line, character)!;
  const problem = invalidNftName(nft, at, newName);
  if (problem) return { ok: false, message: problem };
  const edits: TextEdit[] = nft.names
    .occurrences(at.kind, at.scope, at.name)
    .map(n => ({ range: n.range, newText: n.role === 'variable' ? `$${newName}` : newName }));
  return { ok: true, edits };
}
