/**
 * What kube-proxy's chains are (iptables mode, kubernetes pkg/proxy/iptables/proxier.go): names, the
 * Service a chain belongs to (kube-proxy writes `namespace/name:port` in rule comments), how a Service's
 * entry rules in KUBE-SERVICES / KUBE-NODEPORTS reach it, and its endpoints with the exact share of new
 * connections each one gets from the chain's `-m statistic` rules.
 */
import {
  type Chain,
  ONE,
  type Rational,
  type Rule,
  complement,
  formatAddr,
  formatNet,
  loadsModule,
  optionOf,
  mul,
  targetNameOf,
} from '../engine/api.ts';
import type { DumpIndex } from './dump-index.ts';
import { type RandomBranch, ruleRandomBranch } from './probability.ts';

export type KubeChainKind =
  | 'services'
  | 'nodeports'
  | 'svc'
  | 'svl'
  | 'ext'
  | 'fw'
  | 'sep'
  | 'mark-masq'
  | 'mark-drop'
  | 'postrouting'
  | 'forward'
  | 'firewall'
  | 'proxy-firewall'
  | 'external-services'
  | 'canary'
  | 'other';

const FIXED: Record<string, KubeChainKind> = {
  'KUBE-SERVICES': 'services',
  'KUBE-NODEPORTS': 'nodeports',
  'KUBE-MARK-MASQ': 'mark-masq',
  'KUBE-MARK-DROP': 'mark-drop',
  'KUBE-POSTROUTING': 'postrouting',
  'KUBE-FORWARD': 'forward',
  'KUBE-FIREWALL': 'firewall',
  'KUBE-PROXY-FIREWALL': 'proxy-firewall',
  'KUBE-EXTERNAL-SERVICES': 'external-services',
  'KUBE-PROXY-CANARY': 'canary',
  'KUBE-KUBELET-CANARY': 'canary',
};

const PREFIXED: [string, KubeChainKind][] = [
  ['KUBE-SVC-', 'svc'],
  ['KUBE-SVL-', 'svl'],
  ['KUBE-EXT-', 'ext'],
  ['KUBE-FW-', 'fw'],
  ['KUBE-SEP-', 'sep'],
];

export function kubeChainKind(name: string): KubeChainKind | null {
  const fixed = FIXED[name];
  if (fixed) return fixed;
  for (const [prefix, kind] of PREFIXED) if (name.startsWith(prefix)) return kind;
  return name.startsWith('KUBE-') ? 'other' : null;
}

const SERVICE_IN_COMMENT =
  /^(?:masquerade traffic for |pod traffic for |route LOCAL traffic for |)([A-Za-z0-9.-]+\/[A-Za-z0-9.-]+(?::\S+)?)(?:\s|$)/;

/** The `namespace/name[:port]` kube-proxy wrote in a rule comment. */
export function serviceInComment(comment: string | null): string | null {
  if (!comment) return null;
  return SERVICE_IN_COMMENT.exec(comment)?.[1] ?? null;
}

/** The Service port a chain belongs to, from its rules' comments (or the rules that jump to it). */
export function serviceOfChain(index: DumpIndex, table: string, chain: Chain): string | null {
  for (const r of chain.rules) {
    const s = serviceInComment(r.comment);
    if (s) return s;
  }
  for (const ref of index.referencesTo(table, chain.name)) {
    const s = serviceInComment(ref.rule.comment);
    if (s) return s;
  }
  return null;
}

/** Where a Service chain is entered: `10.96.0.10:53/udp (cluster IP)`, `NodePort 30381/tcp`. */
export interface ServiceEntry {
  readonly text: string;
  readonly rule: Rule;
}

/** The address a Service rule names: `10.96.0.10` (a host without its /32), else the network. */
function addressOf(rule: Rule): string | null {
  const d = rule.ip.dst?.value;
  if (!d) return null;
  return d.prefix === (d.v === 4 ? 32 : 128)
    ? formatAddr(d.v === 4 ? { v: 4, n: d.n } : { v: 6, n: d.n })
    : formatNet(d);
}

