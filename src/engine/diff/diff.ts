/**
 * `diffRulesets`: what changes for packets between two rulesets. A semantic comparison, not a text diff:
 *
 *   1. Find the chains whose rules differ once counters and comments are ignored (normalize.ts).
 *   2. Find the chains whose constants can tell packets that reach those chains apart: the changed chains
 *      and what they jump to, the chains that rewrite what they test, and the jumps that lead to all of
 *      these (relevant.ts). A packet that only ever meets identical chains fares identically.
 *   3. Cut the packets that reach them into classes, per context of the jumps that lead there
 *      (contexts.ts), at every address, port, protocol, interface, mark and state constant (classes.ts).
 *   4. Trace each class's representative under both rulesets (explain off, chain indexes on), plus a
 *      sanity sweep (sweep.ts), and report the classes whose fates differ (compare.ts), grouped by the
 *      kube-proxy Service their rules name, else by the changed chain they cross.
 *
 * Exact for the matches the classes split on; a trace that rests on an undecidable match, a module whose
 * constants are not split on, or a limit reached makes the report say `approximate` and why.
 */
import { formatDiagnostic } from '../diagnostics.ts';
import type { Ruleset } from '../model.ts';
import { type NodeConfig, NodeModel } from '../eval/node.ts';
import { tracePacket } from '../eval/trace.ts';
import { IptRule } from '../iptables/rule-node.ts';
import { describePacketInput } from '../eval/packet-spec.ts';
import { type ClassEnv, type PacketClass, classId, classesOf } from './classes.ts';
import { compareFates, fatesOf, groupOf, responsibleRules } from './compare.ts';
import { buildContexts } from './contexts.ts';
import { ruleFacts } from './facts.ts';
import { JumpGraph } from './graph.ts';
import { changedChains, chainKey } from './normalize.ts';
import { relevantChains } from './relevant.ts';
import { type Span, addrValue, netSpan } from './space.ts';
import { type Family, parseNet } from '../net/addr.ts';
import { sweepClasses } from './sweep.ts';
import type { ClassChange, DiffGroup, DiffGroupKey, DiffReport, DiffResult, DiffSide } from './types.ts';

export interface DiffOptions {
  /** The node both rulesets run on (addresses, interfaces, routes), as for `tracePacket`. */
  readonly node?: NodeConfig;
  /** Also report classes whose matched rules differ while their fates do not. */
  readonly paths?: boolean;
  /** Trace the sanity sweep too (default true). */
  readonly sweep?: boolean;
  /** Classes traced at most (default 200,000); beyond, the report is approximate. */
  readonly maxClasses?: number;
}

/** Address intervals where the node's routing answers differently: loopback, routes, interface networks. */
function routeCuts(config: NodeConfig, family: Family): Span[] {
  const nets = [...(config.routes ?? []).map((r) => r.dst), ...(config.interfaces ?? []).flatMap((i) => i.addresses ?? [])];
  const out: Span[] = [family === 4 ? { lo: 0x7f000000n, hi: 0x7fffffffn } : { lo: 1n, hi: 1n }];
  for (const text of nets) {
    const net = parseNet(text);
    if (net && net.v === family) out.push(netSpan(net));
  }
  return out;
}

function sideOf(rs: Ruleset): DiffSide {
  let chains = 0;
  for (const t of rs.tables.values()) chains += t.chains.size;
  return { file: rs.file, rules: rs.ruleCount, chains };
}

export function summaryLine(changes: number, services: number): string {
  return `${changes} packet ${changes === 1 ? 'class changes' : 'classes change'} · ${services} Service${services === 1 ? '' : 's'} affected`;
}

/** The representative in `packetlens trace --packet` syntax, with every field that sets it apart. */
function packetText(c: PacketClass, sport: number | null): string {
  const i = c.input;
  const extra: string[] = [];
  if (i.from === 'local') extra.push('from=local');
  if (i.in !== undefined) extra.push(`in=${i.in}`);
  if (i.mark !== undefined) extra.push(`mark=0x${Number(i.mark).toString(16)}`);
  if (i.ctstate !== undefined) extra.push(`state=${i.ctstate}`);
  if (i.icmpType !== undefined) extra.push(`type=${i.icmpType}`, `code=${i.icmpCode ?? 0}`);
  const text = describePacketInput({ ...i, sport: sport ?? undefined });
  return [text, ...extra].join(' ') + (c.affinity.length ? `  (client in recent list ${c.affinity.join(', ')})` : '');
}

function groupTitle(k: DiffGroupKey): string {
  return k.kind === 'service' ? `Service ${k.name}` : `chain ${k.table} ${k.chain}`;
}

/** Errors in the rulesets that matter to the comparison: structure, and the options of changed rules. */
function errorsOf(rs: Ruleset, changed: DiffReport['changedChains']): string[] {
  const out = rs.diagnostics.filter((d) => d.severity === 'error').map((d) => formatDiagnostic(rs.file, d));
  for (const c of changed) {
    for (const r of rs.tables.get(c.table)?.chains.get(c.chain)?.rules ?? []) {
      if (r instanceof IptRule) for (const d of r.diagnostics()) if (d.severity === 'error') out.push(formatDiagnostic(rs.file, d));
    }
  }
  return [...new Set(out)];
}

