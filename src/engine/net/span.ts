/** Intervals of addresses and ports as bigints, shared by the match modules' diff facts and the diff. */
import type { Addr, Net } from './addr.ts';

export interface Span {
  readonly lo: bigint;
  readonly hi: bigint;
}

export function addrValue(a: Addr): bigint {
  return typeof a.n === 'bigint' ? a.n : BigInt(a.n);
}

/**
 * The interval a network covers. A non-contiguous mask (`10.0.0.0/255.0.255.0`) covers no interval: the
 * span from its lowest to its highest member is returned and `exact` says so.
 */
export function netSpan(net: Net): Span & { exact: boolean } {
  const bits = net.v === 4 ? 32 : 128;
  const mask = typeof net.mask === 'bigint' ? net.mask : BigInt(net.mask);
  const base = typeof net.n === 'bigint' ? net.n : BigInt(net.n);
  const host = ((1n << BigInt(bits)) - 1n) ^ mask;
  const contiguous = (host & (host + 1n)) === 0n;
  return { lo: base, hi: base | host, exact: contiguous };
}
