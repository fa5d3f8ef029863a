/**
 * kube-proxy's nftables rules as text: `renderNftScript` is the `nft -f` input knftables would send
 * (its `add …` command forms), declarations before references so `nft -f` loads it in one pass; `renderNftList`
 * is what `nft list ruleset` prints after loading it (nft 1.0.x: named priorities, `meta mark`, hex marks,
 * a one-element anonymous set printed bare).
 */
import type { NftChain, NftKubeProxyRules, NftSet } from './synth.ts';

function setSpec(s: NftSet): string {
  const parts = [`type ${s.type}`];
  if (s.flags?.length) parts.push(`flags ${s.flags.join(',')}`);
  if (s.timeout !== undefined) parts.push(`timeout ${s.timeout}s`);
  if (s.comment) parts.push(`comment "${s.comment}"`);
  return `{ ${parts.join(' ; ')} ; }`;
}

function chainSpec(c: NftChain): string {
  if (c.base) return ` { type ${c.base.type} hook ${c.base.hook} priority ${c.base.priority} ; }`;
  if (c.comment) return ` { comment "${c.comment}" ; }`;
  return '';
}

function element(e: NftSet['elements'][number]): string {
  return `${e.key}${e.comment ? ` comment "${e.comment}"` : ''}${e.value !== undefined ? ` : ${e.value}` : ''}`;
}

export function renderNftScript(r: NftKubeProxyRules, opts: { readonly header?: string } = {}): string {
  const t = `${r.nftFamily} ${r.table}`;
  const out: string[] = [];
  if (opts.header) out.push(...opts.header.split('\n').map(l => (l ? `# ${l}` : '#')), '');
  out.push(`add table ${t} { comment "${r.tableComment}" ; }`, '');
  for (const s of r.sets) out.push(`add ${s.kind} ${t} ${s.name} ${setSpec(s)}`);
  out.push('');
  for (const c of r.chains) out.push(`add chain ${t} ${c.name}${chainSpec(c)}`);
  let owner: string | undefined;
  for (const c of r.chains) {
    if (!c.rules.length) continue;
    if (c.owner !== owner) {
      out.push('', ...(c.owner ? [`# ${c.owner}`] : []));
      owner = c.owner;
    } else if (!owner) out.push('');
    for (const rule of c.rules) out.push(`add rule ${t} ${c.name} ${rule}`);
  }
  out.push('');
  for (const s of r.sets) for (const e of s.elements) out.push(`add element ${t} ${s.name} { ${element(e)} }`);
  return `${out.join('\n')}\n`;
}
