/**
 * The iptables rules of kube-proxy's IPVS mode, in the order `writeIptablesRules` and `acceptIPVSTraffic`
 * write them (kubernetes pkg/proxy/ipvs/proxier.go), as kube-proxy hands them to iptables-restore:
 *  1. `-A KUBE-SERVICES -s 127.0.0.0/8 -j RETURN` (connections to localhost are dismissed early);
 *  2. one rule per non-empty ipset of `ipsetWithIptablesChain` (hairpin MASQUERADE, load-balancer and
 *     NodePort jumps, source-range firewall), `-p` for the NodePort sets;
 *  3. KUBE-CLUSTER-IP masquerading: `dst,dst` + `-j KUBE-MARK-MASQ` with masqueradeAll, `dst,dst ! -s CIDR`
 *     with a local-traffic detector, else `src,dst` (a VIP as source: the node talking to a VIP);
 *  4. KUBE-EXTERNAL-IP(-LOCAL): masquerade (not for -LOCAL), then ACCEPT traffic from off the machine
 *     (`! --physdev-is-in`, `! --src-type LOCAL`) and to local addresses;
 *  5. `-m addrtype --dst-type LOCAL -j KUBE-NODE-PORT`, `KUBE-LOAD-BALANCER -j KUBE-MARK-MASQ`,
 *     `KUBE-SOURCE-RANGES-FIREWALL -j DROP`, KUBE-IPVS-OUT-FILTER drops for load-balancer IPs the node
 *     may not reach, then ACCEPT for KUBE-CLUSTER-IP and KUBE-LOAD-BALANCER (`acceptIPVSTraffic`);
 *  6. KUBE-FORWARD, the health-check ACCEPT, KUBE-IPVS-FILTER (RETURN for service addresses, REJECT for
 *     other new connections to kube-ipvs0 addresses), KUBE-POSTROUTING and KUBE-MARK-MASQ.
 * Chains are declared in the order of `iptablesChains` (proxier_test.go TestCreateAndLinkKubeChain).
 */
import type { TableRules } from '../iptables/synth.ts';
import { forwardAcceptRules, markMasqRule, postroutingRules } from '../iptables/common-rules.ts';
import * as S from './ipset-names.ts';
import { IPSET_DEFS } from './ipset-names.ts';

export const NAT_CHAINS = [
  'KUBE-SERVICES',
  'KUBE-POSTROUTING',
  'KUBE-NODE-PORT',
  'KUBE-LOAD-BALANCER',
  'KUBE-MARK-MASQ',
];
export const FILTER_CHAINS = [
  'KUBE-FORWARD',
  'KUBE-NODE-PORT',
  'KUBE-PROXY-FIREWALL',
  'KUBE-SOURCE-RANGES-FIREWALL',
  'KUBE-IPVS-FILTER',
  'KUBE-IPVS-OUT-FILTER',
];

