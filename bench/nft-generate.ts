/**
 * Generates a kube-proxy nftables-mode ruleset for benchmarks, as the knftables transaction kube-proxy's
 * nftables proxier writes (pkg/proxy/nftables/proxier.go; the base chains, sets and maps of
 * proxier_test.go's `baseRules`): S ClusterIP Services × E endpoints, every 10th Service also a NodePort
 * with an external chain. Per Service: a service chain (masquerade check + `numgen random mod E vmap`),
 * E endpoint chains (hairpin masquerade + dnat) and the `cluster-ips` / `service-ips` elements.
 * Chain names carry kube-proxy's 8-character base32 hash (`service-ULMVA6XW-ns1/svc1/tcp/p80`).
 */
import { createHash } from 'node:crypto';

function hash8(text: string): string {
  const bytes = createHash('sha256').update(text).digest();
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let out = '';
  let value = 0;
  let bits = 0;
  for (const b of bytes) {
    value = ((value << 8) | b) & 0xffff;
    bits += 8;
    while (bits >= 5 && out.length < 8) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    if (out.length >= 8) break;
  }
  return out;
}

const BASE = `add table ip kube-proxy { comment "rules for kube-proxy" ; }
add set ip kube-proxy cluster-ips { type ipv4_addr ; comment "Active ClusterIPs" ; }
add set ip kube-proxy nodeport-ips { type ipv4_addr ; comment "IPs that accept NodePort traffic" ; }
add map ip kube-proxy firewall-ips { type ipv4_addr . inet_proto . inet_service : verdict ; comment "destinations that are subject to LoadBalancerSourceRanges" ; }
add map ip kube-proxy no-endpoint-nodeports { type inet_proto . inet_service : verdict ; comment "vmap to drop or reject packets to service nodeports with no endpoints" ; }
add map ip kube-proxy no-endpoint-services { type ipv4_addr . inet_proto . inet_service : verdict ; comment "vmap to drop or reject packets to services with no endpoints" ; }
add map ip kube-proxy service-ips { type ipv4_addr . inet_proto . inet_service : verdict ; comment "ClusterIP, ExternalIP and LoadBalancer IP traffic" ; }
add map ip kube-proxy service-nodeports { type inet_proto . inet_service : verdict ; comment "NodePort traffic" ; }
add chain ip kube-proxy cluster-ips-check
add chain ip kube-proxy filter-prerouting-pre-dnat { type filter hook prerouting priority -110 ; }
add chain ip kube-proxy filter-output-pre-dnat { type filter hook output priority -110 ; }
add chain ip kube-proxy filter-forward { type filter hook forward priority 0 ; }
add chain ip kube-proxy filter-input { type filter hook input priority 0 ; }
add chain ip kube-proxy filter-output { type filter hook output priority 0 ; }
add chain ip kube-proxy firewall-check
add chain ip kube-proxy mark-for-masquerade
add chain ip kube-proxy masquerading
add chain ip kube-proxy nat-output { type nat hook output priority -100 ; }
add chain ip kube-proxy nat-postrouting { type nat hook postrouting priority 100 ; }
add chain ip kube-proxy nat-prerouting { type nat hook prerouting priority -100 ; }
add chain ip kube-proxy nodeport-endpoints-check
add chain ip kube-proxy reject-chain { comment "helper for @no-endpoint-services / @no-endpoint-nodeports" ; }
add chain ip kube-proxy services
add chain ip kube-proxy service-endpoints-check
add rule ip kube-proxy cluster-ips-check ip daddr @cluster-ips reject comment "Reject traffic to invalid ports of ClusterIPs"
add rule ip kube-proxy cluster-ips-check ip daddr { 172.30.0.0/16 } drop comment "Drop traffic to unallocated ClusterIPs"
add rule ip kube-proxy filter-prerouting-pre-dnat ct state new jump firewall-check
add rule ip kube-proxy filter-forward ct state new jump service-endpoints-check
add rule ip kube-proxy filter-forward ct state new jump cluster-ips-check
add rule ip kube-proxy filter-input ct state new jump nodeport-endpoints-check
add rule ip kube-proxy filter-input ct state new jump service-endpoints-check
add rule ip kube-proxy filter-output ct state new jump service-endpoints-check
add rule ip kube-proxy filter-output-pre-dnat ct state new jump firewall-check
add rule ip kube-proxy filter-output ct state new jump cluster-ips-check
add rule ip kube-proxy firewall-check ip daddr . meta l4proto . th dport vmap @firewall-ips
add rule ip kube-proxy mark-for-masquerade mark set mark or 0x4000
add rule ip kube-proxy masquerading mark and 0x4000 == 0 return
add rule ip kube-proxy masquerading mark set mark xor 0x4000
add rule ip kube-proxy masquerading masquerade fully-random
add rule ip kube-proxy nat-output jump services
add rule ip kube-proxy nat-postrouting jump masquerading
add rule ip kube-proxy nat-prerouting jump services
add rule ip kube-proxy nodeport-endpoints-check ip daddr @nodeport-ips meta l4proto . th dport vmap @no-endpoint-nodeports
add rule ip kube-proxy reject-chain reject
add rule ip kube-proxy services ip daddr . meta l4proto . th dport vmap @service-ips
add rule ip kube-proxy services ip daddr @nodeport-ips meta l4proto . th dport vmap @service-nodeports
add element ip kube-proxy nodeport-ips { 192.168.0.2 }
add rule ip kube-proxy service-endpoints-check ip daddr . meta l4proto . th dport vmap @no-endpoint-services
`;

