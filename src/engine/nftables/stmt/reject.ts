/**
 * `reject`, `reject with icmp type|code X`, `reject with icmpv6 …`, `reject with icmpx …`, `reject with tcp
 * reset`: net/netfilter/nft_reject_inet.c, nft_reject_ipv4.c, nft_reject_ipv6.c. The packet is dropped and
 * the kernel answers with the ICMP error or TCP RST; a bare `reject` sends port-unreachable
 * (nft's default, src/evaluate.c `stmt_evaluate_reject_default`).
 */
import type { NftReject } from '../ast.ts';
import type { Op } from '../../nft-program/program.ts';

export function lowerReject(s: NftReject, family: string): Op {
  const type = s.type ?? (family === 'inet' ? 'icmpx' : family === 'ip6' ? 'icmpv6' : 'icmp');
  const what = type === 'tcp reset' ? 'tcp reset' : `${type} ${s.code ?? 'port-unreachable'}`;
  const text = s.type ? `reject with ${what}` : 'reject';
  return {
    text,
    isMatch: false,
    run(pkt) {
      // `with tcp reset` only applies to TCP (nft adds `meta l4proto tcp`); otherwise the ICMP family of the packet.
      const sent = type === 'icmpx' ? `${pkt.family === 4 ? 'icmp' : 'icmpv6'} ${s.code ?? 'port-unreachable'}` : what;
      return [{ verdict: { kind: 'reject', with: sent } }];
    },
  };
}
