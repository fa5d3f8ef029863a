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
  private readonly rulesByLine = new Map<number, NftRuleAt>();

  constructor(
    readonly ast: NftRuleset,
    readonly ruleset: Ruleset,
    readonly format: Exclude<RulesetInputFormat, 'iptables-save'>,
    text: string,
  ) {
    this.names = scanNftNames(format === 'nft-json' ? '' : text);
    for (const table of ast.tables)
      for (const chain of table.chains)
        chain.rules.forEach((rule, i) => {
          const line = rule.range.start.line;
          if (this.rulesByLine.has(line)) return;
          const model = this.modelChain(table, chain.name)?.rules[i];
          this.rulesByLine.set(line, { table, chain, rule, model });
        });
  }

  /** `family name`, the key of a table in the model and the scope of its names. */
  static key(t: { readonly family: string; readonly name: string }): string {
    return `${t.family} ${t.name}`;
  }

  ruleAt(line: number): NftRuleAt | undefined {
    return this.rulesByLine.get(line);
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
