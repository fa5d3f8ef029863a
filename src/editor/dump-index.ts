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
  parseIptables,
} from '../engine/api.ts';
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
}

export class DumpIndex {
  readonly tables: readonly TableSpan[];
  private readonly byLine: (Rule | undefined)[];
  private refs: Map<string, Map<string, ChainReference[]>> | null = null;

  constructor(
    readonly ruleset: Ruleset,
    readonly lines: LineSource,
  ) {
    this.byLine = new Array<Rule | undefined>(lines.lineCount);
    for (const t of ruleset.tables.values())
      for (const c of t.chains.values()) for (const r of c.rules) this.byLine[r.line] = r;
    this.tables = tableSpans(ruleset, lines);
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

/** Parses a dump lazily (rules compile on demand) and indexes it. */
export function analyzeDump(text: string, options: DumpAnalysisOptions): DumpIndex {
  const rs = parseIptables(text, {
    file: options.file,
    lazy: true,
    ...(options.maxBytes !== undefined ? { maxBytes: options.maxBytes } : {}),
  });
  return new DumpIndex(rs, new TextLines(text));
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
