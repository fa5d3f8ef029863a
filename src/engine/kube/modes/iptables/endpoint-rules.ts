/**
 * The endpoint-level rules of one Service port — KUBE-SVC-* / KUBE-SVL-* (affinity checks, then one
 * `statistic` rule per endpoint, `1/(n-i)` each) and each endpoint's KUBE-SEP-* (masquerade its own
 * hairpin traffic, DNAT) — kept as one record instead of one string per rule. They are nearly all of a
 * large cluster's rules (3 of every 3.1 at 10 endpoints per Service), and their text is written only
 * when the rules are rendered: in kube-proxy's form (`restoreLines`, kubernetes pkg/proxy/iptables/
 * proxier.go `syncProxyRules`, the same words as before this record existed) or straight in
 * iptables-save's form (`savePart`), which equals `toSaveFormat` of the kube-proxy line (test/kube/
 * render-blocks.test.ts checks every rule of every fixture).
 */
import { endpointString } from '../../model/build.ts';
import type { EndpointInfo } from '../../model/types.ts';
import { endpointChainName } from '../../hash.ts';
import { saveString } from '../../../iptables/tokenize.ts';
import { savedProbability, toSaveFormat } from './save-format.ts';
import type { TableRules } from './synth.ts';

/** One policy chain (KUBE-SVC-* or KUBE-SVL-*) and its endpoints, as indexes into the block's lists. */
interface PolicyChain {
  readonly chain: string;
  readonly members: readonly number[];
}

export interface EndpointBlock {
  /** kube-proxy's ServicePortName, `ns/name:port`. */
  readonly name: string;
  /** `tcp`, `udp`, `sctp`. */
  readonly protocol: string;
  readonly affinity: boolean;
  readonly affinityTimeout: number;
  /** Per-endpoint comments (kube-proxy drops them above its large-cluster threshold). */
  readonly comments: boolean;
  /** KUBE-SVC-* then KUBE-SVL-*, whichever the port uses. */
  readonly policy: readonly PolicyChain[];
  /** Every endpoint the block names, and its KUBE-SEP-* chain. */
  readonly ends: readonly EndpointInfo[];
  readonly seps: readonly string[];
  /** The endpoints that get a KUBE-SEP-* chain (allReachable), in kube-proxy's order. */
  readonly reachable: readonly number[];
  /**
   * Whether the iptables-save text can be written from the parts: words that keep the same form whatever
   * iptables-save's quoting does (the usual case). Otherwise each line goes through `toSaveFormat`.
   */
  readonly direct: boolean;
  /**
   * With `direct`: each part's rules in iptables-save's form, one string per part, made here while the
   * endpoint's words are fresh in memory (render order is by chain name: reading them then costs a cache
   * miss per word).
   */
  readonly saved: readonly string[] | null;
}

/** A table's rules in kube-proxy's write order: whole rules, and each port's endpoint block. */
export type RuleItem = string | EndpointBlock;

const tableItems = new WeakMap<TableRules, readonly RuleItem[]>();

/**
 * A table whose `rules` (kube-proxy's lines, one string per rule) are written out only when read: the
 * renderers take the items (`itemsOf`) and write each block's text straight into their output.
 */
export function itemTable(chains: string[], items: readonly RuleItem[]): TableRules {
  let rules: string[] | undefined;
  const table = {
    chains,
    get rules(): string[] {
      if (!rules) {
        rules = [];
        for (const it of items) {
          if (typeof it === 'string') rules.push(it);
          else restoreLines(it, rules);
        }
      }
      return rules;
    },
  };
  tableItems.set(table, items);
  return table;
}

/** The table's items: its blocks when `itemTable` made it, else its rules. */
export function itemsOf(t: TableRules): readonly RuleItem[] {
  return tableItems.get(t) ?? t.rules;
}

// Words whose iptables-save form is predictable without quoting rules: DNS names, `/`, `:`, and addresses.
const PLAIN_NAME = /^[A-Za-z0-9._:/-]+$/;

