/**
 * What a match or target (and an nft expression or statement) may consult besides the packet: the node,
 * ipsets, `recent` lists, the hook. It lives beside the match contract, below targets, nftables and the
 * evaluator, so the rules' modules never import the evaluator (issue 16); the evaluator's own environment
 * (eval/env.ts `TraceEnv`) extends it with the whole node model and the hook interceptors.
 */
import type { HookName } from '../hooks.ts';
import type { IpsetStore } from '../ipset/store.ts';
import type { Addr, Family } from '../net/addr.ts';
import type { PacketState } from '../net/packet.ts';

export type AddrType = 'LOCAL' | 'UNICAST' | 'BROADCAST' | 'MULTICAST' | 'UNSPEC';

/**
 * The node as a rule sees it: the questions the kernel's routing code answers for a match or target.
 * `NodeModel` (eval/node.ts) answers them.
 */
export interface NodeView {
  /** The interface of the default route. */
  readonly uplink: string;
  isLocal(a: Addr): boolean;
  /** Output interface for a destination: `lo` for local ones, else the longest matching route, else the uplink. */
  routeOut(dst: Addr): string;
  /** The route type `addrtype` sees; with `iface`, a local address is LOCAL only on the interface that owns it. */
  addrType(a: Addr, iface?: string | null): AddrType;
  /** The address an interface would use as a source (`inet_select_addr`). */
  sourceFor(iface: string, family: Family): Addr | null;
  /** The source MASQUERADE picks for a packet leaving by `iface`. */
  masqueradeSource(iface: string, family: Family, pkt?: PacketState): Addr | null;
  /** True when `a` is the symbolic stand-in for the node's address of its family. */
  isSymbolicAddr(a: Addr): boolean;
  /** An address as the trace shows it: the symbolic stand-in by its label, any other by its digits. */
  show(a: Addr): string;
}

export interface EvalEnv {
  readonly node: NodeView;
  readonly ipsets: IpsetStore | null;
  /**
   * `-m recent` lists in which the packet's client has a live entry (kube-proxy session affinity names them
   * after the KUBE-SEP chain). Default: none, as for a client seen for the first time.
   */
  readonly recent: ReadonlySet<string>;
  hook: HookName;
  table: string;
  /** The priority of the base chain being walked (nftables `notrack` depends on it); set by the pipeline. */
  basePriority?: number;
}
