/**
 * The node a ruleset runs on: its addresses, interfaces and routes. The evaluator asks it the questions the
 * kernel's routing code answers: is this destination local, which interface does a packet leave by, what
 * type does `addrtype` see, which source does MASQUERADE pick.
 */
import {
  type Addr,
  type Family,
  type Net,
  formatAddr,
  hostNet,
  isLimitedBroadcast,
  isLoopback,
  isMulticast,
  netContains,
  parseAddr,
  parseNet,
} from '../net/addr.ts';
import type { AddrType, NodeView } from '../matches/env.ts';
import type { NodeContext } from '../nodectx/types.ts';
import { type RouteQuery, type RouteResult, Routing } from './routing.ts';
import { contextSysctls, inetSelectAddr, ipv6SelectAddr, type NodeSysctls } from './node-context.ts';

export interface NodeConfig {
  /** The node's own addresses; the first of each family is the primary (MASQUERADE fallback). */
  readonly addresses?: readonly string[];
  /** Interfaces with their addresses in CIDR form (`eth0` = `172.18.0.4/16`). */
  readonly interfaces?: readonly { readonly name: string; readonly addresses?: readonly string[] }[];
  /** The interface of the default route; forwarded traffic with no better route leaves here. Default `eth0`. */
  readonly uplink?: string;
  /** Extra routes, longest prefix wins: `{dst: "10.10.4.0/24", iface: "veth1"}`. */
  readonly routes?: readonly { readonly dst: string; readonly iface: string }[];
  /** net.ipv4.conf.all.route_localnet: accept 127.0.0.0/8 destinations arriving on other interfaces. */
  readonly routeLocalnet?: boolean;
  /** net.ipv4.ip_forward; kube nodes forward. Default true. */
  readonly ipForward?: boolean;
  /**
   * Addresses nobody configured but the files imply (node-inference.ts): used like `addresses`, but every
   * answer that depends on them says where they came from.
   */
  readonly inferred?: readonly InferredAddress[];
  /**
   * The node's own files (`ip -j addr`, `ip -j route show table all`, `ip -j rule`, `sysctl -a`; nodectx/):
   * its interfaces and addresses, routing tables and policy rules, forwarding, route_localnet and rp_filter.
   * Explicit settings above still win where they say something.
   */
  readonly context?: NodeContext;
}

/** A node address read off the files rather than given: `from` is `file:line`, `why` the evidence. */
export interface InferredAddress {
  readonly address: string;
  readonly iface?: string;
  readonly from: string;
  readonly why: string;
  /**
   * An address besides the node's own, such as a Service address IPVS binds on kube-ipvs0: local, but
   * never the node's primary address; used even when the user gave the node's addresses.
   */
  readonly extra?: boolean;
}

/**
 * The stand-in for "the node's address on the uplink" when no address of a family is known: RFC 7600's
 * IPv4 dummy address (192.0.0.8, for hosts that have no IPv4 address) and an address of the IPv6
 * discard-only prefix (RFC 6666). It is shown by its label, never by its digits; the trace states the
 * assumptions it brings (trace.ts): it is local, it is the MASQUERADE source, it is none of the packet's
 * written addresses, and the rules' address ranges were tested against the stand-in's digits.
 */
const SYMBOLIC: { readonly [F in Family]: Addr } = {
  4: { v: 4, n: 0xc0000008 },
  6: { v: 6, n: 0x01000000000000000000000000000008n },
};

interface Iface {
  readonly name: string;
  readonly addrs: { addr: Addr; net: Net }[];
}

export class NodeModel implements NodeView {
  readonly uplink: string;
  readonly routeLocalnet: boolean;
  readonly ipForward: boolean;
  private readonly ifaces = new Map<string, Iface>();
  private readonly routes: { net: Net; iface: string }[] = [];
  private readonly local: Addr[] = [];
  private readonly symbolicFamilies = new Set<Family>();
  readonly problems: string[] = [];
  /** The inferred addresses the node uses, as given. */
  readonly inferred: readonly InferredAddress[];
  /** The node's routing tables, when its files gave them (routing.ts). */
  readonly routing: Routing | null;
  /** The sysctls the node's files gave (node-context.ts). */
  readonly sysctls: NodeSysctls | null;
  /** The node's files, when the node came from them. */
  readonly context: NodeContext | null;

