/**
 * Which real server an IPVS virtual service gives a new connection, with exact probabilities, following the
 * kernel's schedulers (net/netfilter/ipvs/ip_vs_*.c; see each sched-*.ts). What the files cannot show is
 * stated, never guessed:
 *  - the rotation position of rr/wrr: assumed uniform, so the answer is a distribution (sched-rotation.ts);
 *  - connection counts (lc, wlc, sed, nq, ovf, lblc, lblcr): taken from an `ipvsadm -Ln` listing when it has
 *    them, else assumed 0;
 *  - the order of the kernel's real-server list, which decides ties (lc-like schedulers) and the bucket
 *    layout (sh, dh, mh): when unknown, each real server the order could select becomes a *world* with that
 *    condition (the trace turns it into a stated assumption); when every order gives the same server, the
 *    answer is that server.
 */
import { ONE } from '../rational.ts';
import { dhBucket, dhPicker, shBucket, shPicker } from './sched-hash.ts';
import { leastPickers, localityPicker } from './sched-least.ts';
import { mhPicker } from './sched-mh.ts';
import { rotation } from './sched-rotation.ts';
import {
  type OrderedPicker,
  type ScheduleRequest,
  type ScheduleResult,
  type ScheduleWorld,
  rsName,
} from './sched-types.ts';
import type { IpvsRealServer } from './types.ts';

/** The schedulers of net/netfilter/ipvs (Linux 6.x). */
export const IPVS_SCHEDULERS = [
  'rr',
  'wrr',
  'lc',
  'wlc',
  'lblc',
  'lblcr',
  'dh',
  'sh',
  'sed',
  'nq',
  'fo',
  'ovf',
  'mh',
  'twos',
] as const;

const USES_COUNTS = new Set(['lc', 'wlc', 'sed', 'nq', 'ovf', 'lblc', 'lblcr']);
/** Permutations tried when the list order is unknown (n! tables each). */
const ENUMERATE_UP_TO: Readonly<Record<string, number>> = { sh: 7, dh: 7, mh: 5 };

export const ORDER_UNKNOWN_NOTE =
  "the order of the kernel's real-server list is not known: kube-proxy adds real servers in Go map order and the kernel inserts each at the head of the list (ip_vs_ctl.c __ip_vs_update_dest), and ipvsadm sorts its listing unless run with --nosort";

function pickerFor(req: ScheduleRequest): OrderedPicker | string {
  const name = req.service.scheduler;
  if (name === 'sh') return shPicker;
  if (name === 'dh') return dhPicker;
  if (name === 'mh') return mhPicker;
  if (name === 'lblc' || name === 'lblcr') {
    if (req.localityCache === 'empty') return localityPicker(name);
    return `${name} (ip_vs_${name}.c) sends a connection to the real server it cached for the destination address ${req.service.addr} on an earlier connection, while that server is not overloaded; the cache is kernel state: assume an empty cache to see the choice of a first connection`;
  }
  if (name === 'twos')
    return 'twos (ip_vs_twos.c) draws two real servers at random, weighted, and takes the less loaded: not modelled';
  const p = leastPickers[name];
  if (p) return p;
  return `'${name}' is not a scheduler of net/netfilter/ipvs (${IPVS_SCHEDULERS.join(', ')})`;
}

