/**
 * Packets worth tracing, found in the dump: each rule that sends a destination address and port somewhere
 * (kube-proxy's Service rules, DNAT targets, port openings) gives one, labelled with the rule's comment.
 * The client is a documentation address (RFC 5737 / RFC 3849), so the packet arrives from outside.
 */
import { type Rule, formatAddr, optionOf, parsePacketText, parseAddr, ruleMentions } from '../engine/api.ts';
import type { DumpIndex } from './dump-index.ts';

export const OUTSIDE_CLIENT: Record<4 | 6, string> = { 4: '203.0.113.10', 6: '2001:db8::10' };

export interface PacketSuggestion {
  readonly text: string;
  /** Where it came from: the rule's comment or chain. */
  readonly label: string;
  readonly line: number;
}

function hostPort(addr: string, port: string | null): string {
  const a = addr.includes(':') ? `[${addr}]` : addr;
  return port ? `${a}:${port}` : a;
}

interface Criteria {
  dst: string | null;
  proto: string | null;
  dport: string | null;
  src: string | null;
  inIface: string | null;
}

const LITERAL_PROTOCOLS = new Set(['tcp', 'udp', 'sctp', 'icmp', 'icmpv6']);

/** A host address (not a network, not negated) as the front end read it. */
function hostOf(v: Rule['ip']['dst']): string | null {
  if (!v || v.negated || v.value.prefix !== (v.value.v === 4 ? 32 : 128)) return null;
  return formatAddr(v.value.v === 4 ? { v: 4, n: v.value.n } : { v: 6, n: v.value.n });
}

/** The literal criteria of a rule that a suggested packet can satisfy (hosts, not networks; no `!`). */
export function literalCriteria(rule: Rule): Criteria {
  const ip = rule.ip;
  const proto = ip.proto && !ip.proto.negated ? (ip.protoName?.toLowerCase() ?? null) : null;
  const port = optionOf(rule, '--dport', '--dports');
  const iface = ip.inIface && !ip.inIface.negated && !ip.inIface.value.wildcard ? ip.inIface.value.name : null;
  return {
    dst: hostOf(ip.dst),
    src: hostOf(ip.src),
    proto: proto && LITERAL_PROTOCOLS.has(proto) ? proto : null,
    dport: port && !port.negated ? (/^\d+/.exec(port.args[0] ?? '')?.[0] ?? null) : null,
    inIface: iface,
  };
}

/** A DNAT rule's `--to-destination` address and port, as the front end read them. */
function dnatTo(rule: Rule): { addr: string; port: string | null } | null {
  const to = optionOf(rule, '--to-destination')?.args[0];
  const m = to ? /^(\[[^\]]+\]|[^\s:]+)(?::(\d+))?/.exec(to) : null;
  return m ? { addr: m[1]!.replace(/^\[|\]$/g, ''), port: m[2] ?? null } : null;
}

function packetText(c: Criteria, family: 4 | 6): string | null {
  if (!c.dst) return null;
  const proto = c.proto ?? (c.dport ? 'tcp' : 'icmp');
  if ((proto === 'tcp' || proto === 'udp' || proto === 'sctp') && !c.dport) return null;
  const src = c.src ?? OUTSIDE_CLIENT[family];
  return `${proto} ${hostPort(src, null)} -> ${hostPort(c.dst, proto === 'icmp' || proto === 'icmpv6' ? null : c.dport)}${c.inIface ? ` in=${c.inIface}` : ''}`;
}

const PROTOCOLS = new Set(['tcp', 'udp', 'sctp', 'icmp', 'icmpv6']);

/**
 * The word of a typed packet to look for in rules: the longest address or name of the destination (after
 * `->`), or of the whole text when there is no arrow yet; ports dropped.
 */
export function queryKeyword(query: string): string | null {
  const parts = query.split(/->|→/);
  const dest = parts.length > 1 ? parts[parts.length - 1]! : query;
  let best: string | null = null;
  for (const raw of dest.split(/[\s[\]]+/)) {
    const w = raw.replace(/:\d*$/, '');
    if (
      w.length < 2 ||
      PROTOCOLS.has(w.toLowerCase()) ||
      w.includes('=') ||
      w === OUTSIDE_CLIENT[4] ||
      w === OUTSIDE_CLIENT[6]
    )
      continue;
    if (!best || w.length > best.length) best = w;
  }
  return best;
}

