/**
 * What a dump says about the node it came from, when nobody said which node that is. Each value is a
 * hint, labelled with the line it came from; the trace uses it only for a family the user gave no address
 * of, and says so (trace.ts warnings).
 *
 * - kube-proxy's `nodePortAddresses` (`--nodeport-addresses`): instead of the catch-all
 *   `-m addrtype --dst-type LOCAL -j KUBE-NODEPORTS`, kube-proxy writes one
 *   `-A KUBE-SERVICES -d <node IP>/32 … -j KUBE-NODEPORTS` per node address inside those CIDRs
 *   (pkg/proxy/iptables/proxier.go, "kubernetes service nodeports; NOTE: this must be the last rule in
 *   this chain"): these are this node's own addresses.
 * - `SNAT --to-source <one address>` in nat POSTROUTING with `-o <iface>`: the address a source NAT
 *   rewrites to on that interface, the static form of MASQUERADE (iptables-extensions(8), SNAT), usually
 *   the interface's own address.
 *
 * Only rules whose text mentions KUBE-NODEPORTS or SNAT are compiled, so a 300k-rule dump costs a scan.
 */
import type { Chain, Rule, Ruleset } from '../model.ts';
import { formatAddr } from '../net/addr.ts';
import type { InferredAddress } from './node.ts';
import type { NatRange } from '../targets/nat.ts';
import { targetNameOf } from '../iptables/rule-node.ts';
import { ruleMentions } from '../iptables/rule-text.ts';
import type { PortSpec } from '../matches/ports.ts';
import { inPortRange } from '../matches/util.ts';
import type { IpsetStore } from '../ipset/store.ts';

function hostRoute(rule: Rule): string | null {
  const d = rule.ip.dst;
  if (!d || d.negated) return null;
  const full = d.value.v === 4 ? 32 : 128;
  return d.value.prefix === full ? formatAddr(d.value.v === 4 ? { v: 4, n: d.value.n } : { v: 6, n: d.value.n }) : null;
}

function where(rs: Ruleset, rule: Rule): string {
  return `${rs.file}:${rule.line + 1}`;
}

function nodePortAddresses(rs: Ruleset, services: Chain | undefined, out: InferredAddress[]): void {
  for (const rule of services?.rules ?? []) {
    if (targetNameOf(rule)?.name !== 'KUBE-NODEPORTS') continue;
    const t = rule.target;
    if (!t || t.kind !== 'jump' || t.chain !== 'KUBE-NODEPORTS') continue;
    const addr = hostRoute(rule);
    if (addr)
      out.push({
        address: addr,
        from: where(rs, rule),
        why: `kube-proxy sends NodePorts on ${addr} to KUBE-NODEPORTS (nodePortAddresses): it is this node's address`,
      });
  }
}

function snatSources(rs: Ruleset, nat: Map<string, Chain>, out: InferredAddress[]): void {
  // Only the chains POSTROUTING reaches, breadth-first, bounded by the number of chains.
  const seen = new Set<string>(['POSTROUTING']);
  const queue = ['POSTROUTING'];
  while (queue.length > 0) {
    const chain = nat.get(queue.shift()!);
    for (const rule of chain?.rules ?? []) {
      const t = rule.target;
      if (t && (t.kind === 'jump' || t.kind === 'goto') && !seen.has(t.chain)) {
        seen.add(t.chain);
        queue.push(t.chain);
      }
      if (t?.kind !== 'target' || t.module.name !== 'SNAT') continue;
      const range = (t.spec as { readonly range: NatRange | null }).range;
      const o = rule.ip.outIface;
      if (!range?.from || !range.to || range.from.n !== range.to.n || !o || o.negated || o.value.name.endsWith('+'))
        continue;
      const addr = formatAddr(range.from);
      if (out.some(x => x.address === addr)) continue;
      out.push({
        address: addr,
        iface: o.value.name,
        from: where(rs, rule),
        why: `SNAT --to-source ${addr} for packets leaving by ${o.value.name}: taken as ${o.value.name}'s address`,
      });
    }
  }
}

/**
 * kube-proxy's IPVS mode binds every Service address it serves on the dummy interface kube-ipvs0 and
 * lists exactly those in the ipset KUBE-IPVS-IPS (KUBE-6-IPVS-IPS for IPv6; pkg/proxy/ipvs/proxier.go,
 * "kubeIPVSSet … IPVS virtual server IPs", used by KUBE-IPVS-FILTER): they are local addresses of the node,
 * so packets to them are delivered to INPUT, where IPVS takes them.
 */
