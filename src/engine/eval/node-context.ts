/**
 * What the node's own files (nodectx/) decide beyond routes: the sysctls that change netfilter's view
 * (ip_forward, route_localnet, rp_filter) and the kernel's source address choice for MASQUERADE.
 */
import { type Addr, netContains, parseAddr, parseNet } from '../net/addr.ts';
import type { NodeContext } from '../nodectx/types.ts';

export interface NodeSysctls {
  /** net.ipv4.ip_forward, when the files give it. */
  readonly ipForward: boolean | undefined;
  /** net.ipv4.conf.all.route_localnet. */
  readonly routeLocalnetAll: boolean;
  /**
   * rp_filter for an incoming interface: `IN_DEV_RPFILTER` is `IN_DEV_MAXCONF(RP_FILTER)`, the larger of
   * conf.all and conf.<iface> (Documentation/networking/ip-sysctl.rst: "The max value from
   * conf/{all,interface}/rp_filter is used").
   */
  rpFilter(iface: string): { value: number; from: string };
  /** net.bridge.bridge-nf-call-iptables, when given (bridged traffic through iptables). */
  readonly bridgeNfCallIptables: boolean | undefined;
}

export function contextSysctls(ctx: NodeContext): NodeSysctls {
  const get = (k: string) => ctx.sysctls.get(k);
  const flag = (k: string): boolean | undefined => {
    const v = get(k);
    return v === undefined ? undefined : v.value.trim() !== '0';
  };
  return {
    ipForward: flag('net.ipv4.ip_forward'),
    routeLocalnetAll: flag('net.ipv4.conf.all.route_localnet') ?? false,
    bridgeNfCallIptables: flag('net.bridge.bridge-nf-call-iptables'),
    rpFilter(iface) {
      const all = get('net.ipv4.conf.all.rp_filter');
      const dev = get(`net.ipv4.conf.${iface}.rp_filter`);
      const a = Number(all?.value ?? 0) || 0;
      const d = Number(dev?.value ?? 0) || 0;
      const win = d > a ? dev : all;
      return { value: Math.max(a, d), from: win ? `${win.from.file}:${win.from.line}` : 'default 0' };
    },
  };
}

/**
 * `inet_select_addr(dev, dst, RT_SCOPE_UNIVERSE)` (net/ipv4/devinet.c): on `dev`, the first primary
 * (non-secondary) global address whose subnet holds `dst`, else its first primary global address; with none
 * on `dev`, the first primary global address of any device in ifindex order (lo first). Null when the node
 * has no global IPv4 address at all (MASQUERADE then drops the packet).
 */
export function inetSelectAddr(ctx: NodeContext, dev: string, dst: Addr | null): Addr | null {
  const itf = ctx.interfaces.find(i => i.name === dev);
  let first: Addr | null = null;
  for (const a of itf?.addrs ?? []) {
    // min(ifa_scope, localnet_scope) > RT_SCOPE_UNIVERSE skips every non-global address (host, link, site).
    if (a.family !== 4 || a.secondary || a.scope !== 'global') continue;
    const addr = parseAddr(a.local);
    if (!addr) continue;
    const net = parseNet(`${a.local}/${a.prefixlen}`);
    if (!dst || (net && netContains(net, dst))) return addr;
    first ??= addr;
  }
  if (first) return first;
  for (const other of ctx.interfaces)
    for (const a of other.addrs) {
      // in_dev_select_addr: scope != link and <= universe, primary only.
      if (a.family !== 4 || a.secondary || a.scope !== 'global') continue;
      const addr = parseAddr(a.local);
      if (addr) return addr;
    }
  return null;
}

/**
 * IPv6 MASQUERADE's `ipv6_dev_get_saddr(out, daddr)` (RFC 6724 source selection), reduced to the rules that
 * decide on a node: a global, non-deprecated address; one on the outgoing device first (rule 5); then the
 * longest common prefix with the destination (rule 8).
 */
export function ipv6SelectAddr(ctx: NodeContext, dev: string, dst: Addr | null): Addr | null {
  let best: { addr: Addr; onDev: boolean; common: number } | null = null;
  for (const itf of ctx.interfaces)
    for (const a of itf.addrs) {
      if (a.family !== 6 || a.scope !== 'global') continue;
      const addr = parseAddr(a.local);
      if (!addr || addr.v !== 6) continue;
      const onDev = itf.name === dev;
      let common = 0;
      if (dst && dst.v === 6) {
        const x = addr.n ^ dst.n;
        common = x === 0n ? 128 : 128 - x.toString(2).length;
      }
      if (!best || (onDev && !best.onDev) || (onDev === best.onDev && common > best.common))
        best = { addr, onDev, common };
    }
  return best?.addr ?? null;
}