/** `/^[0-9A-Fa-f.:]+$/` without a regular expression (asked once per endpoint). */
function plainAddress(ip: string): boolean {
  if (ip.length === 0) return false;
  for (let i = 0; i < ip.length; i++) {
    const c = ip.charCodeAt(i);
    if (!((c >= 48 && c <= 58) || c === 46 || (c >= 65 && c <= 70) || (c >= 97 && c <= 102))) return false;
  }
  return true;
}

/**
 * The record for one port: `policy` lists the chains to write with their endpoints; `reachable` the
 * endpoints that get a KUBE-SEP-* chain. Each endpoint is hashed once (kube-proxy's chain name).
 */
export function endpointBlock(
  family: 4 | 6,
  name: string,
  protocol: string,
  affinity: { readonly on: boolean; readonly timeout: number },
  comments: boolean,
  policy: readonly { readonly chain: string; readonly endpoints: readonly EndpointInfo[] }[],
  reachable: readonly EndpointInfo[],
): EndpointBlock {
  const ends: EndpointInfo[] = [];
  const seps: string[] = [];
  // `ip:port` of each endpoint while the block is made (the rules' text is made from it here or later).
  const eps: string[] = [];
  let direct =
    PLAIN_NAME.test(name) && !affinity.on && (protocol === 'tcp' || protocol === 'udp' || protocol === 'sctp');
  // The same EndpointInfo in both policy chains (and in `reachable`) is named once.
  let index: Map<EndpointInfo, number> | null = null;
  const lists = policy.map(p => p.endpoints);
  lists.push(reachable);
  const shared = lists.length > 2 || lists[0] !== reachable;
  if (shared) index = new Map();
  const add = (e: EndpointInfo): number => {
    let i = index?.get(e);
    if (i !== undefined) return i;
    i = ends.length;
    const ep = endpointString(e);
    ends.push(e);
    eps.push(ep);
    seps.push(endpointChainName(name, protocol, ep));
    if (direct && !plainAddress(e.ip)) direct = false;
    index?.set(e, i);
    return i;
  };
  const chains: PolicyChain[] = [];
  let reach: number[] | null = null;
  for (const p of policy) {
    const members = p.endpoints.map(add);
    if (p.endpoints === reachable) reach = members;
    chains.push({ chain: p.chain, members });
  }
  const b = {
    name,
    protocol,
    affinity: affinity.on,
    affinityTimeout: affinity.timeout,
    comments,
    policy: chains,
    ends,
    seps,
    reachable: reach ?? reachable.map(add),
    direct,
    saved: null as string[] | null,
  };
  if (direct) b.saved = savedParts(b, eps, family);
  return b;
}

/** `fmt.Sprintf("%0.10f", 1.0/float64(n))`, once per n. */
const probabilities: string[] = [];
function kubeProxyProbability(n: number): string {
  return (probabilities[n] ??= (1 / n).toFixed(10));
}
/** The same probability as iptables-save prints it back. */
const savedProbabilities: string[] = [];
function saveProbability(n: number): string {
  return (savedProbabilities[n] ??= savedProbability(kubeProxyProbability(n)));
}

/** How many parts (one chain's rules each) a block has: its policy chains, then each reachable endpoint. */
export function partCount(b: EndpointBlock): number {
  return b.policy.length + b.reachable.length;
}

/** The chain of part `part`. */
export function partChain(b: EndpointBlock, part: number): string {
  return part < b.policy.length ? b.policy[part]!.chain : b.seps[b.reachable[part - b.policy.length]!]!;
}

