/**
 * Candidate lists for long chains. kube-proxy makes KUBE-SERVICES one rule per Service address and port,
 * so a linear walk costs O(services) per packet. A chain is indexed by the exact destination address its
 * rules name (or, failing that, by protocol and destination port): for a packet only the rules under its
 * key plus the rules without a key can match, in their original order. This changes cost, never results:
 * with why-not, a destination-indexed chain still says why each rule off the packet's key missed, from what the
 * index recorded about it (`skippedMiss`), in the words the plain walk would use; a port-indexed one is walked
 * in full (its first failing criterion may be any match before the port).
 */
import type { Chain, Rule } from '../model.ts';
import { type Net, formatNet } from '../net/addr.ts';
import type { PacketState } from '../net/packet.ts';

const MIN_RULES = 48;

type KeyKind = 'dst' | 'dport';

export interface ChainIndex {
  readonly kind: KeyKind;
  readonly keyed: Map<string | number, number[]>;
  readonly rest: number[];
  readonly merged: Map<string | number, number[]>;
  /**
   * `dst` indexes: per rule position, the keyed rule's `-d` network (null for the rules in `rest`) and
   * whether the rule has a `-s` criterion (the kernel checks it first, so it may be the one that fails).
   */
  readonly dstNets: (Net | null)[] | null;
  readonly hasSrc: Uint8Array | null;
  /** `formatNet` of `dstNets`, filled on first use. */
  readonly dstWords: (string | undefined)[];
  /** Per rule position, where the stretch of rules `skipExplained` starting there ends (computed on first use). */
  explainedEnds?: Int32Array;
}

const indexes = new WeakMap<Chain, ChainIndex | null>();

function dstKey(rule: Rule): string | number | null {
  const d = rule.ip.dst;
  if (!d || d.negated) return null;
  const net = d.value;
  if (net.v === 4) return net.prefix === 32 ? net.n : null;
  return net.prefix === 128 ? `6:${net.n}` : null;
}

function dportKey(rule: Rule): number | null {
  const p = rule.ip.proto;
  if (!p || p.negated) return null;
  for (const m of rule.matches) {
    const spec = m.spec as { dport?: { negated: boolean; range: { from: number; to: number } } | null };
    if (
      (m.module.name === 'tcp' || m.module.name === 'udp' || m.module.name === 'sctp') &&
      spec.dport &&
      !spec.dport.negated &&
      spec.dport.range.from === spec.dport.range.to
    ) {
      return p.value * 65536 + spec.dport.range.from;
    }
  }
  return null;
}

export function chainIndex(chain: Chain): ChainIndex | null {
  // A short chain is never indexed: answered without the WeakMap, which would otherwise gain an entry for
  // every chain a trace enters (eleven new ones per Service in a kube-proxy dump).
  if (chain.rules.length < MIN_RULES) return null;
  const cached = indexes.get(chain);
  if (cached !== undefined) return cached;
  let index: ChainIndex | null = null;
  for (const kind of ['dst', 'dport'] as const) {
    const keyed = new Map<string | number, number[]>();
    const rest: number[] = [];
    const dstNets: (Net | null)[] | null = kind === 'dst' ? [] : null;
    const hasSrc = kind === 'dst' ? new Uint8Array(chain.rules.length) : null;
    chain.rules.forEach((r, i) => {
      const k = kind === 'dst' ? dstKey(r) : dportKey(r);
      if (dstNets && hasSrc) {
        dstNets.push(k === null ? null : r.ip.dst!.value);
        hasSrc[i] = r.ip.src ? 1 : 0;
      }
      if (k === null) rest.push(i);
      else {
        const list = keyed.get(k);
        if (list) list.push(i);
        else keyed.set(k, [i]);
      }
    });
    if (rest.length * 4 <= chain.rules.length) {
      index = { kind, keyed, rest, merged: new Map(), dstNets, hasSrc, dstWords: [] };
      break;
    }
  }
  indexes.set(chain, index);
  return index;
}

export function packetKey(index: ChainIndex, pkt: PacketState): string | number | null {
  if (index.kind === 'dst') return pkt.dst.v === 4 ? pkt.dst.n : `6:${pkt.dst.n}`;
  return pkt.dport === null ? null : pkt.proto * 65536 + pkt.dport;
}

/** The rule positions (0-based, ascending) that can match a packet with this key. */
export function candidates(index: ChainIndex, key: string | number | null): number[] {
  if (key === null) return index.rest;
  const cached = index.merged.get(key);
  if (cached) return cached;
  const a = index.keyed.get(key) ?? [];
  const b = index.rest;
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (j >= b.length || (i < a.length && a[i]! < b[j]!)) out.push(a[i++]!);
    else out.push(b[j++]!);
  }
  if (index.merged.size < 100000) index.merged.set(key, out);
  return out;
}

/**
 * Why the rule at position `i` of a `dst`-indexed chain, which is not among the packet's candidates, did not
 * match: its `-d` names another address. Null when the rule has a `-s` criterion, which the kernel checks
 * first (`ip_packet_match`): the caller asks the rule itself then. `dst` is `formatAddr(pkt.dst)`.
 */
export function skippedMiss(index: ChainIndex, i: number, dst: string): string | null {
  if (!skipExplained(index, i)) return null;
  const net = index.dstNets![i]!;
  let words = index.dstWords[i];
  if (words === undefined) index.dstWords[i] = words = formatNet(net);
  // The words of match-rule.ts `headerMiss` for a `-d` that does not contain the packet's destination.
  return `-d ${words} ∌ ${dst}`;
}

/** Whether `skippedMiss` explains the rule at `i` from the index alone (its words do not depend on the packet). */
export function skipExplained(index: ChainIndex, i: number): boolean {
  return !!index.dstNets && !!index.hasSrc && !index.hasSrc[i] && !!index.dstNets[i];
}

/**
 * The end (exclusive, at most `to`) of the stretch of rules from `i` that `skipExplained` explains; `i` when
 * the rule at `i` is not. One table per index, so a trace finds each stretch in one step, not rule by rule.
 */
export function explainedUntil(index: ChainIndex, i: number, to: number): number {
  let ends = index.explainedEnds;
  if (!ends) {
    const n = index.dstNets?.length ?? 0;
    ends = index.explainedEnds = new Int32Array(n);
    for (let k = n - 1; k >= 0; k--) ends[k] = skipExplained(index, k) ? (k + 1 < n ? ends[k + 1]! : n) : k;
  }
  return i < ends.length ? Math.min(ends[i]!, to) : i;
}
