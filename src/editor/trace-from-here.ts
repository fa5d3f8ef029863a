/**
 * "Trace from here" on a chain: a packet that reaches it. Each way into the chain is a path of jump rules
 * back to a built-in chain (for a kube-proxy endpoint chain: KUBE-SEP ← KUBE-SVC ← KUBE-SERVICES's
 * `-d <cluster IP> --dport 80` rule ← PREROUTING, or KUBE-SEP ← KUBE-SVC ← KUBE-EXT ← KUBE-NODEPORTS's
 * `--dport 30381` ← KUBE-SERVICES's `addrtype --dst-type LOCAL` ← PREROUTING). A packet is built from one
 * path's literal criteria only — never an address of one path with the port of another — filled in from the
 * chain's own first rule where the path leaves a field open, and traced: only packets whose trace enters
 * the chain are offered.
 */
import { type Chain, type NodeConfig, type Rule, optionOf, parsePacketText, tracePacket } from '../engine/api.ts';
import type { DumpIndex } from './dump-index.ts';
import { serviceInComment } from './kube-proxy-chains.ts';
import { OUTSIDE_CLIENT, type PacketSuggestion, literalCriteria } from './packet-suggest.ts';

/** A way into a chain: the jump rules from a built-in chain down to it, outermost first. */
export type EntryPath = readonly Rule[];

export interface ReachingPacket {
  readonly packet: string;
  /** Which way in it takes: the entry rule's comment (`default/svc1:svc1-webport loadbalancer IP`) or chain. */
  readonly via: string;
  /** The kube-proxy Service port the path names, for ordering the suggestions. */
  readonly service: string | null;
  /** 0-based line of the rule that names the way in. */
  readonly line: number;
}

/** Paths followed at most, and how deep: kube-proxy's deepest is 5 (PREROUTING … KUBE-SEP). */
const MAX_PATHS = 64;
const MAX_DEPTH = 16;
/** Packets traced at most per request: a trace of a 320k-rule dump is milliseconds, not nothing. */
export const MAX_TRACED = 12;

/** Every way into `chain` through jumps and gotos, up to `MAX_PATHS`, without revisiting a chain on one path. */
export function entryPaths(index: DumpIndex, table: string, chain: Chain): EntryPath[] {
  const out: EntryPath[] = [];
  const walk = (name: string, below: readonly Rule[], seen: ReadonlySet<string>) => {
    if (out.length >= MAX_PATHS) return;
    const c = index.chain(table, name);
    if (!c || c.builtin) {
      if (below.length) out.push(below);
      return;
    }
    if (below.length >= MAX_DEPTH) return;
    for (const ref of index.referencesTo(table, name)) {
      if (out.length >= MAX_PATHS) return;
      const from = ref.rule.chain;
      if (seen.has(from)) continue;
      walk(from, [ref.rule, ...below], new Set([...seen, from]));
    }
  };
  walk(chain.name, [], new Set([chain.name]));
  return out;
}

interface Fields {
  dst: string | null;
  proto: string | null;
  dport: string | null;
  src: string | null;
  inIface: string | null;
}

/** `-m addrtype --dst-type LOCAL`: the packet is addressed to the node (kube-proxy's KUBE-NODEPORTS jump). */
function toNode(rule: Rule): boolean {
  const o = optionOf(rule, '--dst-type');
  return o !== null && !o.negated && o.args[0] === 'LOCAL';
}

/** One path's criteria, all of which the packet must meet; null when two of its rules disagree. */
function pathFields(path: EntryPath): Fields | null {
  const acc: Fields = { dst: null, proto: null, dport: null, src: null, inIface: null };
  for (const rule of path) {
    const c = literalCriteria(rule);
    const dst = toNode(rule) ? 'node' : c.dst;
    for (const [k, v] of [
      ['dst', dst],
      ['proto', c.proto],
      ['dport', c.dport],
      ['src', c.src],
      ['inIface', c.inIface],
    ] as const) {
      if (v === null) continue;
      if (acc[k] !== null && acc[k] !== v) return null;
      acc[k] = v;
    }
  }
  return acc;
}

function host(addr: string, port: string | null): string {
  const a = addr.includes(':') ? `[${addr}]` : addr;
  return port ? `${a}:${port}` : a;
}

/** The packet of a path, or null when it names no destination. Sent by the node when the path starts in OUTPUT. */
function packetOf(f: Fields, fromNode: boolean, family: 4 | 6): string | null {
  if (!f.dst) return null;
  const proto = f.proto ?? (f.dport ? 'tcp' : family === 4 ? 'icmp' : 'icmpv6');
  const ported = proto === 'tcp' || proto === 'udp' || proto === 'sctp';
  if (ported && !f.dport) return null;
  const src = f.src ?? (fromNode ? null : OUTSIDE_CLIENT[family]);
  const dst = host(f.dst, ported ? f.dport : null);
  return `${proto} ${src ? `${host(src, null)} -> ` : ''}${dst}${f.inIface && !fromNode ? ` in=${f.inIface}` : ''}`;
}

