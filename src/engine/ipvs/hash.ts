/**
 * The kernel hash functions IPVS schedulers use, bit for bit:
 *  - `hash_32(val, bits)` (include/linux/hash.h since 4.7): `(val * GOLDEN_RATIO_32) >> (32 - bits)` with
 *    GOLDEN_RATIO_32 = 0x61C88647, on 32-bit unsigned arithmetic. sh and dh use it with 8 bits.
 *  - `hsiphash(data, len, key)` on a 64-bit kernel (lib/siphash.c, `BITS_PER_LONG == 64`): SipHash-1-3 with a
 *    128-bit key, truncated to 32 bits. mh uses it with the fixed keys of ip_vs_mh.c `generate_hash_secret`.
 * Addresses are folded as ip_vs_sh.c / ip_vs_dh.c / ip_vs_mh.c do: IPv4 as the host-order 32-bit value
 * (`ntohl(addr)`), IPv6 as the XOR of its four 32-bit words.
 */
import type { Addr } from '../net/addr.ts';

const GOLDEN_RATIO_32 = 0x61c88647;

/** `hash_32(val, bits)` for a u32 `val`. */
export function hash32(val: number, bits: number): number {
  return Math.imul(val >>> 0, GOLDEN_RATIO_32) >>> (32 - bits);
}

/** The host-order u32 the schedulers hash an address as (`ntohl(addr_fold)`). */
export function foldAddr(a: Addr): number {
  if (a.v === 4) return a.n >>> 0;
  let x = 0n;
  for (let i = 0n; i < 4n; i++) x ^= (a.n >> (32n * i)) & 0xffffffffn;
  return Number(x);
}

const M64 = (1n << 64n) - 1n;

function rol64(x: bigint, s: bigint): bigint {
  return ((x << s) | (x >> (64n - s))) & M64;
}

/** SIPHASH_PERMUTATION (include/linux/siphash.h) on [v0, v1, v2, v3]. */
function sipRound(v: bigint[]): void {
  let [v0, v1, v2, v3] = v as [bigint, bigint, bigint, bigint];
  v0 = (v0 + v1) & M64;
  v1 = rol64(v1, 13n) ^ v0;
  v0 = rol64(v0, 32n);
  v2 = (v2 + v3) & M64;
  v3 = rol64(v3, 16n) ^ v2;
  v0 = (v0 + v3) & M64;
  v3 = rol64(v3, 21n) ^ v0;
  v2 = (v2 + v1) & M64;
  v1 = rol64(v1, 17n) ^ v2;
  v2 = rol64(v2, 32n);
  v[0] = v0;
  v[1] = v1;
  v[2] = v2;
  v[3] = v3;
}

/** `hsiphash(data, len, key)` of a 64-bit kernel: HPREAMBLE, one round per 8-byte word, HPOSTAMBLE. */
export function hsiphash64(data: Uint8Array, key: readonly [bigint, bigint]): number {
  const [k0, k1] = key;
  const v = [0x736f6d6570736575n ^ k0, 0x646f72616e646f6dn ^ k1, 0x6c7967656e657261n ^ k0, 0x7465646279746573n ^ k1];
  let b = (BigInt(data.length) << 56n) & M64;
  const full = data.length - (data.length % 8);
  for (let i = 0; i < full; i += 8) {
    let m = 0n;
    for (let j = 7; j >= 0; j--) m = (m << 8n) | BigInt(data[i + j]!);
    v[3] = v[3]! ^ m;
    sipRound(v);
    v[0] = v[0]! ^ m;
  }
  for (let j = data.length - 1; j >= full; j--) b |= BigInt(data[j]!) << BigInt(8 * (j - full));
  v[3] = v[3]! ^ b;
  sipRound(v);
  v[0] = v[0]! ^ b;
  v[2] = v[2]! ^ 0xffn;
  sipRound(v);
  sipRound(v);
  sipRound(v);
  return Number((v[0]! ^ v[1]! ^ v[2]! ^ v[3]!) & 0xffffffffn);
}

/** The bytes of a u32 as it lies in memory on a little-endian machine (x86-64, arm64). */
export function u32le(x: number): Uint8Array {
  const n = x >>> 0;
  return Uint8Array.of(n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, n >>> 24);
}
