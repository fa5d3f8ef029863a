/**
 * Schedulers that walk the real-server list in order and keep the best so far, so that ties go to the
 * server that comes first in the kernel's list (each uses a strict comparison):
 *  - lc  (ip_vs_lc.c):  least `activeconns*256 + inactconns`, skipping weight 0 (`doh < loh`).
 *  - wlc (ip_vs_wlc.c): least overhead / weight: the first server with weight > 0, then any later one with
 *        `loh * w > doh * w_least`.
 *  - sed (ip_vs_sed.c): as wlc with overhead `activeconns + 1`.
 *  - nq  (ip_vs_nq.c):  the first server with weight > 0 and no active connection; else as sed.
 *  - fo  (ip_vs_fo.c):  the highest weight (`weight > hw`).
 *  - ovf (ip_vs_ovf.c): the highest weight among servers whose active connections do not exceed it.
 *  - lblc / lblcr (ip_vs_lblc.c, ip_vs_lblcr.c): with no locality-cache entry for the destination address,
 *        `__ip_vs_lblc_schedule` / `__ip_vs_lblcr_schedule`, which are wlc's loop.
 * Overload (`IP_VS_DEST_F_OVERLOAD`, set from upper thresholds) is never set by kube-proxy and is not modelled.
 */
import { type OrderedPicker, connOverhead, rsName } from './sched-types.ts';
import type { IpvsRealServer } from './types.ts';

type Load = (rs: IpvsRealServer) => number;

/** wlc-shaped loop: first server with weight > 0, then strictly lower load/weight (cross-multiplied). */
function weightedLeast(servers: readonly IpvsRealServer[], load: Load): number | null {
  let least = servers.findIndex(s => s.weight > 0);
  if (least < 0) return null;
  let loh = load(servers[least]!);
  for (let i = least + 1; i < servers.length; i++) {
    const d = servers[i]!;
    const doh = load(d);
    if (loh * d.weight > doh * servers[least]!.weight) {
      least = i;
      loh = doh;
    }
  }
  return least;
}

const sedLoad: Load = rs => (rs.activeConns ?? 0) + 1;

function explain(
  name: string,
  servers: readonly IpvsRealServer[],
  index: number | null,
  measure: (rs: IpvsRealServer) => string,
): { index: number | null; why: string } {
  if (index === null) return { index, why: `${name}: no real server with weight > 0: no destination available` };
  return {
    index,
    why: `${name}: ${rsName(servers[index]!)} (${measure(servers[index]!)}) is the first in list order with the best value`,
  };
}

const conns = (rs: IpvsRealServer) =>
  `active ${rs.activeConns ?? 0}, inactive ${rs.inactiveConns ?? 0}, weight ${rs.weight}`;

export const leastPickers: Readonly<Record<string, OrderedPicker>> = {
  lc: {
    summary:
      'lc (ip_vs_lc.c): the real server with the least activeconns*256 + inactconns; weight 0 is skipped; ties go to the first in the list (strict <)',
    tie: 'first-of-ties',
    pick(servers) {
      let least: number | null = null;
      servers.forEach((s, i) => {
        if (s.weight === 0) return;
        if (least === null || connOverhead(s) < connOverhead(servers[least]!)) least = i;
      });
      return explain('lc', servers, least, conns);
    },
  },
  wlc: {
    summary:
      'wlc (ip_vs_wlc.c): the real server with the least (activeconns*256 + inactconns) / weight; ties go to the first in the list (strict >)',
    tie: 'first-of-ties',
    pick: servers => explain('wlc', servers, weightedLeast(servers, connOverhead), conns),
  },
  sed: {
    summary:
      'sed (ip_vs_sed.c): the real server with the least (activeconns + 1) / weight; ties go to the first in the list',
    tie: 'first-of-ties',
    pick: servers => explain('sed', servers, weightedLeast(servers, sedLoad), conns),
  },
  nq: {
    summary: 'nq (ip_vs_nq.c): the first real server (weight > 0) with no active connection; otherwise as sed',
    tie: 'first-of-ties',
    pick(servers) {
      let least: number | null = null;
      for (let i = 0; i < servers.length; i++) {
        const d = servers[i]!;
        if (d.weight === 0) continue;
        if ((d.activeConns ?? 0) === 0) return explain('nq', servers, i, conns);
        if (least === null || sedLoad(servers[least]!) * d.weight > sedLoad(d) * servers[least]!.weight) least = i;
      }
      return explain('nq', servers, least, conns);
    },
  },
  fo: {
    summary: 'fo (ip_vs_fo.c): the real server with the highest weight; ties go to the first in the list (strict >)',
    tie: 'first-of-ties',
    pick(servers) {
      let best: number | null = null;
      servers.forEach((s, i) => {
        if (s.weight > (best === null ? 0 : servers[best]!.weight)) best = i;
      });
      return explain('fo', servers, best, rs => `weight ${rs.weight}`);
    },
  },
  ovf: {
    summary:
      'ovf (ip_vs_ovf.c): the highest-weight real server whose active connections do not exceed its weight; ties go to the first in the list',
    tie: 'first-of-ties',
    pick(servers) {
      let best: number | null = null;
      servers.forEach((s, i) => {
        if (s.weight === 0 || (s.activeConns ?? 0) > s.weight) return;
        if (best === null || s.weight > servers[best]!.weight) best = i;
      });
      return explain('ovf', servers, best, conns);
    },
  },
};

/** lblc / lblcr with an empty locality cache: `__ip_vs_lblc_schedule`, wlc's loop. */
export function localityPicker(name: 'lblc' | 'lblcr'): OrderedPicker {
  return {
    summary: `${name} (ip_vs_${name}.c): no cache entry for the destination address yet, so it picks as wlc does and caches the choice for later connections to that address`,
    tie: 'first-of-ties',
    pick: servers => explain(name, servers, weightedLeast(servers, connOverhead), conns),
  };
}
