/**
 * The extension's settings as plain values: the node a dump runs on (its addresses, uplink, interfaces,
 * routes, route_localnet), kube-proxy's mode and version, and the size limits. Values come from the user's
 * settings.json, so each one is checked and a wrong one is reported instead of used.
 */
import { type NodeConfig, parseAddr, parseNet } from '../engine/api.ts';

export interface Limits {
  /** Files above this are not read (MB). */
  readonly maxFileSizeMB: number;
  /** Rule-option validation and the linter run up to this many rules. */
  readonly fullCheckMaxRules: number;
  readonly maxDiagnostics: number;
  /** CodeLens above chains are shown up to this many chains. */
  readonly chainLensMaxChains: number;
  /** Kubernetes YAML files read at most for one cluster's manifests. */
  readonly maxManifestFiles: number;
  /** A comparison of two dumps runs at most this long in its worker (seconds). */
  readonly compareTimeoutSeconds: number;
  /** Each engine worker's heap limit, and what the open dumps' parses may hold together (MB). */
  readonly engineMemoryMB: number;
}

/** The engine workers' heap limit by default: as the CLI's (src/cli/cli.ts), see the README's memory section. */
export const DEFAULT_HEAP_MB = 768;

export interface Settings {
  readonly node: NodeConfig;
  /**
   * The node's own files (`ip -j addr`, `ip -j route`, `ip -j rule`, `sysctl -a` outputs, or folders holding
   * them), relative to the dump's workspace folder; empty: the files beside the dump are looked at.
   */
  readonly nodeContextFiles: readonly string[];
  readonly problems: readonly string[];
  /** `auto`: the mode the manifests configure (KubeProxyConfiguration, kind's kubeProxyMode). */
  readonly kubeProxy: { readonly mode: 'auto' | 'iptables' | 'ipvs' | 'nftables'; readonly version: string };
  /**
   * Which YAML files make up one cluster: `folder` — the document's folder and its subfolders, widened to
   * parent folders that hold manifests themselves; `workspace` — every YAML file of the workspace folder.
   */
  readonly manifestScope: 'folder' | 'workspace';
  readonly limits: Limits;
  readonly openDiagram: boolean;
  readonly chainLenses: boolean;
  /** CodeLens above each Service port in Kubernetes manifests. */
  readonly serviceLenses: boolean;
}

export const DEFAULT_LIMITS: Limits = {
  maxFileSizeMB: 128,
  fullCheckMaxRules: 400_000,
  maxDiagnostics: 5_000,
  chainLensMaxChains: 3_000,
  maxManifestFiles: 2_000,
  compareTimeoutSeconds: 600,
  engineMemoryMB: DEFAULT_HEAP_MB,
};

/** Reads one setting: `get(key)` returns what the user configured (or the contributed default). */
export type SettingGetter = (key: string) => unknown;

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

function positive(v: unknown, fallback: number): number {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : fallback;
}

export function readSettings(get: SettingGetter): Settings {
  const problems: string[] = [];
  const addresses: string[] = [];
  for (const a of strings(get('node.addresses'))) {
    if (parseAddr(a.trim())) addresses.push(a.trim());
    else problems.push(`packetlens.node.addresses: '${a}' is not an IP address`);
  }
  const interfaces: { name: string; addresses: string[] }[] = [];
  const ifaceSetting = get('node.interfaces');
  if (ifaceSetting && typeof ifaceSetting === 'object' && !Array.isArray(ifaceSetting)) {
    for (const [name, v] of Object.entries(ifaceSetting as Record<string, unknown>)) {
      const list = typeof v === 'string' ? [v] : strings(v);
      const good = list.filter(c => parseNet(c) !== null);
      for (const bad of list.filter(c => parseNet(c) === null))
        problems.push(`packetlens.node.interfaces.${name}: '${bad}' is not an address/prefix`);
      interfaces.push({ name, addresses: good });
    }
  }
  const routes: { dst: string; iface: string }[] = [];
  const routeSetting = get('node.routes');
  if (routeSetting && typeof routeSetting === 'object' && !Array.isArray(routeSetting)) {
    for (const [dst, iface] of Object.entries(routeSetting as Record<string, unknown>)) {
      if (typeof iface === 'string' && parseNet(dst)) routes.push({ dst, iface });
      else problems.push(`packetlens.node.routes: '${dst}' → '${String(iface)}' is not a CIDR → interface route`);
    }
  }
  const uplink =
    typeof get('node.uplink') === 'string' && (get('node.uplink') as string).trim()
      ? (get('node.uplink') as string).trim()
      : 'eth0';
  const mode = get('kubeProxy.mode');
  const version = get('kubeProxy.version');
  return {
    node: { addresses, interfaces, routes, uplink, routeLocalnet: get('node.routeLocalnet') === true },
    nodeContextFiles: strings(get('node.contextFiles'))
      .map(p => p.trim())
      .filter(Boolean),
    problems,
    kubeProxy: {
      mode: mode === 'iptables' || mode === 'ipvs' || mode === 'nftables' ? mode : 'auto',
      version: typeof version === 'string' && version ? version : '1.31',
    },
    manifestScope: get('manifests.scope') === 'workspace' ? 'workspace' : 'folder',
    limits: {
      maxFileSizeMB: positive(get('limits.maxFileSizeMB'), DEFAULT_LIMITS.maxFileSizeMB),
      fullCheckMaxRules: positive(get('limits.fullCheckMaxRules'), DEFAULT_LIMITS.fullCheckMaxRules),
      maxDiagnostics: positive(get('limits.maxDiagnostics'), DEFAULT_LIMITS.maxDiagnostics),
      chainLensMaxChains: positive(get('limits.chainLensMaxChains'), DEFAULT_LIMITS.chainLensMaxChains),
      maxManifestFiles: positive(get('limits.maxManifestFiles'), DEFAULT_LIMITS.maxManifestFiles),
      compareTimeoutSeconds: positive(get('limits.compareTimeoutSeconds'), DEFAULT_LIMITS.compareTimeoutSeconds),
      engineMemoryMB: positive(get('limits.engineMemoryMB'), DEFAULT_LIMITS.engineMemoryMB),
    },
    openDiagram: get('trace.openDiagram') !== false,
    chainLenses: get('codeLens.chains') !== false,
    serviceLenses: get('codeLens.services') !== false,
  };
}
