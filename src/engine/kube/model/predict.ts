/**
 * Allocators for what manifests leave to controllers. Real allocators are random (ClusterIPs, NodePorts)
 * or order-dependent (MetalLB); these pick the lowest free value so predictions are deterministic, and
 * every use is recorded as a Prediction with its reason.
 */
import { type Net, formatIPv4, parseAddrRange, parseNet } from '../../net/addr.ts';

/** Iterates the IPv4 addresses of a pool entry (`a.b.c.d/nn` or `a-b`). */
export function* poolAddresses(entry: string, avoidBuggyIPs: boolean): Generator<string> {
  const trimmed = entry.trim();
  let from: number;
  let to: number;
  if (trimmed.includes('-')) {
    const r = parseAddrRange(trimmed);
    if (!r || r.from.v !== 4 || r.to.v !== 4) return;
    from = r.from.n;
    to = r.to.n;
  } else {
    const net = parseNet(trimmed);
    if (!net || net.v !== 4) return;
    from = net.n;
    to = (net.n | (~net.mask >>> 0)) >>> 0;
  }
  for (let n = from; n <= to && n - from < 1 << 20; n++) {
    // MetalLB's avoidBuggyIPs skips .0 and .255, which some routers mishandle.
    if (avoidBuggyIPs && ((n & 255) === 0 || (n & 255) === 255)) continue;
    yield formatIPv4(n >>> 0);
  }
}

/**
 * The lowest free address of a Service CIDR from offset 11 (kubeadm reserves .1 and .10), one call per
 * Service. `used` only grows, so every address below the last one handed out stays taken: the search resumes
 * there (searching from 11 each time made 100k Services without a clusterIP quadratic, minutes of CPU).
 */
export function clusterIPAllocator(cidr: string, used: Set<string>): () => string | null {
  const net: Net | null = parseNet(cidr);
  let off = 11;
  return () => {
    if (!net || net.v !== 4) return null;
    const size = (~net.mask >>> 0) + 1;
    for (; off < size - 1; off++) {
      const ip = formatIPv4((net.n + off) >>> 0);
      if (!used.has(ip)) {
        used.add(ip);
        return ip;
      }
    }
    return null;
  };
}

/** The lowest free NodePort of 30000-32767, resuming where the last call stopped (as above). */
export function portAllocator(used: Set<number>, from = 30000, to = 32767): () => number | null {
  let p = from;
  return () => {
    for (; p <= to; p++) {
      if (!used.has(p)) {
        used.add(p);
        return p;
      }
    }
    return null;
  };
}

/** The n-th (0-based) /24 of a pod subnet, as kube-controller-manager's range allocator hands them out. */
export function nthPodCIDR(podSubnet: string, n: number, maskSize = 24): string | null {
  const net = parseNet(podSubnet);
  if (!net || net.v !== 4 || net.prefix === null || net.prefix > maskSize) return null;
  const step = 2 ** (32 - maskSize);
  const count = 2 ** (maskSize - net.prefix);
  if (n >= count) return null;
  return `${formatIPv4((net.n + n * step) >>> 0)}/${maskSize}`;
}

/** The k-th pod address of a node's pod CIDR (host-local IPAM starts after the gateway .1). */
export function nthPodIP(podCIDR: string, k: number): string | null {
  const net = parseNet(podCIDR);
  if (!net || net.v !== 4) return null;
  const size = (~net.mask >>> 0) + 1;
  if (k + 2 >= size - 1) return null;
  return formatIPv4((net.n + 2 + k) >>> 0);
}