  constructor(config: NodeConfig = {}) {
    const ctx = config.context ?? null;
    this.context = ctx;
    this.routing = ctx ? new Routing(ctx) : null;
    this.sysctls = ctx ? contextSysctls(ctx) : null;
    this.uplink = config.uplink ?? this.defaultRouteDev() ?? 'eth0';
    this.routeLocalnet = (config.routeLocalnet ?? false) || (this.sysctls?.routeLocalnetAll ?? false);
    this.ipForward = config.ipForward ?? this.sysctls?.ipForward ?? true;
    for (const itf of config.interfaces ?? []) {
      const entry: Iface = { name: itf.name, addrs: [] };
      for (const text of itf.addresses ?? []) {
        const net = parseNet(text);
        const addr = parseAddr(text.split('/')[0] ?? '');
        if (!net || !addr) {
          this.problems.push(`interface ${itf.name}: '${text}' is not an address`);
          continue;
        }
        entry.addrs.push({ addr, net });
        this.local.push(addr);
      }
      this.ifaces.set(itf.name, entry);
    }
    for (const text of config.addresses ?? []) {
      const addr = parseAddr(text);
      if (!addr) {
        this.problems.push(`'${text}' is not an IP address`);
        continue;
      }
      this.addOnIface(addr, this.uplink);
    }
    if (ctx) this.addContextAddresses(ctx);
    // Inferred addresses count only for a family the user said nothing about.
    const used: InferredAddress[] = [];
    const given = new Set(this.local.map(a => a.v));
    for (const inf of config.inferred ?? []) {
      const addr = parseAddr(inf.address);
      if (!addr || inf.extra || given.has(addr.v)) continue;
      this.addOnIface(addr, inf.iface ?? this.uplink);
      used.push(inf);
    }
    // Zero configuration: the node still has an address on its uplink, only not a known one.
    for (const f of [4, 6] as const) {
      if (this.local.some(a => a.v === f)) continue;
      this.symbolicFamilies.add(f);
      this.addOnIface(SYMBOLIC[f], this.uplink);
    }
    // Extra local addresses come last, so they are never the primary (MASQUERADE fallback) address.
    for (const inf of config.inferred ?? []) {
      const addr = parseAddr(inf.address);
      if (!addr || !inf.extra) continue;
      this.addOnIface(addr, inf.iface ?? this.uplink);
      used.push(inf);
    }
    this.inferred = used;
    for (const r of config.routes ?? []) {
      const net = parseNet(r.dst);
      if (!net) {
        this.problems.push(`route '${r.dst}' is not a network`);
        continue;
      }
      this.routes.push({ net, iface: r.iface });
    }
    // Longest prefix first; connected subnets of interfaces are routes too (the files' own routes, when
    // given, are looked up first: routeOut).
    for (const itf of this.ifaces.values()) {
      for (const a of itf.addrs) {
        if ((a.net.prefix ?? 0) < (a.addr.v === 4 ? 32 : 128)) this.routes.push({ net: a.net, iface: itf.name });
      }
    }
    this.routes.sort((a, b) => (b.net.prefix ?? 0) - (a.net.prefix ?? 0));
  }

  /** The default route's device in the main table (lowest metric), IPv4 first. */
  private defaultRouteDev(): string | null {
    for (const f of [4, 6] as const) {
      if (!this.routing?.knows(f)) continue;
      const r = this.routing.lookup(
        f === 4 ? { v: 4, n: 0x08080808 } : { v: 6, n: 0x20010db8000000000000000000000001n },
      );
      if (r?.dev && r.prefix === 0) return r.dev;
    }
    return null;
  }

