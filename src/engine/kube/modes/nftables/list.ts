/**
 * kube-proxy's nftables rules as `nft list ruleset` prints them once loaded (nft 1.0.6; checked against the
 * kernel's own listing in test/fixtures/kernel-nft/kube-proxy-synth/ruleset.txt): objects in creation order,
 * sets and maps before chains, named base-chain priorities, `meta mark` with 32-bit hex constants, an
 * anonymous set of one element printed bare, set timeouts in nft's time units. Element order and line
 * wrapping inside `elements = { … }` are the kernel's choice (hash order) and are not reproduced: one
 * element per line, in the order kube-proxy adds them.
 */
import type { NftChain, NftKubeProxyRules, NftSet } from './synth.ts';

/** nftables src/rule.c `std_prios`: the names nft prints, per hook (dstnat/srcnat only where they apply). */
const STD_PRIOS: readonly { name: string; prio: number; hooks?: readonly string[] }[] = [
  { name: 'raw', prio: -300 },
  { name: 'mangle', prio: -150 },
  { name: 'dstnat', prio: -100, hooks: ['prerouting'] },
  { name: 'filter', prio: 0 },
  { name: 'security', prio: 50 },
  { name: 'srcnat', prio: 100, hooks: ['postrouting'] },
];

/** `prio2str`: a standard priority's name, or name ± offset within 10 of one, else the number. */
export function priorityText(hook: string, prio: number): string {
  for (const s of STD_PRIOS) {
    if (s.hooks && !s.hooks.includes(hook)) continue;
    const off = prio - s.prio;
    if (off === 0) return s.name;
    if (Math.abs(off) <= 10) return `${s.name} ${off > 0 ? '+' : '-'} ${Math.abs(off)}`;
  }
  return String(prio);
}

/** nft's time format: 10800 s is `3h`, 90 s `1m30s`. */
export function nftDuration(seconds: number): string {
  const units: [string, number][] = [
    ['d', 86400],
    ['h', 3600],
    ['m', 60],
    ['s', 1],
  ];
  let rest = seconds;
  let out = '';
  for (const [u, n] of units) {
    const q = Math.floor(rest / n);
    if (q) out += `${q}${u}`;
    rest -= q * n;
  }
  return out || '0s';
}

const hex32 = (v: string) => `0x${Number.parseInt(v, 16).toString(16).padStart(8, '0')}`;

/** One rule as kube-proxy writes it → as nft lists it (only the forms kube-proxy writes change). */
export function listRule(rule: string): string {
  return rule
    .replace(
      /^mark set mark (or|xor) 0x([0-9a-f]+)/,
      (_m, op: string, v: string) => `meta mark set meta mark ${op === 'or' ? '|' : '^'} ${hex32(v)}`,
    )
    .replace(/^mark and 0x([0-9a-f]+) == 0 /, (_m, v: string) => `meta mark & ${hex32(v)} == 0x00000000 `)
    .replace(/(ip6? [sd]addr (?:!= )?)\{ ([^}]*) \}/, (_m, head: string, body: string) => {
      const items = body
        .split(',')
        .map(s => s.trim())
        .filter(Boolean);
      return items.length === 1 ? `${head}${items[0]}` : `${head}{ ${items.join(', ')} }`;
    })
    .replace(/ , /g, ', ');
}

function setBlock(s: NftSet): string[] {
  const out = [`\t${s.kind} ${s.name} {`, `\t\ttype ${s.type}`];
  // nft shows the size the kernel gives a dynamic set created without one.
  if (s.flags?.includes('dynamic')) out.push('\t\tsize 65535');
  if (s.flags?.length) out.push(`\t\tflags ${s.flags.join(',')}`);
  if (s.timeout !== undefined) out.push(`\t\ttimeout ${nftDuration(s.timeout)}`);
  if (s.comment) out.push(`\t\tcomment "${s.comment}"`);
  if (s.elements.length) {
    const items = s.elements.map(
      e => `${e.key}${e.comment ? ` comment "${e.comment}"` : ''}${e.value !== undefined ? ` : ${e.value}` : ''}`,
    );
    out.push(`\t\telements = { ${items.join(',\n\t\t\t     ')} }`);
  }
  out.push('\t}');
  return out;
}

function chainBlock(c: NftChain): string[] {
  const out = [`\tchain ${c.name} {`];
  if (c.base)
    out.push(
      `\t\ttype ${c.base.type} hook ${c.base.hook} priority ${priorityText(c.base.hook, c.base.priority)}; policy accept;`,
    );
  if (c.comment) out.push(`\t\tcomment "${c.comment}"`);
  for (const r of c.rules) out.push(`\t\t${listRule(r)}`);
  out.push('\t}');
  return out;
}

export function renderNftList(r: NftKubeProxyRules): string {
  const blocks = [...r.sets.map(setBlock), ...r.chains.map(chainBlock)];
  const body = blocks.map(b => b.join('\n')).join('\n\n');
  return `table ${r.nftFamily} ${r.table} {\n\tcomment "${r.tableComment}"\n${body}\n}\n`;
}
