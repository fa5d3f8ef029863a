/**
 * A node's own context as its tools print it: interfaces and addresses (`ip addr`), routing tables
 * (`ip route show table all`), policy rules (`ip rule`) and the sysctls that change what netfilter sees
 * (`sysctl -a`). The front ends in this folder read those outputs into this value; the evaluator's node
 * (eval/node.ts, eval/routing.ts) answers routing questions from it.
 */
import type { Diagnostic } from '../diagnostics.ts';

/** Where a fact came from: the file and its 1-based line, for labels such as `ip-route.json:3`. */
export interface SourceRef {
  readonly file: string;
  readonly line: number;
}

/** Address scopes as `ip` names them (rtnetlink rt_scope_t): universe (global) 0 … host 254. */
export type Scope = 'global' | 'site' | 'link' | 'host' | 'nowhere';

export const SCOPE_VALUE: { readonly [S in Scope]: number } = {
  global: 0,
  site: 200,
  link: 253,
  host: 254,
  nowhere: 255,
};

export interface NodeAddress {
  readonly family: 4 | 6;
  readonly local: string;
  readonly prefixlen: number;
  readonly scope: Scope;
  /** IFA_F_SECONDARY: a second address in a subnet the interface already has (never a source choice). */
  readonly secondary: boolean;
  /** IFA_F_NOPREFIXROUTE: no connected route was added for it. */
  readonly noprefixroute: boolean;
  readonly from: SourceRef;
}

export interface NodeInterface {
  /** The kernel's ifindex; devices are walked in this order (`for_each_netdev`), lo first. */
  readonly index: number | null;
  readonly name: string;
  readonly up: boolean;
  /** `ip -d`: the link kind (veth, bridge, dummy, ipvlan…), when given. */
  readonly kind: string | null;
  readonly addrs: readonly NodeAddress[];
  readonly from: SourceRef;
}

export type RouteType =
  | 'unicast'
  | 'local'
  | 'broadcast'
  | 'anycast'
  | 'multicast'
  | 'blackhole'
  | 'unreachable'
  | 'prohibit'
  | 'throw'
  | 'nat';

export interface NodeRoute {
  readonly family: 4 | 6;
  /** `main`, `local`, `default` or a number / name from rt_tables. */
  readonly table: string;
  readonly type: RouteType;
  /** Always a CIDR (`default` becomes 0.0.0.0/0 or ::/0). */
  readonly dst: string;
  readonly dev: string | null;
  readonly gateway: string | null;
  readonly prefsrc: string | null;
  readonly metric: number;
  readonly scope: Scope;
  readonly from: SourceRef;
}

export type RuleAction = 'lookup' | 'goto' | 'nop' | 'blackhole' | 'unreachable' | 'prohibit';

export interface NodeRule {
  readonly family: 4 | 6;
  readonly priority: number;
  readonly not: boolean;
  readonly src: string | null;
  readonly dst: string | null;
  readonly fwmark: number | null;
  readonly fwmask: number;
  readonly iif: string | null;
  readonly oif: string | null;
  readonly action: RuleAction;
  readonly table: string | null;
  /** `suppress_prefixlength N`: a result with a prefix this short or shorter is ignored. */
  readonly suppressPrefixlen: number | null;
  readonly from: SourceRef;
}

export interface SysctlValue {
  readonly value: string;
  readonly from: SourceRef;
}

export type NodeFileKind = 'ip-addr' | 'ip-route' | 'ip-rule' | 'sysctl';

export interface NodeContext {
  /** In ifindex order when the files give it, else in file order. */
  readonly interfaces: readonly NodeInterface[];
  readonly routes: readonly NodeRoute[];
  readonly rules: readonly NodeRule[];
  /** `net.ipv4.ip_forward` → value, only the keys packetlens reads (sysctl.ts). */
  readonly sysctls: ReadonlyMap<string, SysctlValue>;
  /** The files read, with what each one was. */
  readonly sources: readonly { readonly file: string; readonly kind: NodeFileKind; readonly format: 'json' | 'text' }[];
}

export interface NodeFileResult {
  readonly kind: NodeFileKind | null;
  readonly format: 'json' | 'text';
  readonly interfaces: NodeInterface[];
  readonly routes: NodeRoute[];
  readonly rules: NodeRule[];
  readonly sysctls: Map<string, SysctlValue>;
  readonly diagnostics: Diagnostic[];
}

/** Upper bounds on hostile input: a node's real tables are far smaller. */
export const NODE_LIMITS = { entries: 200_000, lineLength: 8192 } as const;