/** `ipsetWithIptablesChain`: set, table, chain, target, match flags, protocol. Local NodePort sets come first. */
const IPSET_CHAINS: readonly [string, 'nat' | 'filter', string, string, string, string][] = [
  [S.KUBE_LOOP_BACK, 'nat', 'KUBE-POSTROUTING', 'MASQUERADE', 'dst,dst,src', ''],
  [S.KUBE_LOAD_BALANCER, 'nat', 'KUBE-SERVICES', 'KUBE-LOAD-BALANCER', 'dst,dst', ''],
  [S.KUBE_LOAD_BALANCER_LOCAL, 'nat', 'KUBE-LOAD-BALANCER', 'RETURN', 'dst,dst', ''],
  [S.KUBE_NODE_PORT_LOCAL_TCP, 'nat', 'KUBE-NODE-PORT', 'RETURN', 'dst', 'tcp'],
  [S.KUBE_NODE_PORT_TCP, 'nat', 'KUBE-NODE-PORT', 'KUBE-MARK-MASQ', 'dst', 'tcp'],
  [S.KUBE_NODE_PORT_LOCAL_UDP, 'nat', 'KUBE-NODE-PORT', 'RETURN', 'dst', 'udp'],
  [S.KUBE_NODE_PORT_UDP, 'nat', 'KUBE-NODE-PORT', 'KUBE-MARK-MASQ', 'dst', 'udp'],
  [S.KUBE_NODE_PORT_LOCAL_SCTP, 'nat', 'KUBE-NODE-PORT', 'RETURN', 'dst,dst', 'sctp'],
  [S.KUBE_NODE_PORT_SCTP, 'nat', 'KUBE-NODE-PORT', 'KUBE-MARK-MASQ', 'dst,dst', 'sctp'],
  [S.KUBE_LOAD_BALANCER_FW, 'filter', 'KUBE-PROXY-FIREWALL', 'KUBE-SOURCE-RANGES-FIREWALL', 'dst,dst', ''],
  [S.KUBE_LOAD_BALANCER_SOURCE_CIDR, 'filter', 'KUBE-SOURCE-RANGES-FIREWALL', 'RETURN', 'dst,dst,src', ''],
  [S.KUBE_LOAD_BALANCER_SOURCE_IP, 'filter', 'KUBE-SOURCE-RANGES-FIREWALL', 'RETURN', 'dst,dst,src', ''],
];

export interface RulesInput {
  readonly family: 4 | 6;
  /** Base names of the sets with entries. */
  readonly nonEmpty: ReadonlySet<string>;
  readonly setName: (base: string) => string;
  readonly masqueradeAll: boolean;
  readonly detector: string | null;
  readonly lbNoNodeAccess: readonly { ip: string; port: number; protocol: string }[];
  /** `%#08x` of the masquerade bit, e.g. 0x004000. */
  readonly mark: string;
  readonly randomFully: boolean;
}

const comment = (set: string) => `"${IPSET_DEFS.find(d => d.name === set)!.comment}"`;

