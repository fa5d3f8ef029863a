/**
 * IPVS as hook interceptors for the evaluator (eval/intercept.ts): `ip_vs_in_hook` on LOCAL_IN at
 * NF_IP_PRI_NAT_SRC - 1 = 99 (after filter INPUT, before nat INPUT) for packets from other hosts, and on
 * LOCAL_OUT at NF_IP_PRI_NAT_DST + 2 = -98 (after nat OUTPUT, before filter OUTPUT) for the node's own
 * (net/netfilter/ipvs/ip_vs_core.c `ip_vs_ops4`). For a packet of a new connection to a virtual service it
 * schedules a real server (schedule.ts) and, for masquerading (kube-proxy's only forwarding method),
 * rewrites the destination and sends the packet on through LOCAL_OUT (ip_vs_xmit.c `ip_vs_nat_xmit`).
 *  - The service is found as `ip_vs_service_find` does: a fwmark service for the packet's mark first, then
 *    protocol + address + port, then the address with port 0.
 *  - Only a connection's first packet is scheduled: a TCP SYN (ip_vs_proto_tcp.c `tcp_conn_schedule`), an
 *    SCTP INIT, any UDP datagram; other packets without an IPVS connection continue as normal.
 *  - No real server available: ICMP port unreachable (`ip_vs_leave`).
 *  - A packet that is not new belongs to an IPVS connection entry the files do not show: unknown.
 */
import type { HookInterceptor, InterceptBranch, InterceptResult } from '../eval/intercept.ts';
import type { PacketState } from '../net/packet.ts';
import type { TraceAssumption } from '../eval/trace-types.ts';
import { formatAddr, parseAddr } from '../net/addr.ts';
import { ONE } from '../rational.ts';
import { scheduleNewConnection } from './schedule.ts';
import { rsName } from './sched-types.ts';
import { type IpvsProtocol, type IpvsService, type IpvsTable, type RealServerOrder, serviceKey } from './types.ts';

export interface IpvsTraceOptions {
  /** Overrides the table's own knowledge of the real-server list order. */
  readonly order?: RealServerOrder;
  readonly localityCache?: 'empty' | 'unknown';
}

const PROTOCOLS: Readonly<Record<number, IpvsProtocol>> = { 6: 'TCP', 17: 'UDP', 132: 'SCTP' };
const HOOK_NAME = { INPUT: 'LOCAL_IN', OUTPUT: 'LOCAL_OUT' } as const;

class ServiceIndex {
  private readonly byAddr = new Map<string, IpvsService>();
  private readonly byMark = new Map<number, IpvsService[]>();
  readonly vips = new Set<string>();

  constructor(table: IpvsTable) {
    for (const s of table.services) {
      if (s.fwmark) {
        const list = this.byMark.get(s.fwmark) ?? [];
        list.push(s);
        this.byMark.set(s.fwmark, list);
        continue;
      }
      const a = parseAddr(s.addr);
      if (!a) continue;
      this.byAddr.set(`${s.protocol}|${formatAddr(a)}|${s.port}`, s);
      this.vips.add(formatAddr(a));
    }
  }

  find(pkt: Readonly<PacketState>, protocol: IpvsProtocol): IpvsService | null {
    // fwmark services match the mark and the address family (`__ip_vs_svc_fwm_find`).
    const marked = pkt.mark
      ? this.byMark.get(pkt.mark)?.find(s => (s.addr.includes(':') ? 6 : 4) === pkt.family || s.addr === '')
      : undefined;
    if (marked) return marked;
    const dst = formatAddr(pkt.dst);
    return this.byAddr.get(`${protocol}|${dst}|${pkt.dport ?? 0}`) ?? this.byAddr.get(`${protocol}|${dst}|0`) ?? null;
  }
}

/** Why a packet to a service is not scheduled, or null when it starts a connection IPVS schedules. */
function notFirstPacket(pkt: Readonly<PacketState>, protocol: IpvsProtocol): string | null {
  if (protocol === 'TCP' && pkt.tcpFlags !== null && (pkt.tcpFlags & 0x16) !== 0x02) {
    return 'IPVS schedules a TCP connection on its SYN only (ip_vs_proto_tcp.c tcp_conn_schedule, sloppy_tcp=0); this packet has no IPVS connection entry and continues as normal';
  }
  if (protocol === 'SCTP' && pkt.sctpChunk !== null && pkt.sctpChunk !== 1) {
    return 'IPVS schedules an SCTP association on its INIT chunk only (ip_vs_proto_sctp.c sctp_conn_schedule); this packet continues as normal';
  }
  return null;
}

function worldAssumptions(key: string, conditions: readonly (string | null)[], i: number): TraceAssumption[] {
  const out: TraceAssumption[] = [];
  // An if/else chain over the worlds: world i assumes the earlier conditions false and its own true;
  // the last world is what remains. For every truth assignment exactly one world holds (trace.ts probabilitySums).
  for (let j = 0; j < i; j++)
    out.push({
      table: 'ipvs',
      chain: key,
      rule: j + 1,
      line: 0,
      assumed: 'does not match',
      reason: conditions[j] ?? '',
    });
  if (i < conditions.length - 1)
    out.push({ table: 'ipvs', chain: key, rule: i + 1, line: 0, assumed: 'matches', reason: conditions[i] ?? '' });
  return out;
}

