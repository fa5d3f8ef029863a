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
  /** Every endpoint the block names: `ip:port`, its address and its KUBE-SEP-* chain. */
  readonly eps: readonly string[];
  readonly ips: readonly string[];
  readonly seps: readonly string[];
  /** The endpoints that get a KUBE-SEP-* chain (allReachable), in kube-proxy's order. */
  readonly reachable: readonly number[];
  /**
   * Whether the iptables-save text can be written from the parts: words that keep the same form whatever
   * iptables-save's quoting does (the usual case). Otherwise each line goes through `toSaveFormat`.
   */
  readonly direct: boolean;
  /** With `direct`: the name as iptables-save prints a comment (quoted: it holds `/`). */
  readonly savedName: string;
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
const PLAIN_ADDRESS = /^[0-9A-Fa-f.:]+$/;

/**
 * The record for one port: `policy` lists the chains to write with their endpoints; `reachable` the
 * endpoints that get a KUBE-SEP-* chain. Each endpoint is hashed once (kube-proxy's chain name).
 */
export function endpointBlock(
  name: string,
  protocol: string,
  affinity: { readonly on: boolean; readonly timeout: number },
  comments: boolean,
  policy: readonly { readonly chain: string; readonly endpoints: readonly EndpointInfo[] }[],
  reachable: readonly EndpointInfo[],
): EndpointBlock {
  const eps: string[] = [];
  const ips: string[] = [];
  const seps: string[] = [];
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
    i = eps.length;
    const ep = endpointString(e);
    eps.push(ep);
    ips.push(e.ip);
    seps.push(endpointChainName(name, protocol, ep));
    if (direct && !PLAIN_ADDRESS.test(e.ip)) direct = false;
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
  return {
    name,
    protocol,
    affinity: affinity.on,
    affinityTimeout: affinity.timeout,
    comments,
    policy: chains,
    eps,
    ips,
    seps,
    reachable: reach ?? reachable.map(add),
    direct,
    savedName: direct && comments ? saveString(name) : '',
  };
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
          `-A ${chain}${comment(`"${name} -> ${b.eps[i]!}"`)} -m recent --name ${sep} --rcheck --seconds ${b.affinityTimeout} --reap -j ${sep}`,
        );
      }
    const n = members.length;
    for (let k = 0; k < n; k++) {
      const i = members[k]!;
      const stat = k < n - 1 ? ` -m statistic --mode random --probability ${kubeProxyProbability(n - k)}` : '';
      out.push(`-A ${chain}${comment(`"${name} -> ${b.eps[i]!}"`)}${stat} -j ${b.seps[i]!}`);
    }
    return;
  }
  const i = b.reachable[part - b.policy.length]!;
  const sep = b.seps[i]!;
  const head = `-A ${sep}${comment(name)}`;
  out.push(`${head} -s ${b.ips[i]!} -j KUBE-MARK-MASQ`);
  const recent = b.affinity ? ` -m recent --name ${sep} --set` : '';
  out.push(`${head}${recent} -m ${b.protocol} -p ${b.protocol} -j DNAT --to-destination ${b.eps[i]!}`);
}

/** Every rule of the block in kube-proxy's write order: the policy chains, then each KUBE-SEP-*. */
export function restoreLines(b: EndpointBlock, out: string[]): void {
  const parts = partCount(b);
  for (let part = 0; part < parts; part++) partRestoreLines(b, part, out);
}

/**
 * The constant stretches of a direct block's iptables-save lines (the form save-format.ts fastSaveFormat
 * gives kube-proxy's lines: the comment moves after the header options, `-s` gains its prefix length, `-p`
 * comes before the matches), made once per block and output (render.ts) so each rule is a few pieces.
 */
interface SaveText {
  /** `-A KUBE-SVC-…` of each policy chain. */
  readonly heads: readonly string[];
  /** Before an endpoint's `ip:port` in a policy-chain comment: ` -m comment --comment "ns/svc:port -> `. */
  readonly toEndpoint: string;
  /** After the KUBE-SEP-* masquerade rule's address up to the DNAT rule's chain: `/32 … -j KUBE-MARK-MASQ\n-A `. */
  readonly masqTail: string;
  /** After the DNAT rule's chain up to its address: ` -p tcp … -m tcp -j DNAT --to-destination `. */
  readonly dnatMid: string;
}

const saveTexts = new WeakMap<EndpointBlock, SaveText>();

function saveText(b: EndpointBlock, family: 4 | 6): SaveText {
  let t = saveTexts.get(b);
  if (!t) {
    const comment = b.comments ? ` -m comment --comment ${b.savedName}` : '';
    t = {
      heads: b.policy.map(p => `-A ${p.chain}`),
      // saveString quotes it (it holds spaces) and escapes nothing: direct names and addresses have no quotes.
      toEndpoint: ` -m comment --comment "${b.name} -> `,
      masqTail: `${family === 4 ? '/32' : '/128'}${comment} -j KUBE-MARK-MASQ\n-A `,
      dnatMid: ` -p ${b.protocol}${comment} -m ${b.protocol} -j DNAT --to-destination `,
    };
    saveTexts.set(b, t);
  }
  return t;
}

/** ` -m statistic --mode random --probability P -j ` with P as iptables-save prints `1/n`, once per n. */
const statisticJumps: string[] = [];
function statisticJump(n: number): string {
  return (statisticJumps[n] ??= ` -m statistic --mode random --probability ${saveProbability(n)} -j `);
}

/**
 * One part's rules in kube-proxy's form (`save` false) or iptables-save's (`save` true), each followed by a
 * newline, appended to `out` as pieces (joined once by the caller: no string per rule).
 */
export function emitPart(b: EndpointBlock, part: number, save: boolean, family: 4 | 6, out: string[]): void {
  if (!save || !b.direct) {
    const lines: string[] = [];
    partRestoreLines(b, part, lines);
    for (const l of lines) out.push(save ? toSaveFormat(l, family) : l, '\n');
    return;
  }
  const t = saveText(b, family);
  if (part < b.policy.length) {
    const members = b.policy[part]!.members;
    const head = t.heads[part]!;
    const n = members.length;
    for (let k = 0; k < n; k++) {
      const i = members[k]!;
      const jump = k < n - 1 ? statisticJump(n - k) : ' -j ';
      if (b.comments) out.push(head, t.toEndpoint, b.eps[i]!, '"', jump, b.seps[i]!, '\n');
      else out.push(head, jump, b.seps[i]!, '\n');
    }
    return;
  }
  const i = b.reachable[part - b.policy.length]!;
  const sep = b.seps[i]!;
  out.push('-A ', sep, ' -s ', b.ips[i]!, t.masqTail, sep, t.dnatMid, b.eps[i]!, '\n');
}