  /**
   * The files' addresses, interface by interface in ifindex order. The node's primary address (the first of
   * `addresses()`) is the first global, non-secondary one in that order — the address `inet_select_addr`
   * finds when it walks every device (lo first, whose 127.0.0.1 has host scope).
   */
  private addContextAddresses(ctx: NodeContext): void {
    const rank = (g: boolean, sec: boolean): number => (g ? 0 : 2) + (sec ? 1 : 0);
    const all: { addr: Addr; net: Net; iface: string; rank: number; order: number }[] = [];
    for (const itf of ctx.interfaces) {
      let entry = this.ifaces.get(itf.name);
      if (!entry) this.ifaces.set(itf.name, (entry = { name: itf.name, addrs: [] }));
      for (const a of itf.addrs) {
        const addr = parseAddr(a.local);
        const net = parseNet(`${a.local}/${a.prefixlen}`);
        if (!addr || !net) continue;
        entry.addrs.push({ addr, net });
        if (isLoopback(addr)) continue;
        all.push({ addr, net, iface: itf.name, rank: rank(a.scope === 'global', a.secondary), order: all.length });
      }
    }
    all.sort((a, b) => a.rank - b.rank || a.order - b.order);
    for (const a of all) if (!this.local.some(l => l.v === a.addr.v && l.n === a.addr.n)) this.local.push(a.addr);
  }

  private addOnIface(addr: Addr, name: string): void {
    if (!this.local.some(a => a.v === addr.v && a.n === addr.n)) this.local.push(addr);
    // A node address given without an interface lives on the uplink, as a kind node's eth0 does.
    let itf = this.ifaces.get(name);
    if (!itf) {
      itf = { name, addrs: [] };
      this.ifaces.set(name, itf);
    }
    if (!itf.addrs.some(x => x.addr.v === addr.v && x.addr.n === addr.n)) itf.addrs.push({ addr, net: hostNet(addr) });
  }

  /** True when the node's address of this family (or any family) is the symbolic stand-in. */
  isSymbolic(family?: Family): boolean {
    return family ? this.symbolicFamilies.has(family) : this.symbolicFamilies.size > 0;
  }

  /** True when `a` is the symbolic stand-in of its family. */
  isSymbolicAddr(a: Addr): boolean {
    return this.symbolicFamilies.has(a.v) && a.n === SYMBOLIC[a.v].n;
  }

  /** How the symbolic address reads: `node(eth0)`, "the node's address on eth0". */
  get symbolicLabel(): string {
    return `node(${this.uplink})`;
  }

  /** An address as the trace shows it: the symbolic stand-in by its label, any other by its digits. */
  show(a: Addr): string {
    return this.isSymbolicAddr(a) ? this.symbolicLabel : formatAddr(a);
  }

  /** The node's addresses, primary first (the symbolic stand-in included). */
  addresses(family?: Family): Addr[] {
    return family ? this.local.filter(a => a.v === family) : [...this.local];
  }

  primary(family: Family): Addr | null {
    return this.local.find(a => a.v === family) ?? null;
  }

  isLocal(a: Addr): boolean {
    if (isLoopback(a)) return true;
    for (const l of this.local) if (l.v === a.v && l.n === a.n) return true;
    // A local-table route the files give (`ip route add local 10.0.0.0/8 dev lo`, AnyIP) is local too.
    if (this.routing?.knows(a.v)) return this.routing.lookup(a)?.type === 'local';
    return false;
  }

  /**
   * The routing decision for a destination from the node's own tables (routing.ts): undefined when the files
   * gave no routes for the family (then routeOut's settings apply), null when no route matches.
   */
  route(dst: Addr, q: RouteQuery = {}): RouteResult | null | undefined {
    if (!this.routing?.knows(dst.v)) return undefined;
    return this.routing.lookup(dst, q);
  }

  /** The interface that owns a local address (`lo` for loopback). */
  ifaceOf(a: Addr): string | null {
    if (isLoopback(a)) return 'lo';
    for (const itf of this.ifaces.values())
      for (const x of itf.addrs) if (x.addr.v === a.v && x.addr.n === a.n) return itf.name;
    return null;
  }

