/** What a match or target may consult besides the packet: the node, ipsets, `recent` lists, the hook. */
import type { HookName } from '../hooks.ts';
import type { IpsetStore } from '../ipset/store.ts';
import type { HookInterceptor } from './intercept.ts';
import type { NodeModel } from './node.ts';

export interface EvalEnv {
  readonly node: NodeModel;
  readonly ipsets: IpsetStore | null;
  /**
   * `-m recent` lists in which the packet's client has a live entry (kube-proxy session affinity names them
   * after the KUBE-SEP chain). Default: none, as for a client seen for the first time.
   */
  readonly recent: ReadonlySet<string>;
  /** Packet handlers beside the tables (IPVS); none by default (intercept.ts). */
  readonly interceptors?: readonly HookInterceptor[];
  hook: HookName;
  table: string;
  /** The priority of the base chain being walked (nftables `notrack` depends on it); set by the pipeline. */
  basePriority?: number;
}
