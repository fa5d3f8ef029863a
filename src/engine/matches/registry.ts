/** Every match module the evaluator models, by the name `-m` uses. */
import { addrtypeMatch } from './addrtype.ts';
import { commentMatch } from './comment.ts';
import { conntrackMatch, stateMatch } from './conntrack.ts';
import { icmp6Match, icmpMatch } from './icmp.ts';
import { iprangeMatch } from './iprange.ts';
import { lengthMatch } from './length.ts';
import { connmarkMatch, markMatch } from './mark.ts';
import { helperMatch, nfacctMatch, policyMatch, socketMatch } from './misc.ts';
import { multiportMatch } from './multiport.ts';
import { ownerMatch } from './owner.ts';
import { physdevMatch } from './physdev.ts';
import { pkttypeMatch } from './pkttype.ts';
import { connlimitMatch, hashlimitMatch, limitMatch } from './rate.ts';
import { recentMatch } from './recent.ts';
import { rpfilterMatch } from './rpfilter.ts';
import { sctpMatch } from './sctp.ts';
import { setMatch } from './set.ts';
import { statisticMatch } from './statistic.ts';
import { tcpMatch } from './tcp.ts';
import { hlMatch, ttlMatch } from './ttl.ts';
import type { MatchModule } from './types.ts';
import { udpMatch } from './udp.ts';

const ALL: MatchModule<unknown>[] = [
  tcpMatch,
  udpMatch,
  sctpMatch,
  icmpMatch,
  icmp6Match,
  multiportMatch,
  commentMatch,
  markMatch,
  connmarkMatch,
  conntrackMatch,
  stateMatch,
  addrtypeMatch,
  statisticMatch,
  recentMatch,
  setMatch,
  iprangeMatch,
  physdevMatch,
  pkttypeMatch,
  lengthMatch,
  ttlMatch,
  hlMatch,
  limitMatch,
  hashlimitMatch,
  connlimitMatch,
  ownerMatch,
  socketMatch,
  rpfilterMatch,
  nfacctMatch,
  policyMatch,
  helperMatch,
];

export const MATCHES: ReadonlyMap<string, MatchModule<unknown>> = new Map(ALL.map(m => [m.name, m]));

/** `-m icmpv6` and `-m ipv6-icmp` are spellings of icmp6. */
export function findMatch(name: string): MatchModule<unknown> | undefined {
  return MATCHES.get(name) ?? (name === 'icmpv6' || name === 'ipv6-icmp' ? MATCHES.get('icmp6') : undefined);
}
