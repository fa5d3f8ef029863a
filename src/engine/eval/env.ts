/**
 * The evaluator's environment: what rules may consult (matches/env.ts `EvalEnv`) plus what only the
 * evaluator reads — the node's whole model (routing decisions, refusals) and the hook interceptors.
 */
import type { EvalEnv } from '../matches/env.ts';
import type { HookInterceptor } from './intercept.ts';
import type { NodeModel } from './node.ts';

export interface TraceEnv extends EvalEnv {
  readonly node: NodeModel;
  /** Packet handlers beside the tables (IPVS); none by default (intercept.ts). */
  readonly interceptors?: readonly HookInterceptor[];
}
