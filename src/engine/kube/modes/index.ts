/**
 * The kube-proxy modes packetlens models. A new mode is a folder beside this file implementing
 * `ProxyMode` (types.ts) and one line in `MODES`.
 */
import type { CostRule } from '../model/budget.ts';
import type { ProxyMode, ProxyModeName } from './types.ts';
import { iptablesMode } from './iptables/mode.ts';
import { ipvsMode } from './ipvs/mode.ts';
import { nftablesMode } from './nftables/mode.ts';

const MODES: readonly ProxyMode[] = [iptablesMode, ipvsMode, nftablesMode];

export const PROXY_MODES: readonly ProxyMode[] = MODES;
export const PROXY_MODE_NAMES: readonly string[] = MODES.map(m => m.name);

/** The mode named `name`, or undefined for a mode packetlens does not model. */
export function proxyMode(name: string): ProxyMode | undefined {
  return MODES.find(m => m.name === name);
}

/** The mode the model's kube-proxy runs in, or iptables (kube-proxy's default) with `unmodelled` set. */
export function configuredMode(name: ProxyModeName): { mode: ProxyMode; unmodelled: ProxyModeName | null } {
  const m = proxyMode(name);
  return m ? { mode: m, unmodelled: null } : { mode: iptablesMode, unmodelled: name };
}

/**
 * What the cluster model's budget counts (`BuildOptions.cost`): the growth of `chosen`'s rules (`--mode`, the
 * editor's setting), else of the mode the manifests configure.
 */
export function modelCost(chosen?: ProxyModeName): (configured: ProxyModeName) => CostRule {
  return configured => configuredMode(chosen ?? configured).mode.cost;
}

export type { ProxyMode, ProxyModeName } from './types.ts';
export { KUBE_PROXY_MODE_NAMES } from './types.ts';
