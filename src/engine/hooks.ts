/**
 * The netfilter hooks the evaluator runs (include/uapi/linux/netfilter.h, `enum nf_inet_hooks`), in packet
 * order. A leaf: the model, the match and target contracts, the evaluator's environment and the trace all
 * name hooks, and none of them needs another to do so.
 */
export type HookName = 'PREROUTING' | 'INPUT' | 'FORWARD' | 'OUTPUT' | 'POSTROUTING';

export const HOOKS: readonly HookName[] = ['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING'];