/**
 * Up to `limit` suggestions that mention the query's address or name (all when it has none), in file
 * order, without duplicates. DNAT targets give the translated destination as a packet too.
 */
export function suggestPackets(index: DumpIndex, query = '', limit = 50): PacketSuggestion[] {
  const family = index.ruleset.family;
  const out: PacketSuggestion[] = [];
  const seen = new Set<string>();
  const kw = queryKeyword(query);
  const add = (text: string | null, label: string, line: number) => {
    if (!text || seen.has(text)) return;
    if (kw && !text.includes(kw) && !label.includes(kw)) return;
    seen.add(text);
    out.push({ text, label, line });
  };
  for (const table of index.ruleset.tables.values()) {
    for (const chain of table.chains.values()) {
      for (const rule of chain.rules) {
        if (out.length >= limit) return out;
        // Cheap filters first: a 300k-rule dump is scanned on every keystroke of the query.
        if (kw && !ruleMentions(rule, kw)) continue;
        if (!ruleMentions(rule, ' -d ') && !ruleMentions(rule, '--to-destination')) continue;
        const c = literalCriteria(rule);
        const label = rule.comment ?? `${table.name} ${chain.name} rule ${rule.index}`;
        add(packetText(c, family), label, rule.line);
        const to = dnatTo(rule);
        if (to)
          add(
            packetText({ ...c, dst: to.addr, dport: to.port ?? c.dport }, family),
            `${label} (after DNAT)`,
            rule.line,
          );
      }
    }
  }
  return out;
}

export type PacketCheck = { ok: true; summary: string } | { ok: false; error: string };

/** Checks a packet as typed, against the dump's family, without tracing it. */
export function checkPacketText(text: string, family: 4 | 6 | null): PacketCheck {
  if (text.trim() === '')
    return { ok: false, error: 'Type a packet: "tcp 10.0.0.1 -> 10.96.0.10:53" (proto, source, destination:port).' };
  const parsed = parsePacketText(text);
  if (!parsed.ok) return { ok: false, error: parsed.error };
  const p = parsed.input;
  // `node` / `node(eth0)` is the node's own address, whatever it is (the engine's packet-spec.ts).
  const nodeWord = (t: string) => /^node(?:\([^)]*\))?$/i.test(t);
  const read = (t: string) => (nodeWord(t) ? null : parseAddr(t));
  const dst = read(p.dst);
  if (!dst && !nodeWord(p.dst))
    return { ok: false, error: `'${p.dst}' is not an IP address (or node, the node itself)` };
  if (dst && family !== null && dst.v !== family)
    return { ok: false, error: `${p.dst} is IPv${dst.v}, the dump is IPv${family}` };
  if (p.src !== undefined) {
    const src = read(p.src);
    if (!src && !nodeWord(p.src))
      return { ok: false, error: `'${p.src}' is not an IP address (or node, the node itself)` };
    if (src && dst && src.v !== dst.v) return { ok: false, error: `source and destination are of different families` };
  }
  if (['tcp', 'udp', 'sctp'].includes(p.protocol) && p.dport === undefined)
    return { ok: false, error: `a ${p.protocol} packet needs a destination port (${p.dst}:PORT)` };
  for (const port of [p.sport, p.dport])
    if (port !== undefined && (port < 0 || port > 65535))
      return { ok: false, error: `${port} is not a port (0-65535)` };
  const from = p.src ? `from ${p.src}${p.sport !== undefined ? `:${p.sport}` : ''}` : 'sent by the node';
  return {
    ok: true,
    summary: `${p.protocol.toUpperCase()} ${from} to ${p.dst}${p.dport !== undefined ? `:${p.dport}` : ''}`,
  };
}

/** The history with `entry` first, without duplicates, at most `max` long. */
export function pushHistory(history: readonly string[], entry: string, max = 20): string[] {
  const e = entry.trim();
  return [e, ...history.filter(h => h !== e)].slice(0, max);
}
