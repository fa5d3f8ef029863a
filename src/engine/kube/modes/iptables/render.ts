/**
 * Two textual views of the rules kube-proxy writes for a node:
 *  - `renderKubeProxyRestore`: kube-proxy's own iptables-restore input, in the order kube-proxy's unit tests
 *    compare it (`sortIPTablesRules` in proxier_test.go: tables by name; KUBE-NODEPORTS and KUBE-SERVICES
 *    first, then the other chains alphabetically; rules grouped by chain), so fixtures from those tests can be
 *    compared byte for byte.
 *  - `renderNodeSave`: what `iptables-save` prints on the node: built-in chains with their policies and the
 *    jump rules kube-proxy installs into them (`iptablesJumpChains`), kube-proxy's chains, the canary chains,
 *    rules in iptables-save's canonical form (legacy back end: user chains alphabetically).
 */
import type { KubeProxyRules, TableRules } from './synth.ts';
import { toSaveFormat } from './save-format.ts';
import { type RuleItem, emitPart, itemsOf, partChain, partCount } from './endpoint-rules.ts';

/** The chain of an `-A CHAIN …` line. */
function chainOf(rule: string): string {
  const start = rule.indexOf(' ') + 1;
  const end = rule.indexOf(' ', start);
  return end < 0 ? rule.slice(start) : rule.slice(start, end);
}

// A segment is one item's rules in one chain: a whole rule, or one part of an endpoint block (a policy
// chain or one KUBE-SEP-*), coded as item index × PART + part so a chain's segments are plain numbers.
const PART = 2 ** 26;

/** Each chain's segments in write order, in one pass (most chains have one). */
function segmentsByChain(items: readonly RuleItem[]): Map<string, number | number[]> {
  const m = new Map<string, number | number[]>();
  const add = (chain: string, code: number) => {
    const s = m.get(chain);
    if (s === undefined) m.set(chain, code);
    else if (typeof s === 'number') m.set(chain, [s, code]);
    else s.push(code);
  };
  for (let k = 0; k < items.length; k++) {
    const it = items[k]!;
    if (typeof it === 'string') add(chainOf(it), k * PART);
    else for (let p = 0, n = partCount(it); p < n; p++) add(partChain(it, p), k * PART + p);
  }
  return m;
}

/**
 * Text built from many short pieces: joined a few thousand at a time (a single join over a million pieces
 * costs a third more), then the chunks joined once.
 */
class Pieces {
  readonly out: string[] = [];
  private readonly chunks: string[] = [];

  /** Call after each few pieces: folds them into a chunk once enough have gathered. */
  flush(): void {
    if (this.out.length < 8192) return;
    this.chunks.push(this.out.join(''));
    this.out.length = 0;
  }

  text(): string {
    this.chunks.push(this.out.join(''));
    this.out.length = 0;
    return this.chunks.join('');
  }
}

/**
 * The rules of `chains`, in that order, each chain's in write order, as kube-proxy writes them (`save`
 * false) or as iptables-save prints them; appended to `out` as pieces, each rule ending in a newline.
 */
function emitRules(p: Pieces, t: TableRules, chains: readonly string[], save: boolean, family: 4 | 6): void {
  const items = itemsOf(t);
  const segments = segmentsByChain(items);
  const { out } = p;
  const emit = (code: number) => {
    const k = Math.floor(code / PART);
    const it = items[k]!;
    if (typeof it === 'string') out.push(save ? toSaveFormat(it, family) : it, '\n');
    else emitPart(it, code - k * PART, save, family, out);
    p.flush();
  };
  for (const c of chains) {
    const s = segments.get(c);
    if (s === undefined) continue;
    if (typeof s === 'number') emit(s);
    else for (const code of s) emit(code);
  }
}

/** `:CHAIN - [0:0]` for each chain. */
function declare(p: Pieces, chains: readonly string[], policy: string): void {
  for (const c of chains) {
    p.out.push(':', c, policy);
    p.flush();
  }
}

function sortChains(chains: readonly string[]): string[] {
  const uniq = [...new Set(chains)];
  const rank = (c: string) => (c === 'KUBE-NODEPORTS' ? 0 : c === 'KUBE-SERVICES' ? 1 : c.startsWith('KUBE-') ? 2 : 3);
  return uniq.sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}

