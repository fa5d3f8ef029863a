/**
 * The shares of a Service port's ClusterIP traffic, as a hover states them: an end-to-end trace of a
 * process on the first worker node connecting to the ClusterIP (either kube-proxy mode), else the
 * `-m statistic` rules of the port's KUBE-SVC chain (no node to trace on).
 */
import type { ServicePortInfo } from '../../engine/api.ts';
import type { ClusterView } from './cluster.ts';
import { clusterIPProbe } from './probe.ts';
import { type Share, sharesOfTrace, svcChainShares, traceProbe } from './shares.ts';

export interface ClusterShares {
  readonly shares: readonly Share[];
  /** How they were found: `a process on myk8s-worker connecting to 10.200.1.11:80`. */
  readonly how: string;
}

export function clusterShares(view: ClusterView, sp: ServicePortInfo): ClusterShares | null {
  const probe = clusterIPProbe(view, sp);
  if (probe) {
    const r = traceProbe(view, probe);
    if (r.ok)
      return {
        shares: sharesOfTrace(r, sp.namespace),
        how: `traced: a process on ${r.value.node} connecting to ${probe.target}`,
      };
  }
  const shares = svcChainShares(view, sp);
  return shares ? { shares, how: 'from the `-m statistic` rules of its KUBE-SVC chain' } : null;
}