export function writeIptablesRules(input: RulesInput): { nat: TableRules; filter: TableRules } {
  const nat: string[] = [];
  const filter: string[] = [];
  const w = (rules: string[], ...args: (string | readonly string[])[]) => rules.push(args.flat().join(' '));
  const set = (base: string) => input.setName(base);
  const has = (base: string) => input.nonEmpty.has(base);
  const lo = input.family === 4 ? '127.0.0.0/8' : '::1/128';

  w(nat, '-A', 'KUBE-SERVICES', '-s', lo, '-j', 'RETURN');
  for (const [name, table, from, to, dirs, proto] of IPSET_CHAINS) {
    if (!has(name)) continue;
    w(
      table === 'nat' ? nat : filter,
      '-A',
      from,
      proto ? ['-p', proto] : [],
      '-m',
      'comment',
      '--comment',
      comment(name),
      '-m',
      'set',
      '--match-set',
      set(name),
      dirs,
      '-j',
      to,
    );
  }
  if (has(S.KUBE_CLUSTER_IP)) {
    const args = [
      '-A',
      'KUBE-SERVICES',
      '-m',
      'comment',
      '--comment',
      comment(S.KUBE_CLUSTER_IP),
      '-m',
      'set',
      '--match-set',
      set(S.KUBE_CLUSTER_IP),
    ];
    if (input.masqueradeAll) w(nat, args, 'dst,dst', '-j', 'KUBE-MARK-MASQ');
    else if (input.detector) w(nat, args, 'dst,dst', '!', '-s', input.detector, '-j', 'KUBE-MARK-MASQ');
    // No detector: masquerade node traffic whose source is a VIP (kube-ipvs0 makes it the source address).
    else w(nat, args, 'src,dst', '-j', 'KUBE-MARK-MASQ');
  }
  const externalIPRules = (args: string[]) => {
    w(nat, args, '-m', 'physdev', '!', '--physdev-is-in', '-m', 'addrtype', '!', '--src-type', 'LOCAL', '-j', 'ACCEPT');
    w(nat, args, '-m', 'addrtype', '--dst-type', 'LOCAL', '-j', 'ACCEPT');
  };
  if (has(S.KUBE_EXTERNAL_IP)) {
    const args = [
      '-A',
      'KUBE-SERVICES',
      '-m',
      'comment',
      '--comment',
      comment(S.KUBE_EXTERNAL_IP),
      '-m',
      'set',
      '--match-set',
      set(S.KUBE_EXTERNAL_IP),
      'dst,dst',
    ];
    w(nat, args, '-j', 'KUBE-MARK-MASQ');
    externalIPRules(args);
  }
  if (has(S.KUBE_EXTERNAL_IP_LOCAL)) {
    externalIPRules([
      '-A',
      'KUBE-SERVICES',
      '-m',
      'comment',
      '--comment',
      comment(S.KUBE_EXTERNAL_IP_LOCAL),
      '-m',
      'set',
      '--match-set',
      set(S.KUBE_EXTERNAL_IP_LOCAL),
      'dst,dst',
    ]);
  }
  w(nat, '-A', 'KUBE-SERVICES', '-m', 'addrtype', '--dst-type', 'LOCAL', '-j', 'KUBE-NODE-PORT');
  w(nat, '-A', 'KUBE-LOAD-BALANCER', '-j', 'KUBE-MARK-MASQ');
  w(filter, '-A', 'KUBE-SOURCE-RANGES-FIREWALL', '-j', 'DROP');
  for (const e of input.lbNoNodeAccess) {
    w(
      filter,
      '-A',
      'KUBE-IPVS-OUT-FILTER',
      '-s',
      e.ip,
      '-m',
      'ipvs',
      '--vaddr',
      e.ip,
      '--vproto',
      e.protocol,
      '--vport',
      String(e.port),
      '-j',
      'DROP',
    );
  }
  // acceptIPVSTraffic: "Those rules must be in the end of KUBE-SERVICE chain".
  for (const name of [S.KUBE_CLUSTER_IP, S.KUBE_LOAD_BALANCER])
    if (has(name)) w(nat, '-A', 'KUBE-SERVICES', '-m', 'set', '--match-set', set(name), 'dst,dst', '-j', 'ACCEPT');
  filter.push(...forwardAcceptRules(input.mark));
  w(
    filter,
    '-A',
    'KUBE-NODE-PORT',
    '-m',
    'comment',
    '--comment',
    comment(S.KUBE_HEALTH_CHECK_NODE_PORT),
    '-m',
    'set',
    '--match-set',
    set(S.KUBE_HEALTH_CHECK_NODE_PORT),
    'dst',
    '-j',
    'ACCEPT',
  );
  for (const name of [S.KUBE_LOAD_BALANCER, S.KUBE_CLUSTER_IP, S.KUBE_EXTERNAL_IP, S.KUBE_EXTERNAL_IP_LOCAL]) {
    w(filter, '-A', 'KUBE-IPVS-FILTER', '-m', 'set', '--match-set', set(name), 'dst,dst', '-j', 'RETURN');
  }
  w(
    filter,
    '-A',
    'KUBE-IPVS-FILTER',
    '-m',
    'set',
    '--match-set',
    set(S.KUBE_HEALTH_CHECK_NODE_PORT),
    'dst',
    '-j',
    'RETURN',
  );
  w(
    filter,
    '-A',
    'KUBE-IPVS-FILTER',
    '-m',
    'conntrack',
    '--ctstate',
    'NEW',
    '-m',
    'set',
    '--match-set',
    set(S.KUBE_IPVS_IPS),
    'dst',
    '-j',
    'REJECT',
  );
  nat.push(...postroutingRules(input.mark, input.randomFully), markMasqRule(input.mark));
  return { nat: { chains: [...NAT_CHAINS], rules: nat }, filter: { chains: [...FILTER_CHAINS], rules: filter } };
}
