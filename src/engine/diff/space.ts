/**
 * One-dimensional value spaces the class analysis cuts into atoms: addresses (IPv4 and IPv6 as bigints)
 * and ports. An atom is a maximal interval that no constant of the rules splits, so every rule's test on
 * that dimension answers the same for all of its values.
 */
import { type Addr, type Family, type Net, formatAddr, formatNet } from '../net/addr.ts';

/** An inclusive interval. */
export type { Span } from '../net/span.ts';
export { addrValue, netSpan } from '../net/span.ts';
import type { Span } from '../net/span.ts';

export function fullSpan(bits: number): Span {
  return { lo: 0n, hi: (1n << BigInt(bits)) - 1n };
}

export function addrSpace(family: Family): Span {
  return fullSpan(family === 4 ? 32 : 128);
}

export const PORT_SPACE: Span = fullSpan(16);

export function valueAddr(family: Family, n: bigint): Addr {
  return family === 4 ? { v: 4, n: Number(n) } : { v: 6, n };
}

export function intersect(a: Span, b: Span): Span | null {
  const lo = a.lo > b.lo ? a.lo : b.lo;
  const hi = a.hi < b.hi ? a.hi : b.hi;
  return lo <= hi ? { lo, hi } : null;
}

export function contains(outer: Span, inner: Span): boolean {
  return outer.lo <= inner.lo && inner.hi <= outer.hi;
}

/** The atoms of `bounds` cut at both ends of every span in `cuts`, in ascending order. */
export function atoms(bounds: Span, cuts: readonly Span[]): Span[] {
  const points = new Set<bigint>([bounds.lo]);
  for (const c of cuts) {
    if (c.lo > bounds.lo && c.lo <= bounds.hi) points.add(c.lo);
    if (c.hi >= bounds.lo && c.hi < bounds.hi) points.add(c.hi + 1n);
  }
  const sorted = [...points].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return sorted.map((lo, i) => ({ lo, hi: i + 1 < sorted.length ? sorted[i + 1]! - 1n : bounds.hi }));
}

/**
 * The value that stands for an atom: the first preferred value inside it (so reports show ordinary
 * addresses and ports), else one past the low end of a wide atom (a network's own address reads oddly as a
 * host), else the low end.
 */
export function representative(atom: Span, preferred: readonly bigint[], unit = 0n): bigint {
  for (const p of preferred) if (atom.lo <= p && p <= atom.hi) return p;
  // An atom that starts at 0.0.0.0 reads better from the next round block on (1.0.0.10, not 0.0.0.1).
  if (unit > 0n && atom.lo === 0n && unit + 10n <= atom.hi) return unit + 10n;
  return atom.hi - atom.lo >= 2n ? atom.lo + 1n : atom.lo;
}

/** Documentation ranges (RFC 5737, RFC 3849): addresses a report can show without naming a real host. */
const DOC_RANGES: Record<Family, readonly Span[]> = {
  4: [
    { lo: 0xcb007100n, hi: 0xcb0071ffn },
    { lo: 0xc6336400n, hi: 0xc63364ffn },
    { lo: 0xc0000200n, hi: 0xc00002ffn },
  ],
  6: [{ lo: 0x20010db8n << 96n, hi: (0x20010db8n << 96n) | ((1n << 96n) - 1n) }],
};

/**
 * Special-use ranges no host on the internet has, for an atom that holds no documentation range: RFC 2544
 * benchmarking (198.18.0.0/15), RFC 6598 shared space (100.64.0.0/10), RFC 1918 private networks, the
 * reserved 240.0.0.0/4; for IPv6 the RFC 4193 unique-local fd00::/8. A report never shows a real public
 * address such as 1.0.0.10 (a public resolver's network) as a client.
 */
const SPECIAL_RANGES: Record<Family, readonly Span[]> = {
  4: [
    { lo: 0xc6120000n, hi: 0xc613ffffn },
    { lo: 0x64400000n, hi: 0x647fffffn },
    { lo: 0x0a000000n, hi: 0x0affffffn },
    { lo: 0xac100000n, hi: 0xac1fffffn },
    { lo: 0xc0a80000n, hi: 0xc0a8ffffn },
    { lo: 0xf0000000n, hi: 0xfffffffen },
  ],
  6: [{ lo: 0xfdn << 120n, hi: (0xfdn << 120n) | ((1n << 120n) - 1n) }],
};

/** Whether an address lies in a documentation range (RFC 5737, RFC 3849). */
export function isDocAddr(family: Family, n: bigint): boolean {
  return DOC_RANGES[family].some(r => r.lo <= n && n <= r.hi);
}

function inRanges(ranges: readonly Span[], atom: Span): bigint | null {
  for (const r of ranges) {
    const lo = r.lo > atom.lo ? r.lo : atom.lo;
    const hi = r.hi < atom.hi ? r.hi : atom.hi;
    if (lo > hi) continue;
    if (lo <= r.lo + 10n && r.lo + 10n <= hi) return r.lo + 10n;
    return hi - lo >= 2n ? lo + 1n : lo;
  }
  return null;
}

/**
 * The address that stands for an atom: a preferred one inside it, else one of a documentation range
 * (its `.10`, or the first host of the part inside the atom), else one of a special-use range likewise,
 * else `representative`'s ordinary value (an atom inside public space that holds none of these).
 */
export function addrRepresentative(family: Family, atom: Span, preferred: readonly bigint[]): bigint {
  for (const p of preferred) if (atom.lo <= p && p <= atom.hi) return p;
  return (
    inRanges(DOC_RANGES[family], atom) ??
    inRanges(SPECIAL_RANGES[family], atom) ??
    representative(atom, [], family === 4 ? 1n << 24n : 1n << 120n)
  );
}

/** `10.0.0.0/8`, `10.1.2.3`, or `10.0.0.0–10.0.0.9` when the atom is not one network. */
export function formatAddrSpan(family: Family, s: Span): string {
  const bits = family === 4 ? 32 : 128;
  if (s.lo === s.hi) return formatAddr(valueAddr(family, s.lo));
  if (s.lo === 0n && s.hi === (1n << BigInt(bits)) - 1n) return 'any';
  const size = s.hi - s.lo + 1n;
  if ((size & (size - 1n)) === 0n && s.lo % size === 0n) {
    let prefix = bits;
    for (let k = size; k > 1n; k >>= 1n) prefix--;
    const mask = ((1n << BigInt(bits)) - 1n) ^ (size - 1n);
    const net: Net =
      family === 4 ? { v: 4, n: Number(s.lo), mask: Number(mask), prefix } : { v: 6, n: s.lo, mask, prefix };
    return formatNet(net);
  }
  return `${formatAddr(valueAddr(family, s.lo))}–${formatAddr(valueAddr(family, s.hi))}`;
}

export function formatPortSpan(s: Span): string {
  if (s.lo === s.hi) return String(s.lo);
  if (s.lo === 0n && s.hi === 65535n) return 'any';
  return `${s.lo}–${s.hi}`;
}
