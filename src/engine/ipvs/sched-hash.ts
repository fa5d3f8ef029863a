/**
 * sh and dh: a 256-bucket table filled from the real-server list in order, looked up by a hash.
 *  - sh (ip_vs_sh.c `ip_vs_sh_reassign`): buckets 0..255 filled round-robin, each server taking `weight`
 *    consecutive buckets before the next; lookup `hash_32(ntohs(port) + ntohl(saddr), 8)` with port 0 unless
 *    the service has the `sh-port` flag. The chosen server must have weight > 0 (`is_unavailable`); with
 *    `sh-fallback`, the buckets after the hashed one are tried in turn (`ip_vs_sh_get_fallback`).
 *  - dh (ip_vs_dh.c `ip_vs_dh_reassign`): buckets filled one per server, round-robin; lookup
 *    `hash_32(ntohl(daddr), 8)`. The chosen server must have weight > 0.
 * Before Linux 3.11, sh hashed `(ntohl(addr) * 2654435761) & 255`, and before 4.7 hash_32 multiplied by
 * 0x9e370001; this follows current kernels (hash.ts).
 */
import { formatAddr } from '../net/addr.ts';
import { foldAddr, hash32 } from './hash.ts';
import { type OrderedPicker, type ScheduleRequest, rsName } from './sched-types.ts';
import type { IpvsRealServer } from './types.ts';

const TAB_BITS = 8;
const TAB_SIZE = 1 << TAB_BITS;

/** The bucket table as indexes into `servers`; -1 for empty. */
export function shBuckets(servers: readonly IpvsRealServer[]): number[] {
  const out: number[] = [];
  if (servers.length === 0) return new Array<number>(TAB_SIZE).fill(-1);
  let p = 0;
  let count = 0;
  for (let i = 0; i < TAB_SIZE; i++) {
    out.push(p);
    // "Don't move to next dest until filling weight": a weight-0 server still takes one bucket.
    if (++count >= servers[p]!.weight) {
      p = (p + 1) % servers.length;
      count = 0;
    }
  }
  return out;
}

export function dhBuckets(servers: readonly IpvsRealServer[]): number[] {
  return Array.from({ length: TAB_SIZE }, (_, i) => (servers.length ? i % servers.length : -1));
}

/** The bucket sh looks up for this client (`ip_vs_sh_hashkey` with offset 0). */
export function shBucket(req: ScheduleRequest): number {
  const port = req.service.schedFlags.includes('sh-port') ? (req.client.sport ?? 0) : 0;
  return hash32((port + foldAddr(req.client.src)) >>> 0, TAB_BITS);
}

export function dhBucket(req: ScheduleRequest): number {
  return hash32(foldAddr(req.client.dst), TAB_BITS);
}

export const shPicker: OrderedPicker = {
  summary:
    'sh (ip_vs_sh.c): a 256-bucket table filled round-robin by weight from the real-server list; the bucket is hash_32(source address [+ source port with sh-port], 8)',
  tie: 'hash',
  pick(servers, req) {
    const table = shBuckets(servers);
    const b = shBucket(req);
    const port = req.service.schedFlags.includes('sh-port') ? ` + port ${req.client.sport ?? 0}` : '';
    const head = `sh: source ${formatAddr(req.client.src)}${port} hashes to bucket ${b}`;
    const i = table[b]!;
    if (i < 0) return { index: null, why: `${head}, which is empty: no real servers` };
    if (servers[i]!.weight > 0)
      return { index: i, why: `${head}, which holds ${rsName(servers[i]!)} (list position ${i + 1})` };
    if (req.service.schedFlags.includes('sh-fallback')) {
      for (let off = 0; off < TAB_SIZE; off++) {
        const j = table[(b + ((off + b) % TAB_SIZE)) % TAB_SIZE]!;
        if (j < 0) break;
        if (servers[j]!.weight > 0)
          return {
            index: j,
            why: `${head}, whose server has weight 0; sh-fallback moves on to ${rsName(servers[j]!)}`,
          };
      }
    }
    return { index: null, why: `${head}, whose server ${rsName(servers[i]!)} has weight 0: no destination available` };
  },
};

export const dhPicker: OrderedPicker = {
  summary:
    'dh (ip_vs_dh.c): a 256-bucket table filled round-robin (one bucket per real server in list order); the bucket is hash_32(destination address, 8)',
  tie: 'hash',
  pick(servers, req) {
    const b = dhBucket(req);
    const i = dhBuckets(servers)[b]!;
    const head = `dh: destination ${formatAddr(req.client.dst)} hashes to bucket ${b}`;
    if (i < 0) return { index: null, why: `${head}, which is empty: no real servers` };
    if (servers[i]!.weight <= 0)
      return {
        index: null,
        why: `${head}, whose server ${rsName(servers[i]!)} has weight 0: no destination available`,
      };
    return { index: i, why: `${head}, which holds ${rsName(servers[i]!)} (list position ${i + 1})` };
  },
};