function decide(
  svc: IpvsService,
  pkt: Readonly<PacketState>,
  where: string,
  opts: IpvsTraceOptions,
  order: RealServerOrder,
): InterceptBranch[] {
  const key = serviceKey(svc);
  const head = `IPVS ${key} (${where})`;
  const r = scheduleNewConnection({
    service: svc,
    client: { src: pkt.src, sport: pkt.sport, dst: pkt.dst, dport: pkt.dport },
    order,
    localityCache: opts.localityCache ?? 'unknown',
  });
  if (r.kind === 'unknown')
    return [
      {
        probability: ONE,
        assumptions: [],
        notes: [`${head}: ${r.reason}`],
        action: { kind: 'unknown', reason: `${head}: ${r.reason}` },
      },
    ];
  const persist =
    svc.persistent !== null
      ? [
          `${head} is persistent (${svc.persistent} s): assuming this client has no connection template yet; once scheduled, its later connections within ${svc.persistent} s go to the same real server (ip_vs_core.c ip_vs_sched_persist)`,
        ]
      : [];
  const conditions = r.worlds.map(w => w.condition);
  const branches: InterceptBranch[] = [];
  r.worlds.forEach((w, i) => {
    const assumptions = r.worlds.length > 1 ? worldAssumptions(key, conditions, i) : [];
    for (const p of w.picks) {
      const notes = [`${head}: ${r.summary}`, ...r.assumptions.map(a => `${head}: assumption: ${a}`), ...persist];
      if (!p.server) {
        const reason = `${head}: ${p.why}: IPVS answers ICMP port unreachable (ip_vs_core.c ip_vs_leave)`;
        branches.push({
          probability: p.probability,
          assumptions,
          notes: [...notes, reason],
          action: {
            kind: 'reject',
            with: pkt.family === 4 ? 'icmp-port-unreachable' : 'icmp6-port-unreachable',
            reason,
          },
        });
        continue;
      }
      const chosen = `${head}: ${p.why} → ${rsName(p.server)} (probability ${p.probability.den === 1n ? p.probability.num : `${p.probability.num}/${p.probability.den}`})`;
      const dst = parseAddr(p.server.addr);
      if (p.server.forward !== 'Masq' || !dst) {
        const reason = `${head}: forwarding method ${p.server.forward} to ${rsName(p.server)} is not modelled (kube-proxy uses Masq)`;
        branches.push({
          probability: p.probability,
          assumptions,
          notes: [...notes, chosen],
          action: { kind: 'unknown', reason },
        });
        continue;
      }
      branches.push({
        probability: p.probability,
        assumptions,
        notes: [...notes, chosen],
        action: { kind: 'resend', dst, dport: p.server.port },
      });
    }
  });
  return branches;
}

export function ipvsInterceptors(table: IpvsTable, opts: IpvsTraceOptions = {}): HookInterceptor[] {
  const index = new ServiceIndex(table);
  const order = opts.order ?? table.order;
  const make = (hook: 'INPUT' | 'OUTPUT', priority: number): HookInterceptor => ({
    name: 'IPVS',
    hook,
    priority,
    intercept(pkt): InterceptResult {
      const protocol = PROTOCOLS[pkt.proto];
      if (!protocol) {
        const vip = index.vips.has(formatAddr(pkt.dst));
        return {
          kind: 'pass',
          note: vip
            ? `IPVS handles TCP, UDP and SCTP; this ${pkt.proto === 1 ? 'ICMP' : 'non-TCP/UDP/SCTP'} packet to a virtual address is not scheduled and continues as normal`
            : null,
        };
      }
      const svc = index.find(pkt, protocol);
      if (!svc) return { kind: 'pass', note: null };
      const where = `${HOOK_NAME[hook]}, priority ${priority}`;
      if (pkt.ct.state !== 'NEW') {
        const reason = `IPVS ${serviceKey(svc)} (${where}): a packet that is not a connection's first follows its IPVS connection entry, which is kernel state: not modelled`;
        return {
          kind: 'take',
          branches: [{ probability: ONE, assumptions: [], notes: [reason], action: { kind: 'unknown', reason } }],
        };
      }
      const skip = notFirstPacket(pkt, protocol);
      if (skip) return { kind: 'pass', note: skip };
      return { kind: 'take', branches: decide(svc, pkt, where, opts, order) };
    },
  });
  // NF_IP_PRI_NAT_SRC - 1 and NF_IP_PRI_NAT_DST + 2 (include/uapi/linux/netfilter_ipv4.h: NAT_SRC 100, NAT_DST -100).
  return [make('INPUT', 99), make('OUTPUT', -98)];
}
