/**
 * The packet's journey through the netfilter hooks of one node (iptables(8) "TABLES", and the priorities in
 * include/uapi/linux/netfilter_ipv4.h):
 *
 *   arriving:  PREROUTING (raw, mangle, nat) → routing → INPUT (mangle, filter, security, nat) → local
 *                                                     ↘ FORWARD (mangle, filter, security) → POSTROUTING (mangle, nat)
 *   local:     routing → OUTPUT (raw, mangle, nat, filter, security) → re-routing → POSTROUTING (mangle, nat)
 *              → out of an interface, or back in through `lo`: PREROUTING → INPUT without nat.
 *
 * nat tables run only for a connection's first packet and only until they have bound a translation for
 * the connection's direction (`nf_nat_inet_fn`): a nat table that accepts without a rule binds a null
 * mapping, so it is not consulted again for that connection.
 */
import { type Addr, type Family, formatAddr, isLoopback } from '../net/addr.ts';
import {
  type HookChain,
  type HookName,
  NAT_CORE_PRIORITY,
  type Ruleset,
  type TableKind,
  baseChainsForHook,
  chainType,
} from '../model.ts';
import { format as formatRational, isZero, mul, toNumber } from '../rational.ts';
import type { TraceEnv } from './env.ts';
import type { HookInterceptor } from './intercept.ts';
import { protoName } from '../net/proto.ts';
import type { PacketState } from '../net/packet.ts';
import { type Path, eventsOf, forkPath, newPath } from './path.ts';
import type { Disposition, PacketView, TraceOutcome } from './trace-types.ts';
import { type WalkOptions, walkTable } from './walk.ts';

export interface Ending {
  readonly path: Path;
  readonly disposition: Disposition;
  readonly reason: string | null;
  readonly rejectWith: string | null;
}

type Continue = (p: Path) => Ending[];

/** Runs after one base chain of a hook; returns a reason to drop the path, or null to go on. */
type AfterTable = (table: string, type: TableKind, p: Path) => string | null;

/**
 * One entry of a hook: a filter or route base chain, all nat-type base chains of the hook together (they
 * run inside nf_nat's one hook entry, NAT_CORE_PRIORITY), or an interceptor.
 */
type Stage =
  | { readonly kind: 'chain'; readonly chains: readonly HookChain[]; readonly priority: number }
  | { readonly kind: 'nat'; readonly chains: readonly HookChain[]; readonly priority: number }
  | { readonly kind: 'interceptor'; readonly interceptor: HookInterceptor; readonly priority: number };

/** Each trace's stages by hook and family (a trace has its own `env`; its ruleset and interceptors stay put). */
const traceStages = new WeakMap<TraceEnv, Map<string, Stage[]>>();

/**
 * The hook's entries in priority order, with the interceptors registered on it slotted in by priority;
 * worked out once per trace for each hook, not for every path that crosses it.
 */
function stagesOf(rs: Ruleset, hook: HookName, family: Family, env: TraceEnv): Stage[] {
  let byHook = traceStages.get(env);
  if (!byHook) traceStages.set(env, (byHook = new Map()));
  const key = `${hook} ${family}`;
  let stages = byHook.get(key);
  if (!stages) byHook.set(key, (stages = hookStages(rs, hook, family, env)));
  return stages;
}

function hookStages(rs: Ruleset, hook: HookName, family: Family, env: TraceEnv): Stage[] {
  const stages: Stage[] = [];
  const nat: HookChain[] = [];
  for (const hc of baseChainsForHook(rs, hook, family)) {
    if (chainType(hc.table, hc.chain) === 'nat') nat.push(hc);
    else stages.push({ kind: 'chain', chains: [hc], priority: hc.priority });
  }
  // nf_nat registers its hook entries on all four nat hooks as soon as one nat chain of the family exists
  // (`nf_nat_register_fn`): a hook without nat chains still binds a null mapping for a new connection, so a
  // packet the node sends to itself is not NATed again when it loops back through PREROUTING.
  if (nat.length || (hook !== 'FORWARD' && hasNatChain(rs, family)))
    stages.push({ kind: 'nat', chains: nat, priority: NAT_CORE_PRIORITY[hook] });
  for (const i of env.interceptors ?? [])
    if (i.hook === hook) stages.push({ kind: 'interceptor', interceptor: i, priority: i.priority });
  // Stable: at equal priority base chains keep declaration order, nat follows them, interceptors come last.
  return stages.sort((a, b) => a.priority - b.priority);
}

const natFamilies = new WeakMap<Ruleset, Set<Family>>();

