/**
 * The netfilter hooks the evaluator runs (include/uapi/linux/netfilter.h, `enum nf_inet_hooks`), in packet
 * order, and the netfilter families. A leaf: the model, the match and target contracts, the nft program, the
 * evaluator's environment and the trace all name hooks or families, and none of them needs another to do so.
 */
export type HookName = 'PREROUTING' | 'INPUT' | 'FORWARD' | 'OUTPUT' | 'POSTROUTING';

export const HOOKS: readonly HookName[] = ['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING'];

/**
 * netfilter families as nftables names them. `ip`/`ip6` hold iptables' and ip6tables' tables too; `inet`
 * chains see both; arp, bridge and netdev tables are read but not evaluated (the trace says so).
 */
export type NfFamily = 'ip' | 'ip6' | 'inet' | 'arp' | 'bridge' | 'netdev';
