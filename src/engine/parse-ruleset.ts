/**
 * The one reader of ruleset text: recognises the format by content (never by file name,
 * nftables/parse-detect.ts) and runs its front end — iptables-save / iptables-restore, `nft list ruleset`
 * text, `nft -j list ruleset` JSON or an `nft -f` script — into the same model. The nftables forms go
 * through the shared AST (nftables/ast.ts) and its lowering (nftables/lower.ts).
 */
import type { Diagnostic } from './diagnostics.ts';
import { type ParseOptions, parseIptables } from './iptables/parse.ts';
import type { Ruleset } from './model.ts';
import { detectRulesetFormat } from './nftables/parse-detect.ts';
import { parseNftAny } from './nftables/parse-nft.ts';
import { lowerNftRuleset } from './nftables/lower.ts';
import type { NftRuleset } from './nftables/ast.ts';

export type RulesetInputFormat = 'iptables-save' | 'nft-text' | 'nft-json' | 'nft-script';

export interface ParsedRuleset {
  readonly format: RulesetInputFormat;
  readonly ruleset: Ruleset;
  /** Every diagnostic of reading and lowering (also in `ruleset.diagnostics`). */
  readonly diagnostics: readonly Diagnostic[];
  /** nftables input: the AST the model was lowered from (names, sets and elements as written, for the editor). */
  readonly nft?: NftRuleset;
}

/**
 * Text from which a lazily read nftables script keeps its rules as source positions rather than ASTs
 * (nftables/rule-source.ts): below it the ASTs are small and reading a rule's statements again costs more
 * than keeping them.
 */
export const COMPACT_NFT_RULES_MIN_CHARS = 1 << 20;

export interface RulesetReadOptions extends ParseOptions {
  /** nftables text: keep rules as source positions (default: lazy reads of texts past COMPACT_NFT_RULES_MIN_CHARS). */
  readonly compactNftRules?: boolean;
}

/** Reads a ruleset in any supported format. Never throws on user input. */
export function parseRuleset(text: string, options: RulesetReadOptions = {}): ParsedRuleset {
  const detected = detectRulesetFormat(text);
  if (detected === 'iptables-save' || detected === 'unknown') {
    // Unknown text is read as iptables, whose diagnostics say what is wrong line by line.
    const ruleset = parseIptables(text, options);
    return { format: 'iptables-save', ruleset, diagnostics: ruleset.diagnostics };
  }
  const compactRules = options.compactNftRules ?? (options.lazy === true && text.length >= COMPACT_NFT_RULES_MIN_CHARS);
  const parsed = parseNftAny(text, {
    ...(options.maxBytes !== undefined ? { maxBytes: options.maxBytes } : {}),
    compactRules,
  });
  const diagnostics: Diagnostic[] = [...parsed.diagnostics];
  const ruleset = lowerNftRuleset(parsed.ruleset, text, options.file ?? '<input>', diagnostics, options.lazy ?? false);
  return { format: parsed.format, ruleset, diagnostics, nft: parsed.ruleset };
}