function hasNatChain(rs: Ruleset, family: Family): boolean {
  let fams = natFamilies.get(rs);
  if (!fams) {
    fams = new Set();
    for (const hook of ['PREROUTING', 'INPUT', 'OUTPUT', 'POSTROUTING'] as const) {
      for (const f of [4, 6] as const)
        if (baseChainsForHook(rs, hook, f).some(hc => chainType(hc.table, hc.chain) === 'nat')) fams.add(f);
    }
    natFamilies.set(rs, fams);
  }
  return fams.has(family);
}

/** Why a nat chain does not see this packet, or null when it does (`nf_nat_inet_fn`). */
function natSkip(p: Path, hook: HookName): string | null {
  const dstHook = hook === 'PREROUTING' || hook === 'OUTPUT';
  const ct = p.pkt.ct;
  return ct.state === 'UNTRACKED'
    ? 'the packet is not tracked (NOTRACK), so it is never NATed'
    : ct.state === 'INVALID'
      ? 'conntrack marked the packet INVALID, so it is never NATed'
      : ct.state !== 'NEW'
        ? `only a connection's first packet traverses nat; this one is ${ct.state}`
        : (dstHook ? ct.dstManipDone : ct.srcManipDone)
          ? `the connection's ${dstHook ? 'destination' : 'source'} NAT is already decided`
          : null;
}

/** Whether a nat chain bound the connection's translation for this hook's direction. */
function natBound(p: Path, hook: HookName): boolean {
  const dstHook = hook === 'PREROUTING' || hook === 'OUTPUT';
  return dstHook ? p.pkt.ct.dnat !== null : p.pkt.ct.snat !== null || p.masquerade;
}

/**
 * Runs every entry of a hook, in priority order, on every path; calls `next` for the survivors. `accept`
 * ends only the base chain (the next entry runs), `drop`/`reject` end the packet. The nat entry runs its
 * chains in priority order until one binds a translation; then (or after the last) the connection's
 * translation for this direction is decided (`nf_nat_alloc_null_binding` when none bound).
 */
function runHook(
  rs: Ruleset,
  hook: HookName,
  path: Path,
  env: TraceEnv,
  opts: WalkOptions,
  next: Continue,
  afterTable?: AfterTable,
): Ending[] {
  path.events.push({ kind: 'hook', hook, iface: { in: path.pkt.inIface, out: path.pkt.outIface } });
  let live: Path[] = [path];
  const endings: Ending[] = [];
  for (const stage of stagesOf(rs, hook, path.pkt.family, env)) {
    if (stage.kind === 'interceptor') {
      live = intercept(rs, stage.interceptor, live, env, opts, endings);
      continue;
    }
    const after: Path[] = [];
    for (const p of live) {
      if (stage.kind === 'nat') {
        const skip = natSkip(p, hook);
        if (skip) {
          p.events.push({ kind: 'nat-skipped', hook, reason: skip });
          after.push(p);
          continue;
        }
      }
      let pending: Path[] = [p];
      if (stage.kind === 'nat' && stage.chains.length === 0) {
        if (hook === 'PREROUTING' || hook === 'OUTPUT') p.pkt.ct.dstManipDone = true;
        else p.pkt.ct.srcManipDone = true;
      }
      for (const { table, chain, priority } of stage.chains) {
        const accepted: Path[] = [];
        env.basePriority = priority;
        for (const q of pending) {
          for (const r of walkTable(table, chain, hook, q, env, opts)) {
            const v = r.verdict;
            const refused =
              v.kind === 'accept' && afterTable ? afterTable(table.name, chainType(table, chain), r.path) : null;
            if (refused) endings.push(...drop(r.path, refused));
            else if (v.kind === 'accept') accepted.push(r.path);
            else if (v.kind === 'drop')
              endings.push({ path: r.path, disposition: 'dropped', reason: v.reason, rejectWith: null });
            else if (v.kind === 'reject')
              endings.push({
                path: r.path,
                disposition: 'rejected',
                reason: `REJECT with ${v.with}`,
                rejectWith: v.with,
              });
            else endings.push({ path: r.path, disposition: 'unknown', reason: v.reason, rejectWith: null });
          }
        }
        if (stage.kind !== 'nat') {
          pending = accepted;
          continue;
        }
        // nat: a path whose translation is bound skips the hook's later nat chains; after the last chain the
        // translation is decided either way (a null binding when none bound).
        pending = [];
        for (const q of accepted) {
          const bound = natBound(q, hook);
          if (bound || chain === stage.chains[stage.chains.length - 1]!.chain) {
            if (hook === 'PREROUTING' || hook === 'OUTPUT') q.pkt.ct.dstManipDone = true;
            else q.pkt.ct.srcManipDone = true;
          }
          (bound ? after : pending).push(q);
        }
      }
      after.push(...pending);
    }
    live = after;
  }
  for (const p of live) endings.push(...next(p));
  return endings;
}