export function diffRulesets(oldRs: Ruleset, newRs: Ruleset, options: DiffOptions = {}): DiffResult & { errors?: string[] } {
  if (oldRs.tables.size && newRs.tables.size && oldRs.family !== newRs.family) {
    return { ok: false, error: `${oldRs.file} is IPv${oldRs.family} and ${newRs.file} is IPv${newRs.family}: compare dumps of one family` };
  }
  const family = oldRs.tables.size ? oldRs.family : newRs.family;
  const chainChanges = changedChains(oldRs, newRs);
  const changed = new Set(chainChanges.map((c) => chainKey(c.table, c.chain)));
  const node = new NodeModel(options.node);
  const env: ClassEnv = { family, nodeAddrs: node.addresses(family).map(addrValue), routeCuts: routeCuts(options.node ?? {}, family), uplink: node.uplink };
  const approximations: string[] = [];
  const classes = new Map<string, PacketClass>();
  const maxClasses = options.maxClasses ?? 200_000;
  let limited = false;
  const addClass = (c: PacketClass) => {
    const id = classId(c);
    if (classes.has(id)) return;
    if (classes.size >= maxClasses) limited = true;
    else classes.set(id, c);
  };
  if (changed.size) {
    const graph = new JumpGraph([oldRs, newRs]);
    const rel = relevantChains(graph, changed, family);
    const ctxs = buildContexts(graph, rel, family, env.nodeAddrs);
    let degraded = 0;
    const unsplit = new Map<string, number>();
    let inexact = 0;
    for (const group of ctxs.groups) {
      const r = classesOf(group.ctx, group.rules, env);
      if (r.degraded) degraded++;
      for (const c of r.classes) addClass(c);
      for (const rule of group.rules) {
        const f = ruleFacts(rule, family);
        for (const m of f.unsplit) unsplit.set(m, (unsplit.get(m) ?? 0) + 1);
        if (f.inexact) inexact++;
      }
    }
    if (degraded) approximations.push(`${degraded} context${degraded === 1 ? ' has' : 's have'} more than 2048 classes: each dimension was varied alone there`);
    if (unsplit.size) approximations.push(`classes are not split on the constants of ${[...unsplit].map(([m, n]) => `-m ${m} (${n} rule${n === 1 ? '' : 's'})`).join(', ')}`);
    if (inexact) approximations.push(`${inexact} rule${inexact === 1 ? ' uses' : 's use'} a non-contiguous address mask: classes cut at its lowest and highest address`);
    if (ctxs.truncated) approximations.push('some contexts had more than 512 rules leading to them; the rest were not used to cut classes');
    if (options.sweep ?? true) for (const c of sweepClasses([oldRs, newRs], env)) addClass(c);
  }
  if (limited) approximations.push(`more than ${maxClasses} packet classes: only the first ${maxClasses} were traced`);

  const warnings = [...node.problems];
  if (changed.size && env.nodeAddrs.length === 0) warnings.push('no node addresses given: NodePorts and local delivery are analysed for 127.0.0.1 only (pass --node-ip)');
  const changes: ClassChange[] = [];
  let approxClasses = 0;
  for (const c of classes.values()) {
    const opts = { node, explain: false, recent: c.affinity };
    const a = tracePacket(oldRs, c.input, opts);
    const b = tracePacket(newRs, c.input, opts);
    if (!a.ok || !b.ok) {
      warnings.push(`${describePacketInput(c.input)}: ${a.ok ? '' : a.error}${b.ok ? '' : b.error}`);
      continue;
    }
    const oldF = fatesOf(a.trace, oldRs, options.paths ?? false);
    const newF = fatesOf(b.trace, newRs, options.paths ?? false);
    const aspects = compareFates(oldF, newF);
    if (!aspects.length) continue;
    const approximate = a.trace.unknown || b.trace.unknown;
    if (approximate) approxClasses++;
    const ro = responsibleRules({ rs: oldRs, other: newRs }, a.trace, changed);
    const rn = responsibleRules({ rs: newRs, other: oldRs }, b.trace, changed);
    const none = !ro.differing.length && !rn.differing.length;
    const oldRules = none ? ro.inChanged : ro.differing;
    const newRules = none ? rn.inChanged : rn.differing;
    changes.push({
      class: { packet: packetText(c, a.trace.packet.sport), extent: c.extent, origin: c.origin },
      group: groupOf([{ rs: oldRs, trace: a.trace }, { rs: newRs, trace: b.trace }], changed, [...oldRules, ...newRules]),
      aspects,
      old: oldF,
      new: newF,
      oldRules,
      newRules,
      approximate,
    });
  }
  if (approxClasses) approximations.push(`${approxClasses} changed class${approxClasses === 1 ? ' rests' : 'es rest'} on undecidable matches (see each fate's assumptions)`);
  return { ok: true, report: assemble(oldRs, newRs, chainChanges, classes.size, changes, approximations, warnings), errors: [...errorsOf(oldRs, chainChanges), ...errorsOf(newRs, chainChanges)] };
}

function assemble(oldRs: Ruleset, newRs: Ruleset, chainChanges: DiffReport['changedChains'], traced: number, unordered: ClassChange[], approximations: string[], warnings: string[]): DiffReport {
  const key = (k: DiffGroupKey) => (k.kind === 'service' ? `0 ${k.name}` : `1 ${k.table} ${k.chain}`);
  const changes = unordered.map((c, i) => ({ c, i })).sort((x, y) => key(x.c.group).localeCompare(key(y.c.group)) || x.i - y.i).map((x) => x.c);
  const groups: DiffGroup[] = [];
  changes.forEach((c, i) => {
    const last = groups[groups.length - 1];
    if (last && key(last.key) === key(c.group)) (last.changes as number[]).push(i);
    else groups.push({ key: c.group, title: groupTitle(c.group), changes: [i] });
  });
  const services = groups.flatMap((g) => (g.key.kind === 'service' ? [g.key.name] : []));
  return {
    old: sideOf(oldRs),
    new: sideOf(newRs),
    identical: changes.length === 0,
    summary: summaryLine(changes.length, services.length),
    changedChains: chainChanges,
    classesTraced: traced,
    changes,
    groups,
    services,
    approximate: approximations.length > 0,
    approximations,
    warnings,
  };
}