export function scheduleNewConnection(req: ScheduleRequest): ScheduleResult {
  const svc = req.service;
  const name = svc.scheduler;
  const servers = svc.realServers;
  if (name === 'rr' || name === 'wrr') {
    const r = rotation(name, servers);
    return {
      kind: 'decided',
      scheduler: name,
      summary: r.summary,
      worlds: [{ condition: null, picks: r.picks }],
      assumptions: [r.assumption],
    };
  }
  const picker = pickerFor(req);
  if (typeof picker === 'string') return { kind: 'unknown', scheduler: name, reason: picker };
  const assumptions: string[] = [];
  if (name === 'lblc' || name === 'lblcr')
    assumptions.push(
      `no locality-cache entry for ${svc.addr} yet (the first connection to it): later connections to it follow the cached choice`,
    );
  if (USES_COUNTS.has(name) && servers.some(s => s.activeConns === null || s.inactiveConns === null)) {
    assumptions.push(
      'connection counts are not in these files: every real server is assumed to have 0 active and 0 inactive connections (an ipvsadm -Ln listing gives the real counts)',
    );
  }
  // One world, one pick: the scheduler's choice does not depend on anything these files leave open.
  const certain = (server: IpvsRealServer | null, why: string): ScheduleResult => ({
    kind: 'decided',
    scheduler: name,
    summary: picker.summary,
    assumptions,
    worlds: [{ condition: null, picks: [{ server, probability: ONE, why }] }],
  });
  if (servers.length === 0) {
    return certain(null, `${name}: the virtual service has no real servers`);
  }
  if (req.order === 'kernel') {
    const r = picker.pick(servers, req);
    return certain(r.index === null ? null : servers[r.index]!, r.why);
  }
  const outcomes =
    picker.tie === 'first-of-ties' ? firstOfTies(picker, servers, req) : hashOutcomes(picker, servers, req);
  if (outcomes === null) {
    return {
      kind: 'unknown',
      scheduler: name,
      reason: `${name} with ${servers.length} real servers of unequal weight: which one a client gets depends on the list order, and ${servers.length}! orders are too many to try; ${ORDER_UNKNOWN_NOTE}`,
    };
  }
  if (outcomes.length === 1) {
    const o = outcomes[0]!;
    return certain(o.server, `${o.why}; the same whatever the real-server list order`);
  }
  const worlds: ScheduleWorld[] = outcomes.map(o => ({
    condition: o.server
      ? `${rsName(o.server)} is the one the kernel's real-server list order selects (${picker.tie === 'first-of-ties' ? 'it comes first among the real servers tied for the best value' : 'it sits where the hash lands'}); ${ORDER_UNKNOWN_NOTE}`
      : `the list order puts a real server with weight 0 where the hash lands; ${ORDER_UNKNOWN_NOTE}`,
    picks: [{ server: o.server, probability: ONE, why: o.why }],
  }));
  return { kind: 'decided', scheduler: name, summary: picker.summary, assumptions, worlds };
}

interface Outcome {
  readonly server: IpvsRealServer | null;
  readonly why: string;
}

/**
 * For schedulers that keep the first best server in list order, a server can be chosen in some order
 * exactly when it is chosen with itself first, so n picks decide the candidates.
 */
function firstOfTies(picker: OrderedPicker, servers: readonly IpvsRealServer[], req: ScheduleRequest): Outcome[] {
  const out: Outcome[] = [];
  for (let i = 0; i < servers.length; i++) {
    const order = [servers[i]!, ...servers.filter((_, j) => j !== i)];
    const r = picker.pick(order, req);
    if (r.index === null) return [{ server: null, why: r.why }];
    if (r.index === 0) out.push({ server: servers[i]!, why: r.why });
  }
  return out;
}

function* permutations<T>(items: readonly T[]): Generator<T[]> {
  if (items.length <= 1) {
    yield [...items];
    return;
  }
  for (let i = 0; i < items.length; i++) {
    const rest = items.filter((_, j) => j !== i);
    for (const p of permutations(rest)) yield [items[i]!, ...p];
  }
}

/** sh, dh, mh: try every order (small n) and collect the servers the lookup can land on. */
function hashOutcomes(
  picker: OrderedPicker,
  servers: readonly IpvsRealServer[],
  req: ScheduleRequest,
): Outcome[] | null {
  const name = req.service.scheduler;
  const equal = servers.every(s => s.weight === servers[0]!.weight && s.weight > 0);
  if (servers.length > (ENUMERATE_UP_TO[name] ?? 0)) {
    if (!equal || name === 'mh') return null;
    // With equal weights the bucket holds a fixed list position, and any server can be at any position.
    const bucket = name === 'sh' ? shBucket(req) : dhBucket(req);
    const pos = (name === 'sh' ? Math.floor(bucket / servers[0]!.weight) : bucket) % servers.length;
    return servers.map(s => ({
      server: s,
      why: `${name}: the client hashes to bucket ${bucket}, which holds list position ${pos + 1} of ${servers.length} (equal weights): ${rsName(s)} when the list order puts it there`,
    }));
  }
  const seen = new Map<IpvsRealServer | null, string>();
  for (const order of permutations(servers)) {
    const r = picker.pick(order, req);
    const s = r.index === null ? null : order[r.index]!;
    if (!seen.has(s)) seen.set(s, r.why);
  }
  const ordered = [...servers.filter(s => seen.has(s)), ...(seen.has(null) ? [null] : [])];
  return ordered.map(s => ({ server: s, why: seen.get(s)! }));
}