/**
 * One interceptor over the live paths: packets it passes stay live; packets it takes split into its
 * branches, each ending here or re-sent through LOCAL_OUT (`resend`). Returns the paths still live.
 */
function intercept(
  rs: Ruleset,
  icpt: HookInterceptor,
  live: Path[],
  env: TraceEnv,
  opts: WalkOptions,
  endings: Ending[],
): Path[] {
  const after: Path[] = [];
  for (const p of live) {
    const r = p.pkt.sentBy ? null : icpt.intercept(p.pkt);
    if (!r || r.kind === 'pass' || r.branches.length === 0) {
      if (r?.kind === 'pass' && r.note) p.events.push({ kind: 'note', text: `${icpt.name}: ${r.note}` });
      after.push(p);
      continue;
    }
    const branches = r.branches.filter(b => !isZero(b.probability));
    // Fork before touching `p`, which carries the last branch.
    const paths = branches.map((_, i) => (i === branches.length - 1 ? p : forkPath(p)));
    branches.forEach((b, i) => {
      const q = paths[i]!;
      q.prob = mul(q.prob, b.probability);
      for (const a of b.assumptions) {
        q.assumptions.push(a);
        q.events.push({ kind: 'assume', assumption: a });
      }
      for (const n of b.notes) {
        q.events.push({ kind: 'note', text: n });
        q.notes.push(n);
      }
      const a = b.action;
      if (a.kind === 'resend') {
        q.pkt.dst = a.dst;
        q.pkt.dport = a.dport;
        q.pkt.ct.dnat = { addr: a.dst, port: a.dport };
        q.pkt.sentBy = icpt.name;
        endings.push(...resend(rs, q, env, opts, icpt.hook === 'INPUT' ? 'forwarded' : 'output'));
      } else if (a.kind === 'reject')
        endings.push({ path: q, disposition: 'rejected', reason: a.reason, rejectWith: a.with });
      else if (a.kind === 'drop') endings.push({ path: q, disposition: 'dropped', reason: a.reason, rejectWith: null });
      else endings.push({ path: q, disposition: 'unknown', reason: a.reason, rejectWith: null });
    });
  }
  return after;
}

/**
 * A packet an interceptor rewrote leaves through LOCAL_OUT → routing → POSTROUTING, as IPVS's NAT
 * transmitter sends it (`ip_vs_nat_send_or_cont`: `NF_HOOK(pf, NF_INET_LOCAL_OUT, net, NULL, skb, NULL,
 * skb_dst(skb)->dev, dst_output)`): no input interface, the route to the new destination.
 */
function resend(rs: Ruleset, path: Path, env: TraceEnv, opts: WalkOptions, disposition: Disposition): Ending[] {
  const pkt = path.pkt;
  pkt.inIface = null;
  pkt.outIface = env.node.routeOut(pkt.dst);
  path.rerouted = null;
  path.events.push({
    kind: 'routing',
    decision: 'output',
    iface: pkt.outIface,
    reason: `${pkt.sentBy ?? 'an interceptor'} sends the packet on to ${env.node.show(pkt.dst)} through LOCAL_OUT: leaves by ${pkt.outIface}`,
  });
  return runHook(rs, 'OUTPUT', path, env, opts, p =>
    runHook(rs, 'POSTROUTING', p, env, opts, q => leave(rs, q, env, opts, disposition)),
  );
}

/** After POSTROUTING: out of the interface, or back in through `lo` when the destination is the node's. */
function leave(rs: Ruleset, q: Path, env: TraceEnv, opts: WalkOptions, disposition: Disposition): Ending[] {
  q.pkt.ct.status.add('CONFIRMED');
  if (q.pkt.outIface !== 'lo') return [{ path: q, disposition, reason: null, rejectWith: null }];
  // Sent to the node itself: the packet comes back in through lo.
  q.events.push({
    kind: 'routing',
    decision: 'loopback',
    iface: 'lo',
    reason: `${env.node.show(q.pkt.dst)} is local: the packet loops back through lo`,
  });
  q.pkt.inIface = 'lo';
  q.pkt.outIface = null;
  return runHook(rs, 'PREROUTING', q, env, opts, r => routeInput(rs, r, env, opts));
}

