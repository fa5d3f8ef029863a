/**
 * The value `diffRulesets` returns: a plain serializable record (no class instances, no bigints) that the
 * CLI prints as text, markdown or JSON and the editor shows as it is. `packetlens diff --json` prints it
 * unchanged, so fields are added, never renamed (docs/diff.md, "JSON output").
 */
import type { Disposition } from '../eval/trace-types.ts';

/** A chain whose behaviour-relevant content differs between the two dumps. */
export interface ChainChange {
  readonly table: string;
  readonly chain: string;
  /**
   * `rules`: the rule list differs; `reordered`: the same rules in another order; nftables only: `set`, the
   * rules are the same but a named set or map they look up differs (`sets`); `hook`: a base chain's hook,
   * priority or type differs.
   */
  readonly change: 'added' | 'removed' | 'policy' | 'rules' | 'reordered' | 'set' | 'hook';
  /** nftables: the table's family (`table` is then the table's name, as trace steps name it). */
  readonly family?: string;
  /** nftables: the named sets and maps whose contents differ that this chain's rules look up. */
  readonly sets?: readonly string[];
  /** 1-based declaration lines, null on the side that lacks the chain. */
  readonly oldLine: number | null;
  readonly newLine: number | null;
  /** Rules only in the new chain / only in the old one (compared as normalized text). */
  readonly added: number;
  readonly removed: number;
}

/** A rule named in the report, as `file:line`. */
export interface DiffRuleRef {
  readonly file: string;
  /** 1-based line in the file. */
  readonly line: number;
  readonly table: string;
  readonly chain: string;
  /** 1-based position in the chain. */
  readonly rule: number;
  /** The rule as written after `-A CHAIN`. */
  readonly text: string;
}

/** One fate of a packet: the merged outcomes that agree on everything the diff compares. */
export interface DiffFate {
  /** Exact probability as a fraction (`1/2`, `715827883/2147483648`). */
  readonly probabilityExact: string;
  readonly probability: number;
  readonly disposition: Disposition;
  readonly dnat: string | null;
  readonly snat: string | null;
  readonly masquerade: boolean;
  readonly rejectWith: string | null;
  /** Why a path ended dropped outside a rule or as unknown, from the first merged outcome. */
  readonly reason: string | null;
  /** Undecidable matches this fate rests on: `table chain: matches|does not match (reason)`. */
  readonly assumptions: readonly string[];
  /** With `paths`: the matched rules, `table chain: rule text`. */
  readonly path?: readonly string[];
}

/** What a class of packets covers: per dimension, the range of values the rules cannot tell apart. */
export interface ClassExtent {
  readonly from: 'outside' | 'local';
  readonly protocol: string;
  readonly src: string;
  readonly dst: string;
  readonly sport: string | null;
  readonly dport: string | null;
  readonly in: string | null;
  readonly mark: string | null;
  readonly ctstate: string;
  /** `-m recent` lists the client is assumed to be in (session affinity). */
  readonly affinity: readonly string[];
}

export interface PacketClassView {
  /** The representative packet, in `packetlens trace --packet` syntax. */
  readonly packet: string;
  readonly extent: ClassExtent;
  /** `changed` classes come from the changed chains' analysis; `sweep` from the sanity sweep. */
  readonly origin: 'changed' | 'sweep';
}

export type ChangeAspect =
  'disposition' | 'dnat' | 'probability' | 'snat' | 'masquerade' | 'reject' | 'path' | 'unknown';

export interface ClassChange {
  readonly class: PacketClassView;
  readonly group: DiffGroupKey;
  readonly aspects: readonly ChangeAspect[];
  readonly old: readonly DiffFate[];
  readonly new: readonly DiffFate[];
  /** Rules on the class's paths that differ between the sides (else the changed-chain rules it matched). */
  readonly oldRules: readonly DiffRuleRef[];
  readonly newRules: readonly DiffRuleRef[];
  /** True when an outcome rests on an undecidable match: the class may hide packets that fare otherwise. */
  readonly approximate: boolean;
}

export type DiffGroupKey =
  | { readonly kind: 'service'; readonly name: string }
  | { readonly kind: 'chain'; readonly table: string; readonly chain: string };

export interface DiffGroup {
  readonly key: DiffGroupKey;
  /** `Service ns/name:port` or `chain nat KUBE-POSTROUTING`. */
  readonly title: string;
  /** Indexes into `changes`. */
  readonly changes: readonly number[];
}

/**
 * One sentence of the review-shaped summary (headlines.ts): what a Service or chain now does differently,
 * in a reviewer's words, with the classes it sums up and the rules that cause it.
 */
export interface DiffHeadline {
  /** `endpoints` (DNAT targets lost, gained, re-weighted), `disposition` (now drops, lets through), `translation`
   * (masquerade, SNAT), `rules` (a chain's added or removed rules), `policy` (a built-in chain's policy). */
  readonly kind: 'endpoints' | 'disposition' | 'translation' | 'rules' | 'policy';
  /** The Service port (`default/svc1:http`) or the chain (`filter INPUT`) it is about. */
  readonly subject: string;
  readonly text: string;
  /** Indexes into `changes` of the classes it sums up. */
  readonly changes: readonly number[];
  /** The rules on either side that make the difference for those classes, with the side each is on. */
  readonly rules: readonly DiffHeadlineRule[];
}

/** A rule a headline names: where it is, and on which side (two sides may share a file name). */
export interface DiffHeadlineRule extends DiffRuleRef {
  readonly side: 'old' | 'new';
}

export interface DiffSide {
  readonly file: string;
  readonly rules: number;
  readonly chains: number;
}

export interface DiffReport {
  readonly old: DiffSide;
  readonly new: DiffSide;
  /**
   * True only when the same behaviour is proven: no class fares differently and every class was shown to
   * fare like its representative throughout (`proven`). An approximate answer without a change is false.
   */
  readonly identical: boolean;
  /** True when the analysis is a proof: every class closed (refine.ts), nothing undecidable, no limit. */
  readonly proven: boolean;
  /** `identical` (proven), `changed` (some class fares differently), `no-change-found` (approximate). */
  readonly verdict: 'identical' | 'changed' | 'no-change-found';
  /** "N packet classes change · M Services affected". */
  readonly summary: string;
  /** The change in a reviewer's words, one sentence per Service or chain (headlines.ts); empty when none changes. */
  readonly headlines: readonly DiffHeadline[];
  readonly changedChains: readonly ChainChange[];
  /** Packet classes traced under both rulesets. */
  readonly classesTraced: number;
  readonly changes: readonly ClassChange[];
  readonly groups: readonly DiffGroup[];
  /** Services (kube-proxy `ns/name:port`) with at least one changed class, sorted. */
  readonly services: readonly string[];
  /** True when some answer rests on an undecidable match or on a limit of the class analysis. */
  readonly approximate: boolean;
  /** Why the answer may be approximate: unknown matches, constants not split on, limits reached. */
  readonly approximations: readonly string[];
  /** When approximate: the rules on one side only whose chains no class reached, or only unproven classes. */
  readonly unexplored: readonly DiffRuleRef[];
  readonly warnings: readonly string[];
}

export type DiffResult =
  { readonly ok: true; readonly report: DiffReport } | { readonly ok: false; readonly error: string };
