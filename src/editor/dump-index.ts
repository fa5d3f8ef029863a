/**
 * One parsed snapshot of a dump and the lookups every editor feature needs: the rule on a line, the table a
 * line belongs to (with its COMMIT), and who jumps to each chain. Built once per document version; the
 * references are computed on first use.
 */
import {
  type Chain,
  type ChainReference,
  type Rule,
  type Ruleset,
  type Table,
  chainReferences,
  detectRulesetFormat,
  parseIptables,
  parseRuleset,
} from '../engine/api.ts';
import { NftIndex } from './nft/nft-index.ts';
import { type LineSource, TextLines } from './text-lines.ts';

export interface TableSpan {
  readonly table: Table;
  /** The `*table` line. */
  readonly startLine: number;
  /** The COMMIT line, or the last line before the next table (or of the file) when there is none. */
  readonly endLine: number;
  readonly commitLine: number | null;
}

export interface DumpAnalysisOptions {
  readonly file: string;
  readonly maxBytes?: number;
  /** The encoding the editor decoded the document from (`ParseOptions.decodedFrom`). */
  readonly decodedFrom?: string;
}

export class DumpIndex {
  readonly tables: readonly TableSpan[];
  private readonly byLine: (Rule | undefined)[];
  private refs: Map<string, Map<string, ChainReference[]>> | null = null;

  constructor(
    readonly ruleset: Ruleset,
    readonly lines: LineSource,
    /** Set for nftables input: the AST and where its names stand (the nft editor features read it). */
    readonly nft: NftIndex | null = null,
  ) {
    this.byLine = new Array<Rule | undefined>(lines.lineCount);
    for (const t of ruleset.tables.values())
      for (const c of t.chains.values()) for (const r of c.rules) this.byLine[r.line] ??= r;
    this.tables = nft ? nftTableSpans(ruleset) : tableSpans(ruleset, lines);
  }

  ruleAt(line: number): Rule | undefined {
    return this.byLine[line];
  }

  tableAt(line: number): TableSpan | undefined {
    for (const s of this.tables) if (line >= s.startLine && line <= s.endLine) return s;
    return undefined;
  }

  chain(table: string, name: string): Chain | undefined {
    return this.ruleset.tables.get(table)?.chains.get(name);
  }

  /** Rules that jump or go to `chain` of `table`, in file order of their chains. */
  referencesTo(table: string, chain: string): readonly ChainReference[] {
    return this.references().get(table)?.get(chain) ?? [];
  }

  /** Every table's references, by table and chain name. */
  references(): ReadonlyMap<string, ReadonlyMap<string, readonly ChainReference[]>> {
    if (!this.refs) {
      this.refs = new Map();
      for (const t of this.ruleset.tables.values()) this.refs.set(t.name, chainReferences(t));
    }
    return this.refs;
  }
}

/**
 * Parses a dump lazily (rules compile on demand) and indexes it. nftables input (recognised by content, as
 * `parseRuleset` does) is lowered lazily too, and keeps its AST for the nft editor features.
 */
export function analyzeDump(text: string, options: DumpAnalysisOptions): DumpIndex {
  const format = detectRulesetFormat(text);
  if (format !== 'iptables-save' && format !== 'unknown') {
    const parsed = parseRuleset(text, {
      file: options.file,
      lazy: true,
      ...(options.maxBytes !== undefined ? { maxBytes: options.maxBytes } : {}),
      ...(options.decodedFrom !== undefined ? { decodedFrom: options.decodedFrom } : {}),
    });
    if (parsed.nft && parsed.format !== 'iptables-save')
      return new DumpIndex(
        parsed.ruleset,
        new TextLines(text),
        new NftIndex(parsed.nft, parsed.ruleset, parsed.format, text),
      );
  }
  const rs = parseIptables(text, {
    file: options.file,
    lazy: true,
    ...(options.maxBytes !== undefined ? { maxBytes: options.maxBytes } : {}),
    ...(options.decodedFrom !== undefined ? { decodedFrom: options.decodedFrom } : {}),
  });
  return new DumpIndex(rs, new TextLines(text));
}

/** nftables tables span their block (`table … { }`) or, in a script, their `add table` line. */
function nftTableSpans(rs: Ruleset): TableSpan[] {
  return [...rs.tables.values()].map(t => ({
    table: t,
    startLine: t.range.start.line,
    endLine: t.range.end.line,
    commitLine: null,
  }));
}

function tableSpans(rs: Ruleset, lines: LineSource): TableSpan[] {
  const tables = [...rs.tables.values()].sort((a, b) => a.line - b.line);
  const spans: TableSpan[] = [];
  for (let i = 0; i < tables.length; i++) {
    const t = tables[i]!;
    const limit = i + 1 < tables.length ? tables[i + 1]!.line - 1 : lines.lineCount - 1;
    let commit: number | null = null;
    // The COMMIT follows the table's last rule; searching from there keeps this cheap on big dumps.
    let from = t.line + 1;
    for (const c of t.chains.values()) for (const r of c.rules) if (r.line > from) from = r.line;
    for (let l = from; l <= limit; l++) {
      if (lines.lineAt(l).trimStart().startsWith('COMMIT')) {
        commit = l;
        break;
      }
    }
    spans.push({ table: t, startLine: t.line, endLine: commit ?? limit, commitLine: commit });
  }
  return spans;
}

/** The line of the chain's first rule in the file (null for an empty chain). */
export function firstRuleLine(chain: Chain): number | null {
  let min: number | null = null;
  for (const r of chain.rules) if (min === null || r.line < min) min = r.line;
  return min;
}

/** Contiguous runs of a chain's rule lines, as `[first, last]` pairs (iptables-save writes one run per chain). */
export function ruleBlocks(chain: Chain): [number, number][] {
  const lines = chain.rules.map(r => r.line);
  // Rules are usually already in file order (iptables-save); sort only when they are not.
  for (let i = 1; i < lines.length; i++) {
    if (lines[i]! < lines[i - 1]!) {
      lines.sort((a, b) => a - b);
      break;
    }
  }
  const blocks: [number, number][] = [];
  for (const l of lines) {
    const last = blocks[blocks.length - 1];
    if (last && l === last[1] + 1) last[1] = l;
    else blocks.push([l, l]);
  }
  return blocks;
}
