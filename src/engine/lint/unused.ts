/**
 * User chains no rule jumps or goes to: their rules never run. Some chains are unreferenced on purpose
 * and are not reported: kube-proxy's and the kubelet's KUBE-PROXY-CANARY / KUBE-KUBELET-CANARY, which
 * notice when someone flushes their tables (kubernetes pkg/util/iptables/monitor.go, `Monitor`), and the
 * kubelet's KUBE-IPTABLES-HINT, which tells iptables wrappers which back end the host uses
 * (pkg/kubelet/kubelet_network_linux.go).
 */
import type { Chain, Table } from '../model.ts';
import type { ChainReference } from './refs.ts';

const CANARY = /^KUBE-([A-Z-]*CANARY|IPTABLES-HINT)$/;

export function unusedChains(table: Table, refs: ReadonlyMap<string, readonly ChainReference[]>): Chain[] {
  const out: Chain[] = [];
  for (const chain of table.chains.values()) {
    if (chain.builtin || CANARY.test(chain.name)) continue;
    if (!refs.get(chain.name)?.length) out.push(chain);
  }
  return out;
}
