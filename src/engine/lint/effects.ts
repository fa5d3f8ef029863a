/**
 * What a rule's target and matches mean for the rules after it in the same chain, as far as the linter
 * needs to know. A target *terminates* the chain for the packets it takes when the kernel returns a
 * verdict instead of XT_CONTINUE (ip_tables.c `ipt_do_table`): the standard verdicts, RETURN and gotos,
 * and the extensions that end traversal (xt_REJECT, xt_nat's DNAT/SNAT/MASQUERADE/REDIRECT/NETMAP,
 * xt_NFQUEUE, xt_TPROXY, xt_SYNPROXY). Every other target lets the packet go on, possibly changed.
 */
import { MATCHES } from '../matches/registry.ts';
import type { Table } from '../model.ts';
import { STANDARD_TARGETS } from '../targets/registry.ts';
import type { TargetName } from './refs.ts';

const TERMINATING_EXTENSIONS = new Set([
  'REJECT',
  'DNAT',
  'SNAT',
  'MASQUERADE',
  'REDIRECT',
  'NETMAP',
  'NFQUEUE',
  'TPROXY',
  'SYNPROXY',
]);

/** Targets that only observe the packet (log it, count it): they change nothing a later match reads. */
const PASSIVE_TARGETS = new Set(['LOG', 'NFLOG', 'ULOG', 'TRACE', 'AUDIT', 'NFACCT']);

/**
 * Match modules whose answer for a packet can differ between two evaluations of the same packet:
 * random draws (`xt_statistic`), rate meters (`xt_limit`, `xt_hashlimit`, `xt_connlimit`) and
 * `xt_recent`, whose lists rules themselves update.
 */
const VARYING_MODULES = new Set(['statistic', 'limit', 'hashlimit', 'connlimit', 'recent']);

/**
 * Match modules that read only what no non-terminating target changes: addresses, ports, protocol,
 * interfaces, address types, the socket owner. Others (mark, connmark, conntrack, state, set, ttl, …)
 * read state that MARK, CONNMARK, CT/NOTRACK, SET or TTL rules (or a jumped-to chain) may change.
 */
const FIXED_MODULES = new Set([
  'tcp',
  'udp',
  'sctp',
  'icmp',
  'icmp6',
  'multiport',
  'addrtype',
  'iprange',
  'physdev',
  'pkttype',
  'owner',
  'rpfilter',
  'comment',
]);

export type TargetEffectClass = 'terminates' | 'passive' | 'mutates' | 'none';

/** How a rule's target affects the rest of its chain, for the packets the rule takes. */
export function classifyTarget(table: Table, t: TargetName | null): TargetEffectClass {
  if (!t) return 'none';
  if (t.kind === 'goto') return 'terminates';
  if (STANDARD_TARGETS.has(t.name)) return 'terminates';
  // A declared chain wins over an extension of the same name, as in iptables: a jump may change anything.
  if (table.chains.has(t.name)) return 'mutates';
  if (TERMINATING_EXTENSIONS.has(t.name)) return 'terminates';
  if (PASSIVE_TARGETS.has(t.name)) return 'passive';
  return 'mutates';
}

/** True when the module gives the same answer for the same packet every time (and is modelled). */
export function isDeterministicModule(name: string): boolean {
  return MATCHES.has(name) && !VARYING_MODULES.has(name);
}

/** True when no non-terminating target can change what the module reads. */
export function isFixedModule(name: string): boolean {
  return FIXED_MODULES.has(name);
}
