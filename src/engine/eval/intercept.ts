/**
 * Hook interceptors: packet handlers registered on a netfilter hook at a priority, beside the iptables
 * tables. The kernel runs every hook function of a hook in priority order (`nf_hook_slow`), so a module
 * such as IPVS sits between tables: it registers `ip_vs_in_hook` on LOCAL_IN at NF_IP_PRI_NAT_SRC - 1
 * (after filter INPUT at 0, before nat INPUT at 100) and on LOCAL_OUT at NF_IP_PRI_NAT_DST + 2
 * (net/netfilter/ipvs/ip_vs_core.c `ip_vs_ops4`).
 *
 * The evaluator knows nothing of what an interceptor does; it asks it about each live path's packet and
 * applies the answer: let the packet go on (`pass`), or take it, splitting the path into branches with
 * exact probabilities and, where the interceptor cannot decide, stated assumptions. A taken packet ends
 * in one of these ways:
 *  - `resend`: its destination is rewritten and it is sent out again through LOCAL_OUT → routing →
 *    POSTROUTING, as IPVS's NAT transmitter does (ip_vs_xmit.c `ip_vs_nat_send_or_cont`:
 *    `NF_HOOK(pf, NF_INET_LOCAL_OUT, …, dst_output)`), marked so that no interceptor takes it again
 *    (`skb->ipvs_property`);
 *  - `reject`, `drop`, `unknown`: the path ends there.
 * With no interceptors in the options the evaluator's behaviour is unchanged.
 */
import type { Addr } from '../net/addr.ts';
import type { Rational } from '../rational.ts';
import type { PacketState } from '../net/packet.ts';
import type { TraceAssumption } from './trace-types.ts';

export type InterceptAction =
  | { readonly kind: 'resend'; readonly dst: Addr; readonly dport: number | null }
  | { readonly kind: 'reject'; readonly with: string; readonly reason: string }
  | { readonly kind: 'drop'; readonly reason: string }
  | { readonly kind: 'unknown'; readonly reason: string };

export interface InterceptBranch {
  /** Probability of this branch given the path (the branches of one answer add up to 1 per assumption set). */
  readonly probability: Rational;
  /** Undecidable state this branch assumes, in the trace's assumption form (see trace.ts `probabilitySums`). */
  readonly assumptions: readonly TraceAssumption[];
  /** The narrative of the decision, added to the path's events and notes. */
  readonly notes: readonly string[];
  readonly action: InterceptAction;
}

export type InterceptResult =
  | { readonly kind: 'pass'; readonly note: string | null }
  | { readonly kind: 'take'; readonly branches: readonly InterceptBranch[] };

export interface HookInterceptor {
  /** Named in events and notes (`IPVS`). */
  readonly name: string;
  /** The hooks with a packet handler here: INPUT (LOCAL_IN) and OUTPUT (LOCAL_OUT). */
  readonly hook: 'INPUT' | 'OUTPUT';
  /** Netfilter priority; runs after the tables with a lower one and before the others. */
  readonly priority: number;
  intercept(pkt: Readonly<PacketState>): InterceptResult;
}