/** One part's rules as kube-proxy writes them. */
function partRestoreLines(b: EndpointBlock, part: number, out: string[]): void {
  const { name } = b;
  const comment = (s: string) => (b.comments ? ` -m comment --comment ${s}` : '');
  if (part < b.policy.length) {
    const { chain, members } = b.policy[part]!;
    if (b.affinity)
      for (const i of members) {
        const sep = b.seps[i]!;
        out.push(
          `-A ${chain}${comment(`"${name} -> ${endpointString(b.ends[i]!)}"`)} -m recent --name ${sep} --rcheck --seconds ${b.affinityTimeout} --reap -j ${sep}`,
        );
      }
    const n = members.length;
    for (let k = 0; k < n; k++) {
      const i = members[k]!;
      const stat = k < n - 1 ? ` -m statistic --mode random --probability ${kubeProxyProbability(n - k)}` : '';
      out.push(`-A ${chain}${comment(`"${name} -> ${endpointString(b.ends[i]!)}"`)}${stat} -j ${b.seps[i]!}`);
    }
    return;
  }
  const i = b.reachable[part - b.policy.length]!;
  const sep = b.seps[i]!;
  const head = `-A ${sep}${comment(name)}`;
  out.push(`${head} -s ${b.ends[i]!.ip} -j KUBE-MARK-MASQ`);
  const recent = b.affinity ? ` -m recent --name ${sep} --set` : '';
  out.push(`${head}${recent} -m ${b.protocol} -p ${b.protocol} -j DNAT --to-destination ${endpointString(b.ends[i]!)}`);
}

/** Every rule of the block in kube-proxy's write order: the policy chains, then each KUBE-SEP-*. */
export function restoreLines(b: EndpointBlock, out: string[]): void {
  const parts = partCount(b);
  for (let part = 0; part < parts; part++) partRestoreLines(b, part, out);
}

/** ` -m statistic --mode random --probability P -j ` with P as iptables-save prints `1/n`, once per n. */
const statisticJumps: string[] = [];
function statisticJump(n: number): string {
  return (statisticJumps[n] ??= ` -m statistic --mode random --probability ${saveProbability(n)} -j `);
}

/**
 * Each part's rules of a direct block as iptables-save prints them: the form save-format.ts fastSaveFormat
 * gives kube-proxy's lines (the comment moves after the header options, `-s` gains its prefix length, `-p`
 * comes before the matches, the probability is the one the kernel stored).
 */
function savedParts(b: EndpointBlock, eps: readonly string[], family: 4 | 6): string[] {
  const out: string[] = [];
  const pieces: string[] = [];
  // saveString quotes a policy-chain comment (it holds spaces) and escapes nothing: direct names and
  // addresses hold no quotes or backslashes.
  const toEndpoint = ` -m comment --comment "${b.name} -> `;
  for (const { chain, members } of b.policy) {
    const head = `-A ${chain}`;
    const n = members.length;
    for (let k = 0; k < n; k++) {
      const i = members[k]!;
      const jump = k < n - 1 ? statisticJump(n - k) : ' -j ';
      if (b.comments) pieces.push(head, toEndpoint, eps[i]!, '"', jump, b.seps[i]!, '\n');
      else pieces.push(head, jump, b.seps[i]!, '\n');
    }
    out.push(pieces.join(''));
    pieces.length = 0;
  }
  const comment = b.comments ? ` -m comment --comment ${saveString(b.name)}` : '';
  const masqTail = `${family === 4 ? '/32' : '/128'}${comment} -j KUBE-MARK-MASQ\n-A `;
  const dnatMid = ` -p ${b.protocol}${comment} -m ${b.protocol} -j DNAT --to-destination `;
  for (const i of b.reachable) {
    const sep = b.seps[i]!;
    pieces.push('-A ', sep, ' -s ', b.ends[i]!.ip, masqTail, sep, dnatMid, eps[i]!, '\n');
    out.push(pieces.join(''));
    pieces.length = 0;
  }
  return out;
}

/**
 * One part's rules in kube-proxy's form (`save` false) or iptables-save's (`save` true), each followed by a
 * newline, appended to `out` as pieces (joined once by the caller: no string per rule).
 */
export function emitPart(b: EndpointBlock, part: number, save: boolean, family: 4 | 6, out: string[]): void {
  if (save && b.saved) {
    out.push(b.saved[part]!);
    return;
  }
  const lines: string[] = [];
  partRestoreLines(b, part, lines);
  for (const l of lines) out.push(save ? toSaveFormat(l, family) : l, '\n');
}