export function serviceEntries(index: DumpIndex, table: string, chain: Chain, depth = 0): ServiceEntry[] {
  const out: ServiceEntry[] = [];
  for (const ref of index.referencesTo(table, chain.name)) {
    const from = ref.rule.chain;
    if (from === 'KUBE-SERVICES' || from === 'KUBE-NODEPORTS') {
      const dst = addressOf(ref.rule);
      const proto = ref.rule.ip.protoName ?? null;
      const port = optionOf(ref.rule, '--dport', '--dports')?.args[0] ?? null;
      const what =
        / (cluster IP|loadbalancer IP|external IP)$/.exec(ref.rule.comment ?? '')?.[1] ??
        (from === 'KUBE-NODEPORTS' ? 'NodePort' : null);
      const addr = dst
        ? `${dst.includes(':') ? `[${dst}]` : dst}${port ? `:${port}` : ''}`
        : port
          ? `node port ${port}`
          : 'any address';
      out.push({ text: `${addr}${proto ? `/${proto}` : ''}${what ? ` (${what})` : ''}`, rule: ref.rule });
    } else if (depth < 2 && (from.startsWith('KUBE-EXT-') || from.startsWith('KUBE-FW-'))) {
      const via = index.chain(table, from);
      if (via) out.push(...serviceEntries(index, table, via, depth + 1));
    }
  }
  return out;
}

/** The endpoint a KUBE-SEP chain DNATs to (`10.10.1.11:80`). */
export function endpointOfSep(chain: Chain): string | null {
  for (const r of chain.rules) {
    const to = optionOf(r, '--to-destination')?.args[0];
    if (to) return to;
  }
  return null;
}

export interface EndpointShare {
  readonly rule: Rule;
  /** The chain the rule jumps to (a KUBE-SEP chain for kube-proxy). */
  readonly target: string;
  readonly endpoint: string | null;
  /** The rule's own random branch, if it has one. */
  readonly branch: RandomBranch | null;
  /** The exact share of the chain's new connections this rule takes. */
  readonly share: Rational;
}

export interface Distribution {
  readonly shares: readonly EndpointShare[];
  /** Session affinity (`-m recent`) rules come first: a client with a live entry keeps its endpoint. */
  readonly affinity: boolean;
  /** The share no endpoint rule takes (it goes on to the rest of the chain). */
  readonly rest: Rational;
}

/**
 * The endpoint rules of a load-balancing chain and their exact shares: kube-proxy writes one rule per
 * endpoint, rule i of n with `--probability 1/(n-i)` and the last without, so rule i takes
 * p_i · Π_{j<i} (1 − p_j) of the connections. Rules that carry other criteria (the masquerade mark for
 * off-cluster sources, session affinity checks) are not part of the draw.
 */
export function distribution(index: DumpIndex, table: string, chain: Chain, until?: Rule): Distribution {
  const shares: EndpointShare[] = [];
  let remaining: Rational = ONE;
  let affinity = false;
  for (const rule of chain.rules) {
    if (until && rule.index > until.index) break;
    const t = targetNameOf(rule);
    if (!t || !index.chain(table, t.name)) continue;
    if (loadsModule(rule, 'recent')) {
      affinity = true;
      continue;
    }
    const onlyDraw =
      Object.keys(rule.ip).length === 0 &&
      rule.matches.every(m => m.module.name === 'comment' || m.module.name === 'statistic');
    if (!onlyDraw) continue;
    const branch = ruleRandomBranch(rule);
    const p = branch?.p ?? ONE;
    const share = mul(remaining, p);
    const target = index.chain(table, t.name)!;
    const endpoint =
      /-> (\S+)$/.exec(rule.comment ?? '')?.[1] ?? (t.name.startsWith('KUBE-SEP-') ? endpointOfSep(target) : null);
    shares.push({ rule, target: t.name, endpoint, branch, share });
    remaining = mul(remaining, complement(p));
    if (!branch) break;
  }
  return { shares, affinity, rest: remaining };
}

/** The load-balancing chains that send connections to this KUBE-SEP chain, with the share each gives it. */
export function sharesOfSep(index: DumpIndex, table: string, sep: Chain): { via: string; share: EndpointShare }[] {
  const out: { via: string; share: EndpointShare }[] = [];
  const seen = new Set<string>();
  for (const ref of index.referencesTo(table, sep.name)) {
    if (seen.has(ref.rule.chain)) continue;
    seen.add(ref.rule.chain);
    const via = index.chain(table, ref.rule.chain);
    if (!via) continue;
    const s = distribution(index, table, via).shares.find(x => x.target === sep.name);
    if (s) out.push({ via: via.name, share: s });
  }
  return out;
}
