/**
 * rr and wrr: rotations whose current position (`svc->sched_data`, the wrr mark) is runtime state the
 * files cannot show. Over a full rotation rr visits every real server with weight > 0 once
 * (net/netfilter/ipvs/ip_vs_rr.c: the next dest after the last one used, skipping weight 0 and overloaded);
 * wrr visits each `weight / gcd` times (ip_vs_wrr.c: passes with cw = mw, mw - di, …, 1, picking dests
 * with weight >= cw). With the position equally likely anywhere in the rotation, a new connection goes to
 * each server with probability weight / Σ weights (all weights 1, as kube-proxy sets them: 1/n). Neither
 * depends on the list order.
 */
import { rational } from '../rational.ts';
import { type SchedulePick, rsName } from './sched-types.ts';
import type { IpvsRealServer } from './types.ts';

export interface RotationResult {
  readonly summary: string;
  readonly picks: readonly SchedulePick[];
  readonly assumption: string;
}

export function rotation(scheduler: 'rr' | 'wrr', servers: readonly IpvsRealServer[]): RotationResult {
  const available = servers.filter(s => s.weight > 0);
  const total = scheduler === 'rr' ? available.length : available.reduce((n, s) => n + s.weight, 0);
  const summary =
    scheduler === 'rr'
      ? `rr (ip_vs_rr.c): each new connection goes to the next real server with weight > 0 after the last one used; over a rotation each of the ${available.length} gets one connection`
      : `wrr (ip_vs_wrr.c): passes over the real servers with a falling weight threshold; over a rotation each gets weight/gcd connections, ${available.map(s => `${rsName(s)} ${s.weight}`).join(', ')} of ${total}`;
  const assumption =
    'where the rotation stands is kernel state the files do not show: assumed equally likely to be anywhere in it, so each real server is chosen with probability weight / total weight';
  if (available.length === 0) {
    const why =
      servers.length === 0
        ? `${scheduler}: the virtual service has no real servers`
        : `${scheduler}: no real server with weight > 0: no destination available`;
    return { summary, assumption, picks: [{ server: null, probability: rational(1n, 1n), why }] };
  }
  const picks = available.map(s => {
    const share = scheduler === 'rr' ? 1 : s.weight;
    return {
      server: s,
      probability: rational(BigInt(share), BigInt(total)),
      why: `${scheduler}: ${rsName(s)} is ${share} of the ${total} slots of the rotation`,
    };
  });
  return { summary, assumption, picks };
}