  /** Output interface for a destination: `lo` for local ones, else the longest matching route, else the uplink. */
  routeOut(dst: Addr, q: RouteQuery = {}): string {
    if (this.isLocal(dst)) return 'lo';
    const fromFiles = this.route(dst, q);
    if (fromFiles?.dev) return fromFiles.type === 'local' ? 'lo' : fromFiles.dev;
    for (const r of this.routes) if (netContains(r.net, dst)) return r.iface;
    return this.uplink;
  }

  /** The address an interface would use as a source (`inet_select_addr`: its own, else any of the node's). */
  sourceFor(iface: string, family: Family): Addr | null {
    if (iface === 'lo') return family === 4 ? { v: 4, n: 0x7f000001 } : { v: 6, n: 1n };
    const own = this.ifaces.get(iface)?.addrs.find(x => x.addr.v === family);
    return own?.addr ?? this.primary(family);
  }

  /**
   * The source MASQUERADE picks for a packet leaving by `iface` (`nf_nat_masquerade_ipv4`:
   * `inet_select_addr(out, nh, RT_SCOPE_UNIVERSE)`). On `lo` — a packet DNATed back to one of the node's
   * own addresses — 127.0.0.1 has host scope and is passed over, so the kernel takes a global address of
   * another device: the node's primary address, never 127.0.0.1 (kernel fixture
   * kube-proxy-v131-control-plane). Elsewhere, as `sourceFor`.
   */
  masqueradeSource(iface: string, family: Family, pkt?: RouteQuery & { readonly dst: Addr }): Addr | null {
    if (this.context && !this.isSymbolic(family)) {
      // With the node's files: `inet_select_addr(out, rt_nexthop(rt, daddr), RT_SCOPE_UNIVERSE)`
      // (nf_nat_masquerade.c), the nexthop being the route's gateway or the destination itself;
      // IPv6: `ipv6_dev_get_saddr` (nf_nat_masquerade_ipv6).
      const r = pkt ? this.route(pkt.dst, pkt) : undefined;
      const nh = r?.gateway ?? pkt?.dst ?? null;
      const chosen =
        family === 4 ? inetSelectAddr(this.context, iface, nh) : ipv6SelectAddr(this.context, iface, pkt?.dst ?? null);
      if (chosen) return chosen;
    }
    return iface === 'lo' ? this.primary(family) : this.sourceFor(iface, family);
  }

  /**
   * What the node's files say about an arriving packet before INPUT or FORWARD (`ip_route_input_slow`):
   * no route, a blackhole/unreachable/prohibit route, or the reverse-path filter (`fib_validate_source`).
   * Null when nothing refuses it, or when the node has no files (the trace's settings decide as before).
   */
  inputRefused(
    pkt: RouteQuery & { readonly dst: Addr; readonly src: Addr; readonly inIface: string | null },
  ): string | null {
    if (!this.context || pkt.inIface === 'lo' || !this.routing?.knows(pkt.dst.v)) return null;
    // Multicast and the limited broadcast are decided before the FIB lookup (ip_route_input_noref).
    if (isMulticast(pkt.dst) || isLimitedBroadcast(pkt.dst)) return null;
    const r = this.routing.lookup(pkt.dst, pkt);
    if (!r)
      return `no route to ${formatAddr(pkt.dst)} in the node's tables (${this.contextLabel()}): the kernel drops it and answers ICMP network unreachable`;
    if (r.type === 'blackhole' || r.type === 'unreachable' || r.type === 'prohibit')
      return `the node routes ${formatAddr(pkt.dst)} to a ${r.type} ${r.route ? `route (${r.route.from.file}:${r.route.from.line})` : `rule (${r.rule?.from.file}:${r.rule?.from.line})`}${r.type === 'blackhole' ? '' : ': the kernel answers ICMP ' + (r.type === 'prohibit' ? 'administratively prohibited' : 'host unreachable')}`;
    return this.rpFilterRefused(pkt, r);
  }

