/**
 * Rules kube-proxy's iptables and IPVS modes write alike (kubernetes pkg/proxy/iptables/proxier.go and
 * pkg/proxy/ipvs/proxier.go, `syncProxyRules`/`writeIptablesRules`), as kube-proxy hands them to
 * iptables-restore. One copy, so the two modes cannot drift apart.
 */

/** KUBE-POSTROUTING: return unless marked, clear the mark, MASQUERADE (`--random-fully` when iptables has it). */
export function postroutingRules(mark: string, randomFully: boolean): string[] {
  return [
    `-A KUBE-POSTROUTING -m mark ! --mark ${mark}/${mark} -j RETURN`,
    `-A KUBE-POSTROUTING -j MARK --xor-mark ${mark}`,
    `-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE` +
      (randomFully ? ' --random-fully' : ''),
  ];
}

/** KUBE-MARK-MASQ: set the masquerade bit. */
export function markMasqRule(mark: string): string {
  return `-A KUBE-MARK-MASQ -j MARK --or-mark ${mark}`;
}

/** KUBE-FORWARD's two ACCEPT rules: marked (to be masqueraded) traffic and established connections. */
export function forwardAcceptRules(mark: string): string[] {
  return [
    `-A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark ${mark}/${mark} -j ACCEPT`,
    '-A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT',
  ];
}
