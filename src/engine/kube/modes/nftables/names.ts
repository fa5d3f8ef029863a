/**
 * kube-proxy's nftables object names (kubernetes pkg/proxy/nftables/proxier.go): a Service port's chains
 * are `service-`, `local-`, `external-`, `firewall-` + `servicePortChainNameBase`, an endpoint's chain and
 * affinity set `endpoint-` / `affinity-` + `servicePortEndpointChainNameBase`. Each base is
 * `hashAndTruncate(name)`: the first 8 characters of base32(sha256(name)), a hyphen and the name itself,
 * cut to 240 characters (knftables.NameLengthMax 256 minus the 16-character prefix allowance) ending in
 * `...`.
 */
import { hash8 } from '../../hash.ts';

const CHAIN_NAME_BASE_LENGTH_MAX = 256 - 16;

export function hashAndTruncate(name: string): string {
  const out = `${hash8(name)}-${name}`;
  return out.length > CHAIN_NAME_BASE_LENGTH_MAX ? `${out.slice(0, CHAIN_NAME_BASE_LENGTH_MAX - 3)}...` : out;
}

/** `ns/svc/tcp/portName` hashed: `ULMVA6XW-ns1/svc1/tcp/p80`. */
export function servicePortChainNameBase(namespace: string, name: string, protocol: string, portName: string): string {
  return hashAndTruncate(`${namespace}/${name}/${protocol}/${portName}`);
}

/** `…/portName__IP/port`, an IPv6 address's colons turned into dots (`net.SplitHostPort` of the endpoint string). */
export function servicePortEndpointChainNameBase(
  namespace: string,
  name: string,
  protocol: string,
  portName: string,
  ip: string,
  port: number,
): string {
  return hashAndTruncate(`${namespace}/${name}/${protocol}/${portName}__${ip.replaceAll(':', '.')}/${port}`);
}

export interface NftServiceNames {
  readonly cluster: string;
  readonly local: string;
  readonly external: string;
  readonly firewall: string;
}

export function nftServiceChainNames(
  namespace: string,
  name: string,
  protocol: string,
  portName: string,
): NftServiceNames {
  const base = servicePortChainNameBase(namespace, name, protocol.toLowerCase(), portName);
  return {
    cluster: `service-${base}`,
    local: `local-${base}`,
    external: `external-${base}`,
    firewall: `firewall-${base}`,
  };
}

export function nftEndpointNames(
  namespace: string,
  name: string,
  protocol: string,
  portName: string,
  ip: string,
  port: number,
): { chain: string; affinity: string } {
  const base = servicePortEndpointChainNameBase(namespace, name, protocol.toLowerCase(), portName, ip, port);
  return { chain: `endpoint-${base}`, affinity: `affinity-${base}` };
}
