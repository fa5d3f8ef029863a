/**
 * What the editor knows about one parse of an nftables file, beside the model every trace reads: the AST
 * (tables, chains, sets and maps with their elements, as written) and where each chain, set and define
 * name stands (names.ts). Built once per document version in the engine worker.
 */
import type {
  NftChain,
  NftRule,
  NftRuleset,
  NftSet,
  NftTable,
  Rule,
  Ruleset,
  RulesetInputFormat,
} from '../../engine/api.ts';
import { type NftNames, scanNftNames } from './names.ts';

export interface NftRuleAt {
  readonly table: NftTable;
  readonly chain: NftChain;
  readonly rule: NftRule;
  /** The lowered rule of the model (what traces evaluate). */
  readonly model: Rule | undefined;
}

export class NftIndex {
  /** Where names stand; empty for JSON (its names are JSON strings, not tokens). */
  readonly names: NftNames;
  /**
   * The first rule (in table, chain, rule order) starting on each line, as parallel arrays sorted by line:
   * a map of one object per rule held 40 MB of the engine worker for kube-proxy's 483k-rule script.
   */
  private readonly ruleLines: Int32Array;
  private readonly ruleTables: Int32Array;
  private readonly ruleChains: NftChain[] = [];
  private readonly ruleIndexes: Int32Array;

  constructor(
    readonly ast: NftRuleset,
    readonly ruleset: Ruleset,
    readonly format: Exclude<RulesetInputFormat, 'iptables-save'>,
    text: string,
  ) {
    this.names = scanNftNames(format === 'nft-json' ? '' : text);
    let n = 0;
    for (const table of ast.tables) for (const chain of table.chains) n += chain.rules.length;
    const lines = new Int32Array(n);
    const tables = new Int32Array(n);
    const indexes = new Int32Array(n);
    const chains: NftChain[] = new Array<NftChain>(n);
    let k = 0;
    ast.tables.forEach((table, ti) => {
      for (const chain of table.chains)
        chain.rules.forEach((rule, i) => {
          lines[k] = rule.range.start.line;
          tables[k] = ti;
          indexes[k] = i;
          chains[k++] = chain;
        });
    });
    // Stable by line: of the rules starting on one line, the first in table, chain and rule order.
    const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => lines[a]! - lines[b]! || a - b);
    const keep = order.filter((o, i) => i === 0 || lines[o] !== lines[order[i - 1]!]);
    this.ruleLines = Int32Array.from(keep, o => lines[o]!);
    this.ruleTables = Int32Array.from(keep, o => tables[o]!);
    this.ruleIndexes = Int32Array.from(keep, o => indexes[o]!);
    for (const o of keep) this.ruleChains.push(chains[o]!);
  }

  /** `family name`, the key of a table in the model and the scope of its names. */
  static key(t: { readonly family: string; readonly name: string }): string {
    return `${t.family} ${t.name}`;
  }

  ruleAt(line: number): NftRuleAt | undefined {
    const lines = this.ruleLines;
    let lo = 0;
    let hi = lines.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (lines[mid]! < line) lo = mid + 1;
      else hi = mid;
    }
    if (lo >= lines.length || lines[lo] !== line) return undefined;
    const table = this.ast.tables[this.ruleTables[lo]!]!;
    const chain = this.ruleChains[lo]!;
    const i = this.ruleIndexes[lo]!;
    const rule = chain.rules[i]!;
    return { table, chain, rule, model: this.modelChain(table, chain.name)?.rules[i] };
  }

  table(scope: string): NftTable | undefined {
    return this.ast.tables.find(t => NftIndex.key(t) === scope);
  }

  chain(scope: string, name: string): NftChain | undefined {
    return this.table(scope)?.chains.find(c => c.name === name);
  }

  set(scope: string, name: string): NftSet | undefined {
    return this.table(scope)?.sets.find(s => s.name === name);
  }

  modelChain(t: NftTable, chain: string) {
    return this.ruleset.tables.get(NftIndex.key(t))?.chains.get(chain);
  }
}