/** 172.30.x.y for Service i, 10.(128+…).x.y for endpoint j of Service i. */
function clusterIP(i: number): string {
  return `172.30.${(i >> 8) & 255}.${i & 255}`;
}

function endpointIP(i: number, j: number): string {
  const n = i * 16 + j;
  return `10.${128 + ((n >> 16) & 127)}.${(n >> 8) & 255}.${n & 255}`;
}

/** The knftables transaction for `services` Services × `endpoints` endpoints, port 80/TCP each. */
export function generateKubeProxyNft(services: number, endpoints: number): string {
  const out: string[] = [BASE];
  for (let i = 0; i < services; i++) {
    const spn = `ns${i % 100}/svc${i}/tcp/p80`;
    const svc = `service-${hash8(spn)}-${spn}`;
    const eps: string[] = [];
    for (let j = 0; j < endpoints; j++) {
      const ip = endpointIP(i, j);
      const ep = `endpoint-${hash8(`${spn}${ip}`)}-${spn}__${ip}/80`;
      eps.push(ep);
      out.push(`add chain ip kube-proxy ${ep}`);
      out.push(`add rule ip kube-proxy ${ep} ip saddr ${ip} jump mark-for-masquerade`);
      out.push(`add rule ip kube-proxy ${ep} meta l4proto tcp dnat to ${ip}:80`);
    }
    out.push(`add chain ip kube-proxy ${svc}`);
    out.push(
      `add rule ip kube-proxy ${svc} ip daddr ${clusterIP(i)} tcp dport 80 ip saddr != 10.0.0.0/8 jump mark-for-masquerade`,
    );
    out.push(
      `add rule ip kube-proxy ${svc} numgen random mod ${endpoints} vmap { ${eps.map((e, j) => `${j} : goto ${e}`).join(' , ')} }`,
    );
    out.push(`add element ip kube-proxy cluster-ips { ${clusterIP(i)} }`);
    out.push(`add element ip kube-proxy service-ips { ${clusterIP(i)} . tcp . 80 : goto ${svc} }`);
    if (i % 10 === 0) {
      const ext = `external-${hash8(spn)}-${spn}`;
      out.push(`add chain ip kube-proxy ${ext}`);
      out.push(`add rule ip kube-proxy ${ext} jump mark-for-masquerade`);
      out.push(`add rule ip kube-proxy ${ext} goto ${svc}`);
      out.push(`add element ip kube-proxy service-nodeports { tcp . ${30000 + i / 10} : goto ${ext} }`);
    }
  }
  return out.join('\n') + '\n';
}
