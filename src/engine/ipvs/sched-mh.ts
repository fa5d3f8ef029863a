/**
 * mh, Maglev hashing (net/netfilter/ipvs/ip_vs_mh.c), as the kernel computes it with its default table:
 * CONFIG_IP_VS_MH_TAB_INDEX 12 gives a lookup table of primes[4] = 4093 entries.
 *  - Each real server gets a permutation: offset = hsiphash(port + addr, hash1) % 4093 and
 *    skip = hsiphash(port + addr, hash2) % 4092 + 1, with the fixed keys of `generate_hash_secret`
 *    (hash1 = {2654435761, 2654435761}, hash2 = {2654446892, 2654446892}); `turns` = (weight / gcd) >> rshift.
 *  - `ip_vs_mh_populate` walks the servers in list order, each claiming its next free preferred slot
 *    (`turns` slots per visit) until all 4093 are taken.
 *  - A connection looks up slot hsiphash(sport + saddr, hash1) % 4093 (the port only with the `mh-port`
 *    flag, which kube-proxy sets for mh); a server with weight 0 there means no destination unless
 *    `mh-fallback` is set (`ip_vs_mh_get_fallback`).
 */
import { type Addr, formatAddr, parseAddr } from '../net/addr.ts';
import { foldAddr, hsiphash64, u32le } from './hash.ts';
import { type OrderedPicker, type ScheduleRequest, rsName } from './sched-types.ts';
import type { IpvsRealServer } from './types.ts';

export const MH_TABLE_SIZE = 4093;
const MH_TAB_BITS = 6;
const HASH1: readonly [bigint, bigint] = [2654435761n, 2654435761n];
const HASH2: readonly [bigint, bigint] = [2654446892n, 2654446892n];

/** `ip_vs_mh_hashkey`: hsiphash of the u32 `offset + port + ntohl(addr_fold)`. */
export function mhHash(addr: Addr, port: number, key: readonly [bigint, bigint], offset = 0): number {
  return hsiphash64(u32le((offset + port + foldAddr(addr)) >>> 0), key);
}

function gcd(a: number, b: number): number {
  while (b) [a, b] = [b, a % b];
  return a;
}

function fls(x: number): number {
  return x === 0 ? 0 : 32 - Math.clz32(x);
}

const setupCache = new Map<string, { offset: number; skip: number }>();

function setupOf(rs: IpvsRealServer): { offset: number; skip: number } {
  const key = `${rs.addr}|${rs.port}`;
  let s = setupCache.get(key);
  if (!s) {
    const addr = parseAddr(rs.addr) ?? ({ v: 4, n: 0 } as Addr);
    s = {
      offset: mhHash(addr, rs.port, HASH1) % MH_TABLE_SIZE,
      skip: (mhHash(addr, rs.port, HASH2) % (MH_TABLE_SIZE - 1)) + 1,
    };
    if (setupCache.size > 10_000) setupCache.clear();
    setupCache.set(key, s);
  }
  return s;
}

/** The lookup table (server index per slot, -1 when the table is empty), as `ip_vs_mh_permutate` + `_populate` fill it. */
export function mhLookup(servers: readonly IpvsRealServer[]): Int32Array {
  const lookup = new Int32Array(MH_TABLE_SIZE).fill(-1);
  const g = servers.reduce((acc, s) => (s.weight > 0 ? (acc > 0 ? gcd(s.weight, acc) : s.weight) : acc), 0);
  if (g < 1) return lookup;
  const mw = Math.floor(Math.max(...servers.map(s => s.weight)) / g);
  const rshift = Math.max(0, fls(mw) - MH_TAB_BITS);
  const perm = servers.map(s => setupOf(s).offset);
  const skip = servers.map(s => setupOf(s).skip);
  const turns = servers.map(s => Math.floor(s.weight / g) >> rshift || (s.weight !== 0 ? 1 : 0));
  if (!turns.some(t => t >= 1)) return lookup;
  const taken = new Uint8Array(MH_TABLE_SIZE);
  let n = 0;
  let dt = 0;
  while (n < MH_TABLE_SIZE) {
    let p = 0;
    while (p < servers.length) {
      if (turns[p]! < 1) {
        p++;
        continue;
      }
      let c = perm[p]!;
      while (taken[c]) {
        perm[p] = perm[p]! + skip[p]!;
        if (perm[p]! >= MH_TABLE_SIZE) perm[p] = perm[p]! - MH_TABLE_SIZE;
        c = perm[p]!;
      }
      taken[c] = 1;
      lookup[c] = p;
      if (++n === MH_TABLE_SIZE) return lookup;
      if (++dt >= turns[p]!) {
        dt = 0;
        p++;
      }
    }
  }
  return lookup;
}

function clientPort(req: ScheduleRequest): number {
  return req.service.schedFlags.includes('mh-port') ? (req.client.sport ?? 0) : 0;
}

export const mhPicker: OrderedPicker = {
  summary: `mh (ip_vs_mh.c): Maglev hashing; a ${MH_TABLE_SIZE}-slot table filled from each real server's hsiphash permutation, looked up by hsiphash(source address [+ source port with mh-port])`,
  tie: 'hash',
  pick(servers, req) {
    const lookup = mhLookup(servers);
    const port = clientPort(req);
    const slot = mhHash(req.client.src, port, HASH1) % MH_TABLE_SIZE;
    const head = `mh: source ${formatAddr(req.client.src)}${port ? ` port ${port}` : ''} hashes to slot ${slot} of ${MH_TABLE_SIZE}`;
    const i = lookup[slot]!;
    if (i < 0) return { index: null, why: `${head}, which is empty: no real server with weight > 0` };
    if (servers[i]!.weight > 0) return { index: i, why: `${head}, which holds ${rsName(servers[i]!)}` };
    if (req.service.schedFlags.includes('mh-fallback')) {
      for (let off = 0; off < MH_TABLE_SIZE; off++) {
        const roffset = (off + slot) % MH_TABLE_SIZE;
        const j = lookup[mhHash(req.client.src, port, HASH1, roffset) % MH_TABLE_SIZE]!;
        if (j < 0) break;
        if (servers[j]!.weight > 0)
          return {
            index: j,
            why: `${head}, whose server has weight 0; mh-fallback moves on to ${rsName(servers[j]!)}`,
          };
      }
    }
    return { index: null, why: `${head}, whose server ${rsName(servers[i]!)} has weight 0: no destination available` };
  },
};
