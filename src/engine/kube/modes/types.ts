/**
 * One kube-proxy mode (iptables, IPVS, nftables) as everything else sees it: the rules and side files it
 * writes for a node of the cluster model, how those rules are read and traced, and the words the CLI and
 * the editor use for it. Each mode lives in its own folder beside this file and is registered in
 * `index.ts`; nothing outside a mode's folder asks which mode it is.
 */
import type { NodeConfig } from '../../eval/node.ts';
import type { TraceOptions } from '../../eval/trace.ts';
import type { IpvsTraceOptions } from '../../ipvs/intercept.ts';
import type { Ruleset } from '../../model.ts';
import type { CostRule } from '../model/budget.ts';
import type { ClusterModel, ServicePortInfo } from '../model/types.ts';

export type ProxyModeName = 'iptables' | 'ipvs' | 'nftables';
/** Every mode kube-proxy has on Linux, modelled or not. */
export const KUBE_PROXY_MODE_NAMES: readonly ProxyModeName[] = ['iptables', 'ipvs', 'nftables'];

export interface NodeSynthOptions {
  readonly nodeName: string;
  /** Defaults to the node's addresses in the model. */
  readonly nodeIPs?: readonly string[];
  /** iptables `--random-fully` on kube-proxy's MASQUERADE (default true). */
  readonly randomFully?: boolean;
  /** iptables mode: the nfacct counters kube-proxy adds when the kernel has nfnetlink_acct. */
  readonly nfacct?: { readonly ctStateInvalid?: boolean; readonly localhostNodePorts?: boolean };
  /** IPVS mode: scheduler state the caller states (connections, weights' history…). */
  readonly ipvs?: IpvsTraceOptions;
}

/** A file kube-proxy leaves beside its rules (`ipvsadm -Ln`, `ipset save`): shown, not traced. */
export interface SideFile {
  /** The command that would print it (`ipvsadm -Ln`). */
  readonly title: string;
  readonly text: string;
}

export interface NodeRules {
  /** The rules the trace runs through, as the node would list them (iptables-save, `nft list ruleset`). */
  readonly rules: string;
  /** The command that lists `rules` on the node (`iptables-save`, `nft list ruleset`). */
  readonly rulesTitle: string;
  /** What the synthesis assumed or left out, one line each. */
  readonly notes: readonly string[];
  /** Facts about the node's state besides the rules (`kube-ipvs0: 10.96.0.1 …`), one line each. */
  readonly facts: readonly string[];
  readonly sideFiles: readonly SideFile[];
  /** The evaluator options that trace `rules` on a node modelled as `context`. */
  traceOptions(context: NodeConfig): TraceOptions;
  /**
   * The text `packetlens synth --format FORMAT` prints (`null`: the mode's default), `header` as its
   * first comment lines where the format has comments.
   */
  render(format: string | null, header: string): string;
}

/** Markdown helpers the editor passes in, so a mode's words render as the rest of a hover. */
export interface Markdown {
  code(text: string): string;
  escape(text: string): string;
}

/** How the CLI and the editor speak of a mode. */
export interface ModeWording {
  /** `kube-proxy v1.31 IPVS mode (scheduler rr)`: the first line of a synthesized dump. */
  headline(model: ClusterModel): string;
  /** A line the CLI prints above an end-to-end trace in this mode, or null. */
  traceNote(model: ClusterModel, node: string): string | null;
  /** Appended to a Service port CodeLens' tooltip route (`, kube-proxy IPVS mode`), or ''. */
  readonly lensSuffix: string;
  /** The sessionAffinity hover: `None` (balance = the shares, already formatted) and `ClientIP`. */
  affinityNone(model: ClusterModel, balance: string, md: Markdown): string;
  affinityClientIP(
    model: ClusterModel,
    sp: ServicePortInfo | undefined,
    timeout: number,
    balance: string,
    md: Markdown,
  ): string;
  /** The lines of a Service port hover naming what the mode writes for it (chains, maps, virtual servers). */
  portObjects(model: ClusterModel, sp: ServicePortInfo, md: Markdown): string[];
}

export interface ProxyMode {
  readonly name: ProxyModeName;
  /** `synth --format` values this mode prints; the default is `render(null, …)`. */
  readonly formats: readonly string[];
  /** How this mode's rules grow with a Service port: what the cluster model's budget counts (model/budget.ts). */
  readonly cost: CostRule;
  /** kube-proxy's output for one node of the model. */
  synthesize(model: ClusterModel, opts: NodeSynthOptions): NodeRules;
  /** Reads `NodeRules.rules` back into the model the evaluator runs (`file` names it in diagnostics). */
  parse(rules: string, file: string): Ruleset;
  readonly wording: ModeWording;
}
