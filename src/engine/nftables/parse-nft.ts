/**
 * One entry point for the three nftables forms: detects the form by content (parse-detect.ts) and runs
 * its front end. nft-text and nft-script share a grammar; JSON has its own reader.
 */
import type { NftParseResult } from './ast.ts';
import { detectRulesetFormat } from './parse-detect.ts';
import { parseNftJson } from './parse-json.ts';
import { parseNftScript, parseNftText, type NftParseOptions } from './parse-script.ts';

export function parseNftAny(
  text: string,
  options: NftParseOptions = {},
): NftParseResult & { format: 'nft-text' | 'nft-json' | 'nft-script' } {
  const format = detectRulesetFormat(text);
  if (format === 'nft-json') return { format, ...parseNftJson(text, options) };
  if (format === 'nft-script') return { format, ...parseNftScript(text, options) };
  return { format: 'nft-text', ...parseNftText(text, options) };
}