  /** `fib_validate_source` with rp_filter on: a route back to the source must exist (loose) and leave by the incoming interface (strict). */
  private rpFilterRefused(
    pkt: { readonly dst: Addr; readonly src: Addr; readonly inIface: string | null },
    fwd: RouteResult,
  ): string | null {
    if (pkt.src.v !== 4 || !this.sysctls || !pkt.inIface) return null;
    const rpf = this.sysctls.rpFilter(pkt.inIface);
    if (!rpf.value) return null;
    // The reverse lookup swaps the addresses and uses the forward route's device (lo for local delivery) as iif.
    const rev = this.routing!.lookup(pkt.src, {
      src: pkt.dst,
      mark: 0,
      inIface: fwd.type === 'local' ? 'lo' : fwd.dev,
    });
    const how = `rp_filter=${rpf.value} on ${pkt.inIface} (${rpf.from})`;
    if (!rev || (rev.type !== 'unicast' && rev.type !== 'local'))
      return `reverse-path filter: no route back to ${formatAddr(pkt.src)} (${how}); the kernel drops it`;
    if (rpf.value === 1 && rev.dev !== pkt.inIface)
      return `reverse-path filter: the route back to ${formatAddr(pkt.src)} leaves by ${rev.dev ?? 'no device'}, not ${pkt.inIface} where the packet came in (${how}, strict); the kernel drops it`;
    return null;
  }

  /** A packet the node sends when its files give no route for it (`ip_route_output_key`: ENETUNREACH). */
  outputRefused(pkt: RouteQuery & { readonly dst: Addr }): string | null {
    if (!this.context || this.isLocal(pkt.dst)) return null;
    const r = this.route(pkt.dst, { ...pkt, inIface: null });
    if (r === undefined) return null;
    if (!r)
      return `no route to ${formatAddr(pkt.dst)} in the node's tables (${this.contextLabel()}): the send fails (ENETUNREACH)`;
    if (r.type === 'blackhole' || r.type === 'unreachable' || r.type === 'prohibit')
      return `the node routes ${formatAddr(pkt.dst)} to a ${r.type} route${r.route ? ` (${r.route.from.file}:${r.route.from.line})` : ''}: the send fails`;
    return null;
  }

  /** The node's files, as a short list for messages: `ip-addr.json, ip-route.json`. */
  contextLabel(): string {
    return this.context ? [...new Set(this.context.sources.map(s => s.file))].join(', ') || 'node context' : 'settings';
  }

  hasInterface(name: string): boolean {
    return this.ifaces.has(name) || name === 'lo';
  }

  /**
   * The route type `addrtype` sees (`inet_addr_type` / `inet_dev_addr_type`). With `iface` (the
   * `--limit-iface-*` options) a local address counts as LOCAL only on the interface that owns it.
   */
  addrType(a: Addr, iface?: string | null): AddrType {
    if (isMulticast(a)) return 'MULTICAST';
    if (isLimitedBroadcast(a)) return 'BROADCAST';
    if (this.isLocal(a)) {
      if (iface === undefined || iface === null) return 'LOCAL';
      const owner = this.ifaceOf(a);
      return owner === iface || (isLoopback(a) && iface === 'lo') ? 'LOCAL' : 'UNICAST';
    }
    for (const itf of this.ifaces.values()) {
      if (iface && itf.name !== iface) continue;
      for (const x of itf.addrs) {
        if (x.net.v !== 4 || a.v !== 4 || x.net.prefix === null || x.net.prefix >= 31) continue;
        const bcast = (x.net.n | (~x.net.mask >>> 0)) >>> 0;
        if (a.n === bcast) return 'BROADCAST';
      }
    }
    if (a.v === 4 && a.n === 0) return 'UNSPEC';
    return 'UNICAST';
  }

  /** Addresses the user gave or the files implied, without the symbolic stand-ins. */
  knownAddresses(family?: Family): Addr[] {
    return this.addresses(family).filter(a => !this.isSymbolicAddr(a));
  }

  describe(): string {
    return this.local.map(a => this.show(a)).join(', ');
  }
}
