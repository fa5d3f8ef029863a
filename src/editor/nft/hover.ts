/**
 * Hovers in nftables files: a chain name (its hook or who jumps to it; kube-proxy's Service, endpoints and
 * exact shares behind the hashed names), a set or map (`@name`: its type and contents with counts), a
 * `$variable` (its value), or else the rule on the line read in plain words.
 */
import { type NftChain, type NftRule, type NftSet, type NftTable, ruleMayMention } from '../../engine/api.ts';
import type { HoverResult } from '../hover/hover.ts';
import { cell, code, escapeMarkdown } from '../hover/markdown.ts';
import type { LineSource } from '../text-lines.ts';
import { chainDetail, setDetail, setKind } from './outline.ts';
import { describeNftRule, numgenBranches } from './describe.ts';
import { KUBE_NFT_TEXT, kubeNftName, serviceText } from './kube.ts';
import { chainRefs } from './lens.ts';
import type { NftName } from './names.ts';
import { NftIndex } from './nft-index.ts';
import { exprText } from './print.ts';

const MAX_ELEMENTS_SHOWN = 15;

function plural(n: number, word: string): string {
  return `${n.toLocaleString('en-US')} ${word}${n === 1 ? '' : 's'}`;
}

export function nftHoverAt(nft: NftIndex, lines: LineSource, line: number, character: number): HoverResult | null {
  const at = nft.names.at(line, character);
  if (at) {
    const markdown =
      at.kind === 'chain'
        ? chainHover(nft, at)
        : at.kind === 'set'
          ? setHover(nft, at.scope, at.name)
          : defineHover(nft, lines, at);
    return { markdown, range: at.range };
  }
  const r = nft.ruleAt(line);
  if (r) return { markdown: ruleHover(nft, r.table, r.chain, r.rule), range: r.rule.range };
  for (const t of nft.ast.tables)
    for (const s of t.sets)
      if (line >= s.range.start.line && line <= s.range.end.line)
        return {
          markdown: setHover(nft, NftIndex.key(t), s.name),
          range: { start: { line, character: 0 }, end: { line, character: lines.lineAt(line).length } },
        };
  return null;
}

/** Where a reference stands: the rule of a chain, or an element of a map. */
function whereIs(nft: NftIndex, ref: NftName): string {
  const line = ref.range.start.line;
  const r = nft.ruleAt(line);
  if (r)
    return `${code(r.chain.name)} rule ${r.chain.rules.indexOf(r.rule) + 1} (line ${line + 1}${ref.role === 'goto' ? ', goto' : ''})`;
  const t = nft.table(ref.scope);
  const m = t?.sets.find(s => line >= s.range.start.line && line <= s.range.end.line);
  if (m) return `an element of ${code(`@${m.name}`)} (line ${line + 1})`;
  return `line ${line + 1}`;
}

function chainHover(nft: NftIndex, at: NftName): string {
  const chain = nft.chain(at.scope, at.name);
  if (!chain)
    return `**${escapeMarkdown(at.name)}** is not a chain of table ${code(at.scope)}: nft refuses a rule that jumps to it.`;
  const out: string[] = [];
  if (chain.base) {
    out.push(
      `**${escapeMarkdown(chain.name)}** — base chain of table ${code(at.scope)}: ${escapeMarkdown(chainDetail(chain))}`,
    );
    out.push(
      `A packet no rule decides is ${chain.base.policy === 'drop' ? '**dropped**' : '**accepted** by this chain (later base chains on the hook still see it)'}.`,
    );
  } else {
    const refs = chainRefs(nft, at.scope, chain.name);
    out.push(
      `**${escapeMarkdown(chain.name)}** — regular chain of table ${code(at.scope)} · ${plural(chain.rules.length, 'rule')} · referenced by ${refs.length}`,
    );
    out.push(...kubeChain(nft, at.scope, chain));
    if (refs.length) {
      const shown = refs.slice(0, 5).map(r => whereIs(nft, r));
      out.push(`Reached from ${shown.join(', ')}${refs.length > 5 ? ` and ${refs.length - 5} more` : ''}`);
    } else out.push('No rule or map jumps here: its rules never run.');
  }
  if (chain.comment !== undefined) out.push(`Comment: ${escapeMarkdown(chain.comment)}`);
  return out.join('\n\n');
}

/** kube-proxy's chains: the Service port behind the hashed name, its endpoints and their exact shares. */
function kubeChain(nft: NftIndex, scope: string, chain: NftChain): string[] {
  const k = kubeNftName(chain.name);
  if (!k) return [];
  const out = [
    `kube-proxy: ${KUBE_NFT_TEXT[k.kind]}`,
    `Service port ${code(serviceText(k))}${k.endpoint ? ` · endpoint ${code(k.endpoint)}` : ''}`,
  ];
  if (k.kind === 'service') {
    const rows: string[] = [];
    for (const r of chain.rules)
      for (const s of r.stmts)
        if (s.kind === 'vmap')
          for (const b of numgenBranches(s) ?? []) {
            const ep = kubeNftName(b.target)?.endpoint ?? b.target;
            rows.push(`| ${cell(ep)} | ${b.share} | ${b.exact} |`);
          }
    if (rows.length)
      out.push(['| endpoint | share of new connections | exact |', '|---|---:|---|', ...rows].join('\n'));
    if (
      chain.rules.some(r =>
        r.stmts.some(s => s.kind === 'match' && s.right.kind === 'setref' && s.right.name.startsWith('affinity-')),
      )
    )
      out.push(
        "Session affinity: a client in an endpoint's `affinity-…` set goes back to that endpoint first; the shares apply to the others.",
      );
  }
  if (k.kind === 'endpoint') {
    for (const t of nft.ast.tables.filter(x => NftIndex.key(x) === scope))
      for (const c of t.chains)
        for (const r of c.rules) {
          // A large script's rules read their statements again: only those whose text names the chain.
          if (!ruleMayMention(r, chain.name)) continue;
          for (const s of r.stmts)
            if (s.kind === 'vmap')
              for (const b of numgenBranches(s) ?? [])
                if (b.target === chain.name)
                  out.push(`Gets ${b.share} (exactly ${b.exact}) of new connections through ${code(c.name)}`);
        }
  }
  return out;
}

