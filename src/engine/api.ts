/**
 * The engine's one public boundary, used by the CLI, the editor extension, the webview host and the tests.
 * Everything here is pure and deterministic: no I/O, no `vscode`, no Node-only modules, so it also runs
 * in a browser (the web extension).
 */
export type { Diagnostic, DiagnosticCode, Position, Range, Severity } from './diagnostics.ts';
export type { BaseChainInfo, Chain, HookChain, HookName, Rule, Ruleset, Table, TargetInstance } from './model.ts';
export type { NfFamily } from './hooks.ts';
export { HOOKS, NAT_CORE_PRIORITY, TABLE_HOOKS, baseChainsForHook, chainType, familySees } from './model.ts';
export { clip, formatDiagnostic } from './diagnostics.ts';
export { parseIptables, DEFAULT_MAX_BYTES, looksBinary, type ParseOptions } from './iptables/parse.ts';
export { isValidated, validateRules } from './iptables/resolve.ts';
export { describeFileErrors } from './eval/file-errors.ts';
export { printIptables, printRuleSpec } from './iptables/print.ts';
export { parseIpsetSave, type IpsetStore } from './ipset/store.ts';
export { NodeModel, type NodeConfig, type InferredAddress } from './eval/node.ts';
export { clusterNodeHints, inferNodeAddresses } from './eval/node-inference.ts';
export { parseRuleset, type ParsedRuleset, type RulesetInputFormat } from './parse-ruleset.ts';
export { parseNftText, parseNftScript, NFT_MAX_BYTES, type NftParseOptions } from './nftables/parse-script.ts';
export { parseNftJson } from './nftables/parse-json.ts';
export { parseNftAny } from './nftables/parse-nft.ts';
export { detectRulesetFormat, type RulesetFormat } from './nftables/parse-detect.ts';
export { numgenShares } from './nftables/expr/numgen.ts';
export { checkLowering } from './nftables/lazy-rule.ts';
export { ruleMayMention } from './nftables/rule-source.ts';
export { Lexer as NftLexer, type Tok as NftToken } from './nftables/parse-tokenizer.ts';
export type {
  NftRuleset,
  NftTable,
  NftChain,
  NftRule,
  NftSet,
  NftStmt,
  NftExpr,
  NftParseResult,
  NftFamily,
  NftMatch,
  NftMapping,
  NftVerdictExpr,
  NftVmap,
} from './nftables/ast.ts';
export { tracePacket, probabilitySums, type TraceOptions, type TraceResult } from './eval/trace.ts';
export { prepareTraceSteps } from './eval/warm.ts';
export { parsePacketText, packetFromJson, describePacketInput, type PacketInput } from './eval/packet-spec.ts';
export type {
  Trace,
  TraceOutcome,
  TraceStep,
  TraceMiss,
  TraceMissGroup,
  TraceEvent,
  TraceAssumption,
  Disposition,
  PacketView,
  TraceBudget,
  FileErrors,
} from './eval/trace-types.ts';
export { kernelProbability, statisticBranch, type StatisticBranch } from './matches/statistic.ts';
export { lintRuleset, type LintDiagnostic, type LintOptions } from './lint/lint.ts';
export { lintSteps } from './lint/lint.ts';
export { lintNft, type NftLintDiagnostic } from './lint/nft.ts';
export { chainReferences, type ChainReference, type TargetName } from './lint/refs.ts';
export { classifyTarget, type TargetEffectClass } from './lint/effects.ts';
export { targetRange, type IpMatch, type MatchInstance, type Negatable, type TableKind } from './model.ts';
export {
  type Rational,
  ONE,
  ZERO,
  rational,
  mul,
  add,
  complement,
  isZero,
  toNumber,
  format as formatRational,
} from './rational.ts';
export {
  type Addr,
  type Family,
  type Net,
  formatAddr,
  formatNet,
  parseAddr,
  parseNet,
  netContains,
} from './net/addr.ts';
export { optionRange, type ParsedOption } from './matches/types.ts';
export { TARGETS, STANDARD_TARGETS } from './targets/registry.ts';
export { MATCHES } from './matches/registry.ts';
export { diffRulesets, summaryLine, type DiffOptions } from './diff/diff.ts';
export { DEFAULT_MAX_CLASSES, DEFAULT_MAX_RETAINED, DEFAULT_MAX_WORK } from './diff/retain.ts';
export { formatDiffText, formatDiffMarkdown, fateText, noChangeText, headlineSentences } from './diff/format.ts';
export type {
  DiffReport,
  DiffResult,
  ChainChange,
  ClassChange,
  DiffFate,
  DiffGroup,
  DiffGroupKey,
  DiffRuleRef,
  DiffHeadline,
  DiffHeadlineRule,
  PacketClassView,
  ClassExtent,
  ChangeAspect,
} from './diff/types.ts';
export { diffManifests, type ManifestSide } from './diff/manifest-diff.ts';
export { ruleOptionDiagnostics } from './lint/validate.ts';
export type {
  IpvsTable,
  IpvsService,
  IpvsRealServer,
  IpvsProtocol,
  IpvsForward,
  RealServerOrder,
} from './ipvs/types.ts';
export { parseIpvsadmRules, type IpvsParseResult, type IpvsParseOptions } from './ipvs/parse-rules.ts';
export { parseIpvsadmList } from './ipvs/parse-list.ts';
export { renderIpvsadmList, renderIpvsadmRules } from './ipvs/render.ts';
export { scheduleNewConnection, IPVS_SCHEDULERS } from './ipvs/schedule.ts';
export type {
  ScheduleRequest,
  ScheduleResult,
  ScheduleWorld,
  SchedulePick,
  ScheduleClient,
} from './ipvs/sched-types.ts';
export { ipvsInterceptors, type IpvsTraceOptions } from './ipvs/intercept.ts';
export type { HookInterceptor, InterceptBranch, InterceptResult, InterceptAction } from './eval/intercept.ts';
export {
  synthesizeIpvs,
  type IpvsSynthOptions,
  type IpvsProxyState,
  type IpsetContent,
} from './kube/modes/ipvs/synth.ts';
export { renderIpvsRestore, renderIpvsNodeSave, renderIpsetSave } from './kube/modes/ipvs/render.ts';
export type { FileDiagnostic } from './diagnostics.ts';
export { readManifests, type ManifestSet } from './kube/manifest/read.ts';
export type { KubeObject, ServiceM, ServicePortM, PodM, NodeM } from './kube/manifest/types.ts';
export type { Loc } from './kube/manifest/yaml-node.ts';
export { buildClusterModel, endpointString, type BuildOptions } from './kube/model/build.ts';
export type {
  ClusterModel,
  ServicePortInfo,
  EndpointInfo,
  NodeInfo,
  PodInfo,
  Prediction,
  KubeProxySettings,
} from './kube/model/types.ts';
export { synthesizeIptables, type KubeProxyRules, type SynthOptions } from './kube/modes/iptables/synth.ts';
export { renderKubeProxyRestore, renderNodeSave } from './kube/modes/iptables/render.ts';
export { dumpNode, type DumpNode } from './kube/dump-node.ts';
export {
  proxyMode,
  configuredMode,
  modelCost,
  PROXY_MODES,
  PROXY_MODE_NAMES,
  KUBE_PROXY_MODE_NAMES,
} from './kube/modes/index.ts';
export type {
  ProxyMode,
  ProxyModeName,
  NodeRules,
  NodeSynthOptions,
  SideFile,
  ModeWording,
  Markdown,
} from './kube/modes/types.ts';
export {
  traceFromManifests,
  synthesizedNode,
  type ManifestTrace,
  type ManifestTraceResult,
  type ManifestTraceOptions,
  type Hop,
  type OutcomeDestination,
} from './kube/e2e.ts';
export { l2Announcer, type Announcement } from './kube/metallb.ts';
export { serviceChainNames, endpointChainName } from './kube/hash.ts';
export { formatPercent, outcomeHeadline } from './present.ts';
export { loadsModule, targetNameOf } from './iptables/rule-node.ts';
export { chainNameStart, optionOf, ruleMentions, ruleText } from './iptables/rule-text.ts';
export {
  readNodeFile,
  readNodeContext,
  mergeNodeContext,
  detectNodeFile,
  NODE_FILE_MAX_BYTES,
} from './nodectx/read.ts';
export type { NodeContext, NodeFileKind, NodeFileResult, NodeInterface, NodeRoute, NodeRule } from './nodectx/types.ts';
export { classifyBundleFile, type BundleFileKind } from './bundle.ts';
export { nodeContextNotes, type NodeContextNote } from './node-check.ts';
export type { RouteResult, RouteQuery } from './eval/routing.ts';
export { outcomeInKernelWords, xtVerdict, nftVerdict, type KernelWordsFormat } from './live/words.ts';
export { readCapture, type Capture, type CaptureFormat, type CapturedEvent } from './live/capture.ts';
export { compareWithCapture, type LiveComparison } from './live/align.ts';