function ipvsAddresses(rs: Ruleset, ipsets: IpsetStore | null, out: InferredAddress[]): void {
  for (const name of ['KUBE-IPVS-IPS', 'KUBE-6-IPVS-IPS']) {
    const set = ipsets?.sets.get(name);
    if (!set || !rulesMention(rs, name)) continue;
    for (const e of set.entries.slice(0, 100_000)) {
      const v = e.values[0];
      if (!v || v.kind !== 'net' || v.net.prefix !== (v.net.v === 4 ? 32 : 128)) continue;
      const address = formatAddr(v.net.v === 4 ? { v: 4, n: v.net.n } : { v: 6, n: v.net.n });
      out.push({
        address,
        iface: 'kube-ipvs0',
        from: `ipset ${name} (line ${set.line + 1})`,
        why: `kube-proxy's IPVS mode binds ${address} on kube-ipvs0`,
        extra: true,
      });
    }
  }
}

function rulesMention(rs: Ruleset, word: string): boolean {
  for (const t of rs.tables.values())
    for (const c of t.chains.values()) for (const r of c.rules) if (ruleMentions(r, word)) return true;
  return false;
}

const cache = new WeakMap<Ruleset, Map<IpsetStore | null, InferredAddress[]>>();

/** The node addresses a ruleset (and its ipsets) implies, most certain first; computed once per ruleset. */
export function inferNodeAddresses(rs: Ruleset, ipsets: IpsetStore | null = null): InferredAddress[] {
  let perRs = cache.get(rs);
  if (!perRs) {
    perRs = new Map();
    cache.set(rs, perRs);
  }
  let hit = perRs.get(ipsets);
  if (!hit) {
    hit = infer(rs, ipsets);
    perRs.set(ipsets, hit);
  }
  return hit;
}

/**
 * Addresses of the cluster's nodes that a kube-proxy dump names without saying whether they are this
 * node: the endpoints of `default/kubernetes` (the API servers, host-network on control-plane nodes), in
 * their KUBE-SEP chains' `-s <endpoint>/32 -j KUBE-MARK-MASQ` hairpin rules. Computed once per ruleset.
 */
export function clusterNodeHints(rs: Ruleset): ReadonlyMap<string, string> {
  let hit = hintCache.get(rs);
  if (hit) return hit;
  hit = new Map<string, string>();
  for (const [name, chain] of rs.tables.get('nat')?.chains ?? []) {
    if (!name.startsWith('KUBE-SEP-')) continue;
    for (const rule of chain.rules) {
      // The text test first: reading the comment compiles the rule, and a 320k-rule dump has 100k
      // KUBE-SEP rules that jump to KUBE-MARK-MASQ (200 MB of compiled rules kept for nothing).
      if (
        targetNameOf(rule)?.name !== 'KUBE-MARK-MASQ' ||
        !ruleMentions(rule, 'default/kubernetes:https') ||
        !rule.comment?.includes('default/kubernetes:https')
      )
        continue;
      const src = rule.ip.src;
      if (!src || src.negated || src.value.prefix !== (src.value.v === 4 ? 32 : 128)) continue;
      const addr = formatAddr(src.value.v === 4 ? { v: 4, n: src.value.n } : { v: 6, n: src.value.n });
      hit.set(addr, where(rs, rule));
    }
  }
  hintCache.set(rs, hit);
  return hit;
}

const hintCache = new WeakMap<Ruleset, Map<string, string>>();

function infer(rs: Ruleset, ipsets: IpsetStore | null): InferredAddress[] {
  const nat = rs.tables.get('nat')?.chains;
  const out: InferredAddress[] = [];
  if (nat) {
    nodePortAddresses(rs, nat.get('KUBE-SERVICES'), out);
    snatSources(rs, nat, out);
  }
  ipvsAddresses(rs, ipsets, out);
  return out;
}

/** A KUBE-NODEPORTS rule for a packet's destination port: the packet may well be aimed at this node. */
export interface NodePortHint {
  readonly rule: Rule;
  readonly address: string;
  readonly from: string;
}

/**
 * When the node's address is unknown and a packet from outside goes to a written address on a port
 * kube-proxy serves as a NodePort here, whether that address is the node's decides the answer (local
 * NodePort handling or plain forwarding); the trace then shows both, each under its assumption.
 */
export function nodePortHint(
  rs: Ruleset,
  input: { protocol: string; dst: string; dport?: number; src?: string; from?: string },
  isAddr: (t: string) => boolean,
): NodePortHint | null {
  if (input.dport === undefined || input.from === 'local' || !input.src || !isAddr(input.dst)) return null;
  const chain = rs.tables.get('nat')?.chains.get('KUBE-NODEPORTS');
  const proto = input.protocol.toLowerCase();
  const dport = input.dport;
  for (const rule of chain?.rules ?? []) {
    if (rule.ip.protoName !== proto || rule.ip.proto?.negated) continue;
    const ports = rule.matches.find(m => m.module.name === proto)?.spec as PortSpec | undefined;
    if (!ports?.dport || ports.dport.negated || !inPortRange(ports.dport.range, dport)) continue;
    return { rule, address: input.dst, from: where(rs, rule) };
  }
  return null;
}