function elementRow(e: import('../../engine/api.ts').NftExpr): string {
  let comment = '';
  let x = e;
  if (x.kind === 'elem') {
    comment = x.comment ?? '';
    x = x.value;
  }
  if (x.kind === 'mapping') {
    let key = x.key;
    if (key.kind === 'elem') {
      comment ||= key.comment ?? '';
      key = key.value;
    }
    return `| ${cell(exprText(key))} | ${cell(exprText(x.data))} | ${cell(comment)} |`;
  }
  return `| ${cell(exprText(x))} | | ${cell(comment)} |`;
}

function setHover(nft: NftIndex, scope: string, name: string): string {
  const s: NftSet | undefined = nft.set(scope, name);
  if (!s)
    return `**@${escapeMarkdown(name)}** is not a set or map of table ${code(scope)}: nft refuses a rule that refers to it.`;
  const uses = nft.names.occurrences('set', scope, name).filter(n => n.role === 'setref').length;
  const out = [
    `**@${escapeMarkdown(s.name)}** — ${setKind(s)} of table ${code(scope)} · ${escapeMarkdown(setDetail(s).replace(/^[^·]*· /, ''))} · used by ${plural(uses, 'reference')}`,
  ];
  const k = kubeNftName(s.name);
  if (k)
    out.push(
      `kube-proxy: ${KUBE_NFT_TEXT[k.kind]}`,
      `Service port ${code(serviceText(k))}${k.endpoint ? ` · endpoint ${code(k.endpoint)}` : ''}`,
    );
  if (s.flags.length)
    out.push(
      `Flags: ${s.flags.map(f => code(f)).join(', ')}${s.flags.includes('dynamic') ? ' — its contents change at run time (rules add to it); a trace takes the elements written here' : ''}`,
    );
  if (s.comment !== undefined) out.push(`Comment: ${escapeMarkdown(s.comment)}`);
  if (s.elements.length) {
    const rows = s.elements.slice(0, MAX_ELEMENTS_SHOWN).map(elementRow);
    const head = s.map ? ['| key | value | comment |', '|---|---|---|'] : ['| element | | comment |', '|---|---|---|'];
    out.push([...head, ...rows].join('\n'));
    if (s.elements.length > MAX_ELEMENTS_SHOWN)
      out.push(`… and ${plural(s.elements.length - MAX_ELEMENTS_SHOWN, 'more element')}`);
    if (setKind(s) === 'verdict map') {
      const targets = new Map<string, number>();
      for (const e of s.elements) {
        const t =
          /(?:goto|jump)\s+(\S+)/.exec(exprText(e))?.[1] ?? /:\s*(accept|drop|continue|return)$/.exec(exprText(e))?.[1];
        if (t) targets.set(t, (targets.get(t) ?? 0) + 1);
      }
      out.push(
        `Verdicts: ${[...targets]
          .slice(0, 8)
          .map(([t, n]) => `${code(t)} ×${n}`)
          .join(', ')}${targets.size > 8 ? ` and ${targets.size - 8} more` : ''}`,
      );
    }
  } else out.push('No elements.');
  return out.join('\n\n');
}

function defineHover(nft: NftIndex, lines: LineSource, at: NftName): string {
  const d = nft.names.declaration('define', '', at.name);
  if (!d) return `**$${escapeMarkdown(at.name)}** is not defined: nft refuses the file ("undefined variable").`;
  const text = lines.lineAt(d.range.start.line);
  const value = text
    .slice(text.indexOf('=', d.range.end.character) + 1)
    .replace(/#.*$/, '')
    .trim();
  const uses = nft.names.occurrences('define', '', at.name).filter(n => n.role === 'variable').length;
  return `**$${escapeMarkdown(at.name)}** = ${code(value)}\n\nDefined on line ${d.range.start.line + 1} · used ${uses} time${uses === 1 ? '' : 's'}`;
}

function ruleHover(nft: NftIndex, t: NftTable, c: NftChain, rule: NftRule): string {
  const scope = NftIndex.key(t);
  // By identity of the rule: a large script's rules read their statements anew each time (rule-source.ts).
  const index = c.rules.indexOf(rule) + 1;
  const out = [
    `**Rule ${index} of chain ${code(c.name)}** (table ${code(scope)})`,
    ...describeNftRule(rule.stmts, nft, scope),
  ];
  if (rule.comment !== undefined) out.push(`Comment: ${escapeMarkdown(rule.comment)}`);
  return out.join('\n\n');
}