const HOOK_ORDER = ['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING'];

/**
 * The candidate packets for a chain, one per path (duplicates dropped), packets from outside first (a
 * reviewer's client), then the node's own; each filled in from the chain's own first rule where its path
 * leaves a field open.
 */
export function reachingCandidates(index: DumpIndex, table: string, chain: Chain): ReachingPacket[] {
  const family = index.ruleset.family;
  const own = chain.rules[0] ? literalCriteria(chain.rules[0]) : null;
  const paths = entryPaths(index, table, chain).map(p => ({ p, start: p[0]!.chain }));
  const out: (ReachingPacket & { rank: number; hook: number })[] = [];
  const seen = new Set<string>();
  for (const { p, start } of paths) {
    const f = pathFields(p);
    if (!f) continue;
    if (own) {
      f.dst ??= own.dst;
      f.proto ??= own.proto;
      f.dport ??= f.dst === own.dst ? own.dport : null;
    }
    const packet = packetOf(f, start === 'OUTPUT', family);
    if (!packet || seen.has(packet)) continue;
    seen.add(packet);
    // The way in a reviewer names: the outermost rule that names a Service (KUBE-SERVICES' `… loadbalancer
    // IP`, KUBE-NODEPORTS' rule), else the jump into the chain.
    const entry = p.find(r => serviceInComment(r.comment)) ?? p[p.length - 1]!;
    const service = serviceInComment(entry.comment);
    const viaNode = f.dst === 'node';
    out.push({
      packet,
      via:
        viaNode && service
          ? `${service} node port ${f.dport ?? ''}`.trim()
          : (entry.comment ?? `${table} ${entry.chain} rule ${entry.index}`),
      service,
      line: entry.line,
      // An outside client reaches a load balancer or external IP first, then a cluster IP, then a node port.
      rank: viaNode ? 2 : /loadbalancer IP|external IP/.test(entry.comment ?? '') ? 0 : 1,
      hook: HOOK_ORDER.indexOf(start),
    });
  }
  return out
    .sort((a, b) => a.hook - b.hook || a.rank - b.rank)
    .map(({ packet, via, service, line }) => ({ packet, via, service, line }));
}

/**
 * Whether the packet's trace enters the chain: `sure` when an outcome that rests on no assumption does,
 * `assumed` when only outcomes resting on an undecidable match do, else false.
 */
export function reaches(
  index: DumpIndex,
  packet: string,
  table: string,
  chain: string,
  node: NodeConfig,
): 'sure' | 'assumed' | false {
  const parsed = parsePacketText(packet);
  if (!parsed.ok) return false;
  const r = tracePacket(index.ruleset, parsed.input, { node, explain: false });
  if (!r.ok) return false;
  const entering = r.trace.outcomes.filter(
    o => o.probability > 0 && o.events.some(e => e.kind === 'chain' && e.table === table && e.chain === chain),
  );
  if (entering.some(o => o.assumptions.length === 0)) return 'sure';
  return entering.length ? 'assumed' : false;
}

/**
 * The candidates whose trace enters the chain (at most `MAX_TRACED` traced): those that surely do first,
 * then those that do only under an assumption, each in the candidates' order.
 */
export function packetsReaching(index: DumpIndex, table: string, chain: Chain, node: NodeConfig): ReachingPacket[] {
  const traced = reachingCandidates(index, table, chain)
    .slice(0, MAX_TRACED)
    .map(c => ({ c, r: reaches(index, c.packet, table, chain.name, node) }));
  return [...traced.filter(x => x.r === 'sure'), ...traced.filter(x => x.r === 'assumed')].map(x => x.c);
}

/**
 * The quick pick's suggestions for "Trace from here": the packets that reach the chain first (each with
 * the way in it takes), then the dump's suggestions for the chain's Service, then the rest, without
 * duplicates.
 */
export function fromHereSuggestions(
  found: readonly PacketSuggestion[],
  reaching: readonly ReachingPacket[],
  chain: string,
): PacketSuggestion[] {
  const service = reaching.find(r => r.service)?.service ?? null;
  const pinned = reaching.map(r => ({ text: r.packet, label: `reaches ${chain} · ${r.via}`, line: r.line }));
  const seen = new Set(pinned.map(p => p.text));
  const rest = found.filter(s => !seen.has(s.text));
  const mine = service ? rest.filter(s => serviceInComment(s.label.replace(/ \(after DNAT\)$/, '')) === service) : [];
  return [...pinned, ...mine, ...rest.filter(s => !mine.includes(s))];
}
