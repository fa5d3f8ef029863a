/**
 * The trace: a plain serializable value (no back-pointers, no class instances) that the CLI prints as
 * JSON, the editor turns into CodeLens, hovers and decorations, and the webview draws. Add fields; never
 * rename them: `packetlens trace --json` is a public contract (README, "CLI").
 */
import type { HookName } from '../hooks.ts';
import type { CtState } from '../net/packet.ts';

export type Disposition = 'local' | 'forwarded' | 'output' | 'dropped' | 'rejected' | 'unknown';

/** A rule that matched, in evaluation order. */
export interface TraceStep {
  readonly hook: HookName;
  readonly table: string;
  readonly chain: string;
  /** 1-based position in the chain. */
  readonly rule: number;
  /** 1-based line in the source file. */
  readonly line: number;
  /** What the rule did: `jump KUBE-SVC-…`, `DNAT → 10.10.1.11:80`, `ACCEPT`, `MARK 0x0 → 0x4000`. For nftables
   * rules the verdict as `nft monitor trace` prints it: `accept`, `drop`, `continue`, `return`, `jump X`, `goto X`. */
  readonly verdict: string;
  /** nftables rules: the table's family (`ip`, `ip6`, `inet`). */
  readonly family?: string;
  /** nftables rules: what the rule's statements did (`dnat → 10.0.0.1:80`, `meta mark 0x0 → 0x4000`, `reject with …`). */
  readonly action?: string;
}

/** A rule that was evaluated and did not match, with the first criterion that failed. */
export interface TraceMiss {
  readonly hook: HookName;
  readonly table: string;
  readonly chain: string;
  readonly rule: number;
  readonly line: number;
  readonly reason: string;
}

/**
 * Consecutive rules of one chain that did not match for the same reason, as one entry (`--why-not=grouped`):
 * `count` rules from `rule` (line `line`) to `lastRule` (line `lastLine`). A single miss is a group of one.
 * The rules a destination index skipped (each names another `-d` address) are one group whose `reason`
 * names the packet's destination: `-d ∌ 10.96.39.15: each rule's -d is another address`.
 */
export interface TraceMissGroup extends TraceMiss {
  readonly count: number;
  readonly lastRule: number;
  readonly lastLine: number;
}

/** An undecidable match or target the path assumed one way; the other way is another outcome. */
export interface TraceAssumption {
  readonly table: string;
  readonly chain: string;
  readonly rule: number;
  readonly line: number;
  readonly assumed: 'matches' | 'does not match';
  readonly reason: string;
}

/** The full narrative of one path, for the flow diagram: hooks, chains entered, rules, policies, routing. */
export type TraceEvent =
  | {
      readonly kind: 'hook';
      readonly hook: HookName;
      readonly iface: { readonly in: string | null; readonly out: string | null };
    }
  | {
      readonly kind: 'chain';
      readonly hook: HookName;
      readonly table: string;
      readonly chain: string;
      readonly line: number;
    }
  | { readonly kind: 'rule'; readonly step: TraceStep }
  | {
      readonly kind: 'policy';
      readonly hook: HookName;
      readonly table: string;
      readonly chain: string;
      readonly verdict: string;
      readonly line: number;
    }
  | { readonly kind: 'return'; readonly table: string; readonly chain: string; readonly implicit: boolean }
  | {
      readonly kind: 'branch';
      readonly table: string;
      readonly chain: string;
      readonly rule: number;
      readonly line: number;
      readonly taken: boolean;
      readonly probability: string;
      readonly label: string;
    }
  | { readonly kind: 'assume'; readonly assumption: TraceAssumption }
  | { readonly kind: 'nat-skipped'; readonly hook: HookName; readonly reason: string }
  | {
      readonly kind: 'routing';
      readonly decision: 'local' | 'forward' | 'output' | 'loopback' | 'drop';
      readonly iface: string | null;
      readonly reason: string;
    }
  | { readonly kind: 'note'; readonly text: string };