function tableText(p: Pieces, name: string, t: TableRules, family: 4 | 6): void {
  const chains = sortChains(t.chains);
  p.out.push(`*${name}\n`);
  declare(p, chains, ' - [0:0]\n');
  emitRules(p, t, chains, false, family);
  p.out.push('COMMIT\n');
}

export function renderKubeProxyRestore(rules: KubeProxyRules): string {
  const p = new Pieces();
  tableText(p, 'filter', rules.filter, rules.family);
  tableText(p, 'nat', rules.nat, rules.family);
  return p.text();
}

/** Jump rules kube-proxy ensures in built-in chains (proxier.go `iptablesJumpChains`), in the order they end up. */
const FILTER_JUMPS: Record<string, string[]> = {
  INPUT: [
    '-m conntrack --ctstate NEW -m comment --comment "kubernetes load balancer firewall" -j KUBE-PROXY-FIREWALL',
    '-m comment --comment "kubernetes health check service ports" -j KUBE-NODEPORTS',
    '-m conntrack --ctstate NEW -m comment --comment "kubernetes externally-visible service portals" -j KUBE-EXTERNAL-SERVICES',
  ],
  FORWARD: [
    '-m conntrack --ctstate NEW -m comment --comment "kubernetes load balancer firewall" -j KUBE-PROXY-FIREWALL',
    '-m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD',
    '-m conntrack --ctstate NEW -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
    '-m conntrack --ctstate NEW -m comment --comment "kubernetes externally-visible service portals" -j KUBE-EXTERNAL-SERVICES',
  ],
  OUTPUT: [
    '-m conntrack --ctstate NEW -m comment --comment "kubernetes load balancer firewall" -j KUBE-PROXY-FIREWALL',
    '-m conntrack --ctstate NEW -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
  ],
};
const NAT_JUMPS: Record<string, string[]> = {
  PREROUTING: ['-m comment --comment "kubernetes service portals" -j KUBE-SERVICES'],
  OUTPUT: ['-m comment --comment "kubernetes service portals" -j KUBE-SERVICES'],
  POSTROUTING: ['-m comment --comment "kubernetes postrouting rules" -j KUBE-POSTROUTING'],
};
const BUILTIN: Record<string, string[]> = {
  filter: ['INPUT', 'FORWARD', 'OUTPUT'],
  nat: ['PREROUTING', 'INPUT', 'OUTPUT', 'POSTROUTING'],
  mangle: ['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING'],
};

export interface NodeSaveOptions {
  readonly header?: string;
}

export function renderNodeSave(rules: KubeProxyRules, opts: NodeSaveOptions = {}): string {
  const fam = rules.family;
  const p = new Pieces();
  const { out } = p;
  const tool = fam === 4 ? 'iptables-save' : 'ip6tables-save';
  if (opts.header) for (const l of opts.header.split('\n')) out.push(`# ${l}\n`);
  const emit = (name: string, t: TableRules | null, jumps: Record<string, string[]>) => {
    out.push(`# Generated by ${tool} v1.8.9 (legacy) — kube-proxy rules synthesized by packetlens\n`, `*${name}\n`);
    for (const b of BUILTIN[name]!) out.push(`:${b} ACCEPT [0:0]\n`);
    const user = [...new Set([...(t?.chains ?? []), 'KUBE-PROXY-CANARY'])].sort();
    declare(p, user, ' - [0:0]\n');
    for (const b of BUILTIN[name]!) {
      for (const j of jumps[b] ?? []) out.push(toSaveFormat(`-A ${b} ${j}`, fam), '\n');
      // kubelet's KUBE-FIREWALL hook, present whenever kube-proxy writes the chain's rule.
      if (name === 'filter' && (b === 'INPUT' || b === 'OUTPUT') && t?.chains.includes('KUBE-FIREWALL'))
        out.push(`-A ${b} -j KUBE-FIREWALL\n`);
    }
    if (t) emitRules(p, t, user, true, fam);
    out.push('COMMIT\n');
  };
  emit('mangle', null, {});
  emit('filter', rules.filter, FILTER_JUMPS);
  emit('nat', rules.nat, NAT_JUMPS);
  return p.text();
}