/** 224.0.0.1 / ff02::1, which every host's interfaces join (ip_route_input_mc, `ip_check_mc_rcu`). */
function isAllHosts(a: Addr): boolean {
  return a.v === 4 ? a.n === 0xe0000001 : a.n === 0xff020000000000000000000000000001n;
}

function drop(path: Path, reason: string): Ending[] {
  path.events.push({ kind: 'routing', decision: 'drop', iface: null, reason });
  return [{ path, disposition: 'dropped', reason, rejectWith: null }];
}

/** The input routing decision (`ip_route_input_slow`): martians, local delivery, forwarding. */
function routeInput(rs: Ruleset, path: Path, env: TraceEnv, opts: WalkOptions): Ending[] {
  const pkt = path.pkt;
  const node = env.node;
  const onLo = pkt.inIface === 'lo';
  if (pkt.family === 4 && !onLo && !node.routeLocalnet) {
    if (isLoopback(pkt.src))
      return drop(
        path,
        `martian source ${env.node.show(pkt.src)} on ${pkt.inIface}: 127.0.0.0/8 is only valid on lo unless route_localnet=1`,
      );
    if (isLoopback(pkt.dst))
      return drop(
        path,
        `martian destination ${env.node.show(pkt.dst)} on ${pkt.inIface}: 127.0.0.0/8 is only routed on lo unless route_localnet=1`,
      );
  }
  // fib_validate_source: a packet arriving from outside with one of the node's own addresses as its
  // source is a martian (accept_local is 0 by default).
  if (!onLo && node.isLocal(pkt.src) && !isLoopback(pkt.src)) {
    return drop(
      path,
      `martian source ${env.node.show(pkt.src)} on ${pkt.inIface}: a packet from outside cannot carry the node's own address (accept_local=0); use --from local for packets the node sends`,
    );
  }
  // The node's own tables, when its files are given: no route, blackhole/unreachable, rp_filter (node.ts).
  const refused = node.inputRefused(pkt);
  if (refused) return drop(path, refused);
  const t = node.addrType(pkt.dst);
  if (t === 'MULTICAST' && !isAllHosts(pkt.dst)) {
    return drop(
      path,
      `${env.node.show(pkt.dst)} is a multicast group the node is not known to have joined (memberships are not in the dump; only the all-hosts group is assumed) and multicast routing is off`,
    );
  }
  if (node.isLocal(pkt.dst) || t === 'BROADCAST' || t === 'MULTICAST') {
    path.events.push({
      kind: 'routing',
      decision: 'local',
      iface: null,
      reason: `${env.node.show(pkt.dst)} is ${t === 'LOCAL' ? "one of the node's addresses" : `a ${t.toLowerCase()} address`}: deliver locally`,
    });
    return runHook(rs, 'INPUT', path, env, opts, p => {
      p.pkt.ct.status.add('CONFIRMED');
      return [{ path: p, disposition: 'local', reason: null, rejectWith: null }];
    });
  }
  if (!node.ipForward) return drop(path, `${env.node.show(pkt.dst)} is not local and forwarding is off (ip_forward=0)`);
  pkt.outIface = node.routeOut(pkt.dst, pkt);
  path.events.push({
    kind: 'routing',
    decision: 'forward',
    iface: pkt.outIface,
    reason: `${env.node.show(pkt.dst)} is not local: forward out of ${pkt.outIface}`,
  });
  return runHook(rs, 'FORWARD', path, env, opts, p => {
    p.pkt.inIface = null;
    return runHook(rs, 'POSTROUTING', p, env, opts, q => {
      q.pkt.ct.status.add('CONFIRMED');
      return [{ path: q, disposition: 'forwarded', reason: null, rejectWith: null }];
    });
  });
}

/** Traces a packet arriving on `inIface`. */
export function traceArriving(
  rs: Ruleset,
  pkt: PacketState,
  inIface: string,
  env: TraceEnv,
  opts: WalkOptions,
): Ending[] {
  pkt.inIface = inIface;
  pkt.outIface = null;
  const path = newPath(pkt, opts.events);
  return runHook(rs, 'PREROUTING', path, env, opts, p => routeInput(rs, p, env, opts));
}

/**
 * `__mkroute_output`: a 127.0.0.0/8 source may only leave by loopback unless route_localnet is set; the
 * route lookup fails (EINVAL) and the packet is dropped.
 */