/** The packet as it leaves the evaluator (addresses after NAT). */
export interface PacketView {
  readonly family: 4 | 6;
  readonly protocol: string;
  readonly src: string;
  readonly sport: number | null;
  readonly dst: string;
  readonly dport: number | null;
  readonly in: string | null;
  readonly out: string | null;
  readonly mark: string;
  readonly ctmark: string;
  readonly ctstate: CtState;
}

export interface TraceOutcome {
  /** Exact probability as a float (conditional on `assumptions` when there are any). */
  readonly probability: number;
  /** The same probability as an exact fraction, e.g. `715827883/2147483648`. */
  readonly probabilityExact: string;
  readonly disposition: Disposition;
  readonly packet: PacketView;
  /** `ip:port` after DNAT/REDIRECT, null when the destination was not translated. */
  readonly dnat: string | null;
  /** Source address after SNAT/MASQUERADE, null when not translated. */
  readonly snat: string | null;
  readonly masquerade: boolean;
  readonly rejectWith: string | null;
  /** Why the path ended as `unknown`, `dropped` outside a rule, etc. */
  readonly reason: string | null;
  readonly steps: readonly TraceStep[];
  readonly misses: readonly TraceMiss[];
  /** With `explain: 'grouped'` (and then `misses` is empty): the same misses, consecutive alike ones as one entry. */
  readonly missesGrouped?: readonly TraceMissGroup[];
  readonly assumptions: readonly TraceAssumption[];
  readonly events: readonly TraceEvent[];
  readonly notes: readonly string[];
  /** How many distinct paths ended in this same state (their probabilities are summed). */
  readonly paths: number;
  /**
   * Bits of the packet mark (hex) in which the merged paths differ; present only then. No rule reads
   * these bits, so they cannot change any verdict; `packet.mark` is one of the values.
   */
  readonly markVaries?: string;
  /** The same for the connection mark. */
  readonly ctmarkVaries?: string;
  /** The rules of the jump/goto loop the path ran into (the kernel refuses such a table), in cycle order. */
  readonly loop?: readonly TraceStep[];
  /**
   * Present only on the entry that stands for what the trace's budget left unexplored: `probability` is
   * exactly the probability not enumerated, `paths` how many paths it covers, `reason` which budget.
   */
  readonly notEnumerated?: { readonly paths: number; readonly reason: string };
}

/** The work the trace did against its budgets (eval/budget.ts). */
export interface TraceBudget {
  readonly steps: number;
  readonly paths: number;
  /** Which budget ran out, or null when the trace is complete. */
  readonly exhausted: string | null;
}

/** The file the trace ran on has errors the kernel's loader would refuse it for. */
export interface FileErrors {
  readonly count: number;
  /** `this file has N errors; the kernel would refuse it; results assume …` */
  readonly message: string;
  /** 1-based lines that hold errors (the first 1000 errors'), so a view can flag the steps through them. */
  readonly lines: readonly number[];
}

export interface Trace {
  readonly packet: PacketView;
  readonly from: 'outside' | 'local';
  readonly outcomes: readonly TraceOutcome[];
  /** True when some outcome depends on an assumption about an undecidable match. */
  readonly unknown: boolean;
  readonly warnings: readonly string[];
  /**
   * The node the trace assumed, for the packet's family: the addresses given or inferred (`inferred` says
   * from where), or `symbolic`, the label of the stand-in address when none is known (`node(eth0)`).
   */
  readonly node?: {
    readonly addresses: readonly string[];
    readonly symbolic: string | null;
    readonly inferred: readonly {
      readonly address: string;
      readonly iface?: string;
      readonly from: string;
      readonly why: string;
      readonly extra?: boolean;
    }[];
  };
  /** What the trace cost and whether a budget cut it short. */
  readonly budget?: TraceBudget;
  /** Present when the ruleset has errors: results describe a file the kernel would not load. */
  readonly fileErrors?: FileErrors;
}
