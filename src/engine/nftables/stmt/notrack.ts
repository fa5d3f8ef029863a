/**
 * `notrack` (net/netfilter/nft_ct.c `nft_notrack_eval`): marks the packet untracked — but only when
 * conntrack has not seen it yet (`if (ct || ctinfo == IP_CT_UNTRACKED) return;`), i.e. in a chain at a
 * priority before conntrack's (NF_IP_PRI_CONNTRACK, -200) on prerouting or output.
 */
import type { Op } from '../../nft-program/program.ts';

export function lowerNotrack(): Op {
  return {
    text: 'notrack',
    isMatch: false,
    run: () => [
      {
        apply(pkt, env) {
          const prio = env.basePriority;
          if (prio === undefined || prio >= -200 || (env.hook !== 'PREROUTING' && env.hook !== 'OUTPUT'))
            return 'notrack: conntrack already has this packet (chain priority not below -200), nothing changes';
          pkt.ct.state = 'UNTRACKED';
          return 'notrack: the packet is not tracked';
        },
      },
    ],
  };
}