function loopbackSourceRefused(pkt: PacketState, out: string, env: TraceEnv): string | null {
  if (pkt.family !== 4 || !isLoopback(pkt.src) || out === 'lo' || env.node.routeLocalnet) return null;
  return `no route: source ${env.node.show(pkt.src)} cannot leave by ${out} (127.0.0.0/8 stays on lo unless route_localnet=1; EINVAL)`;
}

/** Traces a packet a process on the node sends. */
export function traceLocal(rs: Ruleset, pkt: PacketState, env: TraceEnv, opts: WalkOptions): Ending[] {
  pkt.inIface = null;
  pkt.outIface = env.node.routeOut(pkt.dst, pkt);
  const path = newPath(pkt, opts.events);
  const refused = loopbackSourceRefused(pkt, pkt.outIface, env) ?? env.node.outputRefused(pkt);
  if (refused) return drop(path, refused);
  path.events.push({
    kind: 'routing',
    decision: 'output',
    iface: pkt.outIface,
    reason: `route to ${env.node.show(pkt.dst)} leaves by ${pkt.outIface}`,
  });
  // ip_route_me_harder runs right after the nat (and mangle) OUTPUT tables when they changed the packet
  // (`nf_nat_ipv4_local_fn`, `ipt_mangle_out`): later OUTPUT tables already see the new route.
  // nftables: route-type output chains (nft_chain_route.c `nf_route_table_hook4`) and nat chains.
  const reroute: AfterTable = (table, type, p) => {
    if (type !== 'nat' && type !== 'route') return null;
    const out = env.node.routeOut(p.pkt.dst, p.pkt);
    if (out === (p.rerouted ?? p.pkt.outIface)) return null;
    const refusedAgain = loopbackSourceRefused(p.pkt, out, env);
    if (refusedAgain) return refusedAgain;
    p.events.push({
      kind: 'routing',
      decision: 'output',
      iface: out,
      reason: `re-routed after ${table} OUTPUT changed the destination to ${env.node.show(p.pkt.dst)}: leaves by ${out}`,
    });
    p.rerouted = out;
    return null;
  };
  return runHook(
    rs,
    'OUTPUT',
    path,
    env,
    opts,
    p => {
      if (p.rerouted !== null) {
        p.pkt.outIface = p.rerouted;
        p.rerouted = null;
      }
      return runHook(rs, 'POSTROUTING', p, env, opts, q => leave(rs, q, env, opts, 'output'));
    },
    reroute,
  );
}

/** How an address reads in the trace (NodeModel.show: the symbolic node address by its label). */
export type ShowAddr = (a: Addr) => string;

export function viewPacket(pkt: PacketState, show: ShowAddr = formatAddr): PacketView {
  return {
    family: pkt.family,
    protocol: protoName(pkt.proto),
    src: show(pkt.src),
    sport: pkt.sport,
    dst: show(pkt.dst),
    dport: pkt.dport,
    in: pkt.inIface,
    out: pkt.outIface,
    mark: `0x${pkt.mark.toString(16)}`,
    ctmark: `0x${pkt.ct.mark.toString(16)}`,
    ctstate: pkt.ct.state,
  };
}

function hostPort(a: Addr, port: number | null, show: ShowAddr): string {
  const s = show(a);
  if (port === null) return s;
  return a.v === 6 ? `[${s}]:${port}` : `${s}:${port}`;
}

/**
 * The outcome of one ending. Without `probabilities` its two probability fields are left 0 and '' (they
 * keep their place in the object): `mergeEndings` writes them from the merged sum.
 */
export function toOutcome(
  e: Ending,
  show: ShowAddr = formatAddr,
  probabilities = true,
  /** The why-not record as `missesGrouped` (and `misses` empty) rather than as the full list. */
  grouped = false,
): Omit<TraceOutcome, 'paths'> {
  const p = e.path;
  const ct = p.pkt.ct;
  return {
    probability: probabilities ? toNumber(p.prob) : 0,
    probabilityExact: probabilities ? formatRational(p.prob) : '',
    disposition: e.disposition,
    packet: viewPacket(p.pkt, show),
    dnat: ct.dnat ? hostPort(ct.dnat.addr, ct.dnat.port, show) : null,
    snat: ct.snat ? show(ct.snat.addr) : null,
    masquerade: p.masquerade,
    rejectWith: e.rejectWith,
    reason: e.reason,
    steps: p.steps,
    misses: grouped ? [] : p.misses.list(),
    ...(grouped ? { missesGrouped: p.misses.grouped() } : {}),
    assumptions: p.assumptions,
    events: eventsOf(p.events),
    notes: p.notes,
  };
}
