/**
 * IPv4 and IPv6 addresses and networks. IPv4 values are unsigned 32-bit numbers (fast on the hot path of
 * rule matching); IPv6 values are 128-bit bigints. Networks carry a mask rather than a prefix length because
 * iptables accepts arbitrary dotted masks (`-s 10.0.0.0/255.0.255.0`) and matches `(addr & mask) == net`
 * (`ip_packet_match` in net/ipv4/netfilter/ip_tables.c).
 */

export type Family = 4 | 6;

export type Addr = { readonly v: 4; readonly n: number } | { readonly v: 6; readonly n: bigint };

export type Net =
  | { readonly v: 4; readonly n: number; readonly mask: number; readonly prefix: number | null }
  | { readonly v: 6; readonly n: bigint; readonly mask: bigint; readonly prefix: number | null };

const V6_ALL = (1n << 128n) - 1n;

/** Digits text[from, to) as a number, when there are 1 to `max` of them; else -1. */
export function decimal(text: string, from: number, to: number, max: number): number {
  if (to - from < 1 || to - from > max) return -1;
  let n = 0;
  for (let i = from; i < to; i++) {
    const d = text.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

/** Parses dotted-quad IPv4 without allocating; returns -1 when the text is not an address. */
export function parseIPv4Number(s: string, start = 0, end = s.length): number {
  let value = 0;
  let part = -1;
  let parts = 0;
  let digits = 0;
  for (let i = start; i < end; i++) {
    const c = s.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      // Leading zeros are accepted by inet_pton only as a lone 0; iptables uses inet_aton-like parsing
      // that reads them as decimal here, which is what real dumps contain anyway.
      part = part < 0 ? c - 48 : part * 10 + (c - 48);
      if (++digits > 3 || part > 255) return -1;
    } else if (c === 46) {
      if (part < 0) return -1;
      value = value * 256 + part;
      part = -1;
      digits = 0;
      if (++parts > 3) return -1;
    } else {
      return -1;
    }
  }
  if (part < 0 || parts !== 3) return -1;
  return value * 256 + part;
}

/** Parses an IPv6 address (with `::` and an embedded IPv4 tail); null when malformed. */
export function parseIPv6Bigint(text: string): bigint | null {
  let s = text;
  if (s.startsWith('[') && s.endsWith(']')) s = s.slice(1, -1);
  const pct = s.indexOf('%');
  if (pct >= 0) s = s.slice(0, pct);
  if (s.length === 0 || s.length > 45) return null;
  const dbl = s.indexOf('::');
  if (dbl >= 0 && s.indexOf('::', dbl + 1) >= 0) return null;
  const parseGroups = (part: string): number[] | null => {
    if (part === '') return [];
    const out: number[] = [];
    const items = part.split(':');
    for (let i = 0; i < items.length; i++) {
      const g = items[i]!;
      if (i === items.length - 1 && g.includes('.')) {
        const v4 = parseIPv4Number(g);
        if (v4 < 0) return null;
        out.push(Math.floor(v4 / 65536), v4 % 65536);
        continue;
      }
      if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
      out.push(parseInt(g, 16));
    }
    return out;
  };
  let groups: number[];
  if (dbl >= 0) {
    const head = parseGroups(s.slice(0, dbl));
    const tail = parseGroups(s.slice(dbl + 2));
    if (!head || !tail || head.length + tail.length > 7) return null;
    groups = [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
  } else {
    const all = parseGroups(s);
    if (!all || all.length !== 8) return null;
    groups = all;
  }
  let n = 0n;
  for (const g of groups) n = (n << 16n) | BigInt(g);
  return n;
}

export function parseAddr(text: string): Addr | null {
  const v4 = parseIPv4Number(text);
  if (v4 >= 0) return { v: 4, n: v4 };
  if (text.includes(':')) {
    const v6 = parseIPv6Bigint(text);
    if (v6 !== null) return { v: 6, n: v6 };
  }
  return null;
}

function v4MaskFromPrefix(prefix: number): number {
  return prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
}

function v6MaskFromPrefix(prefix: number): bigint {
  return prefix === 0 ? 0n : (V6_ALL << BigInt(128 - prefix)) & V6_ALL;
}

function prefixOfV4Mask(mask: number): number | null {
  const inv = ~mask >>> 0;
  if ((inv & (inv + 1)) !== 0) return null;
  return 32 - Math.log2(inv + 1);
}

/**
 * Parses `addr`, `addr/prefix` or `addr/dotted-mask`. The network bits are masked as iptables does
 * (it prints `10.0.0.0/8` for `10.1.2.3/8`). Hostnames are not resolved: they return null.
 */
export function parseNet(text: string): Net | null {
  const slash = text.indexOf('/');
  const addrText = slash < 0 ? text : text.slice(0, slash);
  const maskText = slash < 0 ? null : text.slice(slash + 1);
  const v4 = parseIPv4Number(addrText);
  if (v4 >= 0) {
    let mask = 0xffffffff;
    let prefix: number | null = 32;
    if (maskText !== null) {
      if (/^\d{1,2}$/.test(maskText)) {
        prefix = Number(maskText);
        if (prefix > 32) return null;
        mask = v4MaskFromPrefix(prefix);
      } else {
        const m = parseIPv4Number(maskText);
        if (m < 0) return null;
        mask = m;
        prefix = prefixOfV4Mask(m);
      }
    }
    return { v: 4, n: (v4 & mask) >>> 0, mask, prefix };
  }
  const v6 = parseIPv6Bigint(addrText);
  if (v6 === null) return null;
  let prefix: number | null = 128;
  let mask = V6_ALL;
  if (maskText !== null) {
    if (/^\d{1,3}$/.test(maskText)) {
      prefix = Number(maskText);
      if (prefix > 128) return null;
      mask = v6MaskFromPrefix(prefix);
    } else {
      const m = parseIPv6Bigint(maskText);
      if (m === null) return null;
      mask = m;
      prefix = null;
    }
  }
  return { v: 6, n: v6 & mask, mask, prefix };
}

export function netContains(net: Net, a: Addr): boolean {
  if (net.v === 4) return a.v === 4 && (a.n & net.mask) >>> 0 === net.n;
  return a.v === 6 && (a.n & net.mask) === net.n;
}

/**
 * "Is the address in any of these nets", with the nets grouped by mask: the work per address follows the
 * number of distinct masks (at most 33 prefixes for IPv4, 129 for IPv6), not of nets, so a node's addresses
 * against a long nodePortAddresses list are not their product.
 */
export function netsMatcher(nets: readonly Net[]): (a: Addr) => boolean {
  const groups = new Map<string, { v: 4 | 6; mask: number | bigint; ns: Set<number | bigint> }>();
  for (const net of nets) {
    const key = `${net.v}:${net.mask}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { v: net.v, mask: net.mask, ns: new Set() }));
    g.ns.add(net.n);
  }
  const list = [...groups.values()];
  return a => {
    for (const g of list) {
      if (g.v !== a.v) continue;
      const masked = a.v === 4 ? (a.n & (g.mask as number)) >>> 0 : a.n & (g.mask as bigint);
      if (g.ns.has(masked)) return true;
    }
    return false;
  };
}

export function addrEquals(a: Addr, b: Addr): boolean {
  return a.v === b.v && a.n === b.n;
}

export function formatIPv4(n: number): string {
  return `${(n >>> 24) & 255}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
}

/** RFC 5952 text form: lower case, longest run of zero groups compressed. */
export function formatIPv6(n: bigint): string {
  const groups: number[] = [];
  for (let i = 7; i >= 0; i--) groups.push(Number((n >> BigInt(i * 16)) & 0xffffn));
  let bestStart = -1;
  let bestLen = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map(g => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`;
}

export function formatAddr(a: Addr): string {
  return a.v === 4 ? formatIPv4(a.n) : formatIPv6(a.n);
}

/** Formats as iptables-save does: `/32` prefixes are kept, non-contiguous masks are dotted. */
export function formatNet(net: Net): string {
  if (net.v === 4) {
    return `${formatIPv4(net.n)}/${net.prefix ?? formatIPv4(net.mask)}`;
  }
  return `${formatIPv6(net.n)}/${net.prefix ?? formatIPv6(net.mask)}`;
}

export function hostNet(a: Addr): Net {
  return a.v === 4 ? { v: 4, n: a.n, mask: 0xffffffff, prefix: 32 } : { v: 6, n: a.n, mask: V6_ALL, prefix: 128 };
}

export function isLoopback(a: Addr): boolean {
  return a.v === 4 ? a.n >>> 24 === 127 : a.n === 1n;
}

export function isMulticast(a: Addr): boolean {
  return a.v === 4 ? a.n >>> 28 === 0xe : a.n >> 120n === 0xffn;
}

export function isLimitedBroadcast(a: Addr): boolean {
  return a.v === 4 && a.n === 0xffffffff;
}

/** Compares two addresses of one family numerically (for ranges). */
export function compareAddr(a: Addr, b: Addr): number {
  if (a.v !== b.v) return a.v - b.v;
  return a.n < b.n ? -1 : a.n > b.n ? 1 : 0;
}

/** Parses `a-b` address ranges as used by iprange, DNAT and ipset. */
export function parseAddrRange(text: string): { from: Addr; to: Addr } | null {
  const dash = text.indexOf('-');
  if (dash < 0) {
    const a = parseAddr(text);
    return a ? { from: a, to: a } : null;
  }
  const from = parseAddr(text.slice(0, dash));
  const to = parseAddr(text.slice(dash + 1));
  if (!from || !to || from.v !== to.v || compareAddr(from, to) > 0) return null;
  return { from, to };
}

export function inRange(r: { from: Addr; to: Addr }, a: Addr): boolean {
  return a.v === r.from.v && compareAddr(r.from, a) <= 0 && compareAddr(a, r.to) <= 0;
}
