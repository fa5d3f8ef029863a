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
import type { Rule, Ruleset } from '../model.ts';
import type { Trace } from '../eval/trace-types.ts';
import { type Box, boxExtent, boxId, boxInput, wholeBox } from './box.ts';
import type { PacketInput } from '../eval/packet-spec.ts';
import { checkClass } from './refine.ts';
import { type NodeConfig, NodeModel } from '../eval/node.ts';
import { tracePacket } from '../eval/trace.ts';
import { ruleKey } from '../iptables/rule-text.ts';
import { describePacketInput } from '../eval/packet-spec.ts';
import { type ClassEnv, type PacketClass, classId } from './classes.ts';
import { compareFates, fatesOf, groupOf, responsibleRules } from './compare.ts';
import { JumpGraph } from './graph.ts';
import { changedChains, chainKey, differingRules, mentionsSet, tableByName } from './normalize.ts';
import { type Span, addrValue, netSpan } from './space.ts';
import { type Family, parseNet } from '../net/addr.ts';
import { sweepClasses } from './sweep.ts';
import { regionClasses } from './region.ts';
import { type MarkRenaming, markRenaming, mirrorClass, movedPart } from './mark-renaming.ts';
import { diffHeadlines } from './headlines.ts';
import {
  assemble,
  canonical,
  dropRedundant,
  errorsOf,
  mergeAdjacent,
  packetText,
  ruleRef,
  withNodeLabel,
} from './report.ts';
import {
  DEFAULT_MAX_CLASSES,
  DEFAULT_MAX_RETAINED,
  DEFAULT_MAX_WORK,
  Shared,
  sharedChangeKey,
  weightOf,
} from './retain.ts';
import type { ChainChange, ClassChange, DiffReport, DiffResult, DiffRuleRef } from './types.ts';

export { summaryLine } from './report.ts';

export interface DiffOptions {
  /** The node both rulesets run on (addresses, interfaces, routes), as for `tracePacket`. */
  readonly node?: NodeConfig;
  /** Also report classes whose matched rules differ while their fates do not. */
  readonly paths?: boolean;
  /** Trace the sanity sweep too (default true). */
  readonly sweep?: boolean;
  /** Classes traced at most (default `DEFAULT_MAX_CLASSES`); beyond, the report is approximate. */
  readonly maxClasses?: number;
  /**
   * Changed classes kept at most, weighed by their fates and rules (retain.ts `weightOf`; default
   * `DEFAULT_MAX_RETAINED`): past it the comparison stops and the report is approximate, so that its memory
   * and its printed size stay bounded whatever the inputs.
   */
  readonly maxRetained?: number;
  /**
   * Rules the proof looks at in all (refine.ts `checkClass`; default `DEFAULT_MAX_WORK`): past it the
   * comparison stops and the report is approximate, so that its time stays bounded whatever the inputs.
   */
  readonly maxWork?: number;
}

/**
 * Address intervals where the node's routing answers differently: loopback, routes, interface networks —
 * the settings' and, with the node's own files, every route of every table, every interface address and
 * network, and the addresses policy rules select (so each class routes one way throughout).
 */
function routeCuts(config: NodeConfig, family: Family): Span[] {
  const ctx = config.context;
  const nets = [
    ...(config.routes ?? []).map(r => r.dst),
    ...(config.interfaces ?? []).flatMap(i => i.addresses ?? []),
    ...(ctx?.routes ?? []).map(r => r.dst),
    ...(ctx?.interfaces ?? []).flatMap(i => i.addrs.flatMap(a => [`${a.local}/${a.prefixlen}`, a.local])),
    ...(ctx?.rules ?? []).flatMap(r => [r.src, r.dst].filter((x): x is string => !!x)),
  ];
  const out: Span[] = [family === 4 ? { lo: 0x7f000000n, hi: 0x7fffffffn } : { lo: 1n, hi: 1n }];
  for (const text of nets) {
    const net = parseNet(text);
    if (net && net.v === family) out.push(netSpan(net));
  }
  return out;
}

export function diffRulesets(
  oldRs: Ruleset,
  newRs: Ruleset,
  options: DiffOptions = {},
): DiffResult & { errors?: string[] } {
  const nft = oldRs.format === 'nft' || newRs.format === 'nft';
  if (!nft && oldRs.tables.size && newRs.tables.size && oldRs.family !== newRs.family) {
    return {
      ok: false,
      error: `${oldRs.file} is IPv${oldRs.family} and ${newRs.file} is IPv${newRs.family}: compare dumps of one family`,
    };
  }
  const chainChanges = changedChains(oldRs, newRs);
  const changed = new Set(chainChanges.map(c => chainKey(c.table, c.chain)));
  const node = new NodeModel(options.node);
  const differing = new Map<string, { side: 0 | 1; rule: Rule }[]>();
  for (const c of chainChanges) differing.set(chainKey(c.table, c.chain), changedRules(oldRs, newRs, c));
  const run = nft
    ? diffNft(oldRs, newRs, chainChanges, node, options)
    : [diffFamily(oldRs, newRs, oldRs.tables.size ? oldRs.family : newRs.family, changed, node, options, chainChanges)];
  const warnings = [...node.problems];
  if (changed.size && run.some(r => r.env.nodeAddrs.length === 0))
    warnings.push(
      'no node addresses given: NodePorts and local delivery are analysed for 127.0.0.1 only (pass --node-ip)',
    );
  const changes = run.flatMap(r => r.changes);
  const approximations: string[] = [];
  const maxClasses = options.maxClasses ?? DEFAULT_MAX_CLASSES;
  const refused = run.reduce((a, r) => a + r.refused, 0);
  if (refused)
    approximations.push(
      `more than ${maxClasses} packet classes: ${refused} more class${refused === 1 ? ' was' : 'es were'} found and not traced (nor what they would split into)`,
    );
  const stopped = run.filter(r => r.stopped);
  const budgets = {
    report: `report budget (${options.maxRetained ?? DEFAULT_MAX_RETAINED} fates and rules kept)`,
    work: `work budget (${options.maxWork ?? DEFAULT_MAX_WORK} rule checks)`,
  };
  for (const by of ['report', 'work'] as const) {
    const at = stopped.filter(r => r.stopped!.by === by);
    if (!at.length) continue;
    const waiting = at.reduce((a, r) => a + r.stopped!.waiting, 0);
    const kept = at.reduce((a, r) => a + r.stopped!.changes, 0);
    approximations.push(
      `the comparison stopped at its ${budgets[by]} after ${kept} changed class${kept === 1 ? '' : 'es'}: ${waiting} packet class${waiting === 1 ? ' was' : 'es were'} still to trace and were not (nor what they would split into)`,
    );
  }
  const openReasons = new Map<string, number>();
  for (const r of run) for (const [k, n] of r.openReasons) openReasons.set(k, (openReasons.get(k) ?? 0) + n);
  for (const [reason, n] of openReasons)
    approximations.push(`${n} class${n === 1 ? '' : 'es'} could not be proven to fare alike throughout: ${reason}`);
  // Policy rules that select by mark, interface or source are not class dimensions: not called proven.
  const selective = (options.node?.context?.rules ?? []).filter(
    r => r.fwmark !== null || r.iif !== null || r.oif !== null || r.src !== null,
  );
  if (selective.length && changed.size)
    approximations.push(
      `the node's policy routing rules select by mark, interface or source (${selective.length} rule${selective.length === 1 ? '' : 's'}, e.g. ${selective[0]!.from.file}:${selective[0]!.from.line}): packet classes are not cut by them`,
    );
  const approxClasses = run.reduce((a, r) => a + r.approxClasses, 0);
  if (approxClasses)
    approximations.push(
      `${approxClasses} changed class${approxClasses === 1 ? ' is' : 'es are'} approximate (see each class)`,
    );
  // The differing rules whose chains no class reached, or only classes the proof could not close.
  const unexplored: DiffRuleRef[] = [];
  if (approximations.length) {
    for (const list of differing.values()) {
      for (const { side, rule } of list) {
        const k = `${side} ${rule.table} ${rule.chain}`;
        if (!run.some(r => r.entered.has(k)) || run.some(r => r.enteredOpen.has(k)))
          unexplored.push(ruleRef(side === 0 ? oldRs : newRs, rule));
      }
    }
  }
  const traced = run.reduce((a, r) => a + r.traced, 0);
  for (const r of run) warnings.push(...r.warnings);
  const partial = refused > 0 || stopped.length > 0;
  const body = assemble(oldRs, newRs, chainChanges, traced, changes, approximations, warnings, unexplored, partial);
  const report: DiffReport = { ...body, headlines: diffHeadlines(body, oldRs, newRs) };
  return { ok: true, report, errors: [...errorsOf(oldRs, chainChanges), ...errorsOf(newRs, chainChanges)] };
}

/** The rules of a changed chain that differ, and (nftables) those that look up a set whose contents changed. */
function changedRules(oldRs: Ruleset, newRs: Ruleset, c: ChainChange): { side: 0 | 1; rule: Rule }[] {
  const out = differingRules(oldRs, newRs, c.table, c.chain);
  if (!c.sets?.length) return out;
  [oldRs, newRs].forEach((rs, side) => {
    for (const rule of tableByName(rs, c.table)?.chains.get(c.chain)?.rules ?? [])
      if (c.sets!.some(n => mentionsSet(ruleKey(rule), n)) && !out.some(x => x.rule === rule))
        out.push({ side: side as 0 | 1, rule });
  });
  return out;
}

/** What exploring one family's classes found. */
interface FamilyRun {
  readonly env: ClassEnv;
  readonly changes: ClassChange[];
  readonly traced: number;
  /** Classes found past the class budget and not traced. */
  readonly refused: number;
  /** Set when the report or the work budget stopped the exploration: the changes kept, the classes left untraced. */
  readonly stopped: { changes: number; waiting: number; by: 'report' | 'work' } | null;
  readonly approxClasses: number;
  readonly openReasons: Map<string, number>;
  /** Chains (`side table chain`) entered by some boxed class, and by some class the proof could not close. */
  readonly entered: Set<string>;
  readonly enteredOpen: Set<string>;
  readonly warnings: string[];
}

function classEnv(node: NodeModel, options: DiffOptions, family: Family): ClassEnv {
  const cuts = routeCuts(options.node ?? {}, family);
  return {
    family,
    nodeAddrs: node.addresses(family).map(addrValue),
    routeCuts: cuts,
    // rp_filter looks the source up as a destination: with it on, sources are cut where routes are.
    srcRouteCuts: rpFilterOn(options.node) ? cuts : [],
    uplink: node.uplink,
  };
}

/** Whether the node's files turn rp_filter on (node-context.ts uses the larger of `all` and the interface's). */
function rpFilterOn(config: NodeConfig | undefined): boolean {
  for (const [k, v] of config?.context?.sysctls ?? [])
    if (/\.rp_filter$/.test(k) && v.value.trim() !== '0') return true;
  return false;
}

/**
 * The classes still to trace, each box once, at most `max` in all. Taken last-in first-out: a split's
 * pieces are traced (and split further) before their siblings, so the classes waiting stay a few levels
 * of splits rather than a whole breadth of them (issue 12: 2 GB for 200k classes when taken in order).
 */
function classQueue(max: number) {
  const pending: PacketClass[] = [];
  const ids = new Set<string>();
  const state = { limited: false, added: 0, refused: 0 };
  const add = (c: PacketClass) => {
    const id = c.box ? boxId(c.box, c.input, c.affinity) : classId(c);
    if (ids.has(id)) return;
    if (state.added >= max) {
      state.limited = true;
      state.refused++;
    } else {
      ids.add(id);
      pending.push(c);
      state.added++;
    }
  };
  return { pending, add, state };
}

/** iptables dumps: classes from the changed chains' regions (region.ts) and the sweep, refined. */
function diffFamily(
  oldRs: Ruleset,
  newRs: Ruleset,
  family: Family,
  changed: Set<string>,
  node: NodeModel,
  options: DiffOptions,
  chainChanges: readonly ChainChange[],
): FamilyRun {
  const env = classEnv(node, options, family);
  const q = classQueue(options.maxClasses ?? DEFAULT_MAX_CLASSES);
  let sigma: MarkRenaming | null = null;
  if (changed.size) {
    // The packets whose fate can change: those that reach a changed chain in a state its two versions
    // answer differently (region.ts); every other packet meets the same rules on both sides. When the new
    // rules are the old ones with mark bits renamed, only packets whose mark the renaming moves can fare
    // otherwise, and each such class stands for its mirror (mark-renaming.ts).
    const graph = new JumpGraph([oldRs, newRs]);
    sigma = markRenaming(oldRs, newRs, chainChanges, options.node, options.paths ?? false);
    for (const c of regionClasses(graph, changed, env).classes)
      for (const p of sigma ? movedPart(env, c, sigma) : [c]) q.add(p);
    if (options.sweep ?? true) for (const c of sweepClasses([oldRs, newRs], env)) q.add(c);
  }
  const s = sigma;
  return explore(
    oldRs,
    newRs,
    env,
    q,
    changed,
    node,
    options,
    () => false,
    s ? c => mirrorClass(env, c, s) : undefined,
  );
}

/**
 * The packet families an nftables comparison covers: IPv4 where an ip or inet table (or an iptables dump of
 * IPv4) is on either side, IPv6 where an ip6 or inet table is.
 */
function nftFamilies(rulesets: readonly Ruleset[]): Family[] {
  const out = new Set<Family>();
  for (const rs of rulesets) {
    if (rs.format !== 'nft') {
      if (rs.tables.size) out.add(rs.family);
      continue;
    }
    for (const t of rs.tables.values()) {
      if (t.family === 'ip' || t.family === 'inet') out.add(4);
      if (t.family === 'ip6' || t.family === 'inet') out.add(6);
    }
  }
  return [...out].sort();
}

/**
 * nftables rulesets: rules are programs whose jumps hide in verdict maps and whose constants sit in sets,
 * so classes start from every packet of each family and origin (a box over the whole space) and refinement
 * (refine.ts with nft-facts.ts) cuts them against every rule on their paths, on both sides, until none tells
 * their packets apart. Without changed chains or sets nothing is traced: identical chains and sets behave
 * alike.
 */
function diffNft(
  oldRs: Ruleset,
  newRs: Ruleset,
  chainChanges: readonly ChainChange[],
  node: NodeModel,
  options: DiffOptions,
): FamilyRun[] {
  const changed = new Set(chainChanges.map(c => chainKey(c.table, c.chain)));
  if (!chainChanges.length) return [];
  return nftFamilies([oldRs, newRs]).map(family => {
    const env = classEnv(node, options, family);
    const q = classQueue(options.maxClasses ?? DEFAULT_MAX_CLASSES);
    for (const from of ['outside', 'local'] as const) {
      const box = wholeBox(family, from, {});
      const input = boxInput(family, box, null, {});
      if (input)
        q.add({ input, affinity: [], origin: 'changed', box, extent: boxExtent(family, box, input, [], env.uplink) });
    }
    return explore(oldRs, newRs, env, q, changed, node, options, undefined);
  });
}

/** Traces every class of the queue on both sides, refines the boxes and collects the changes. */
function explore(
  oldRs: Ruleset,
  newRs: Ruleset,
  env: ClassEnv,
  q: ReturnType<typeof classQueue>,
  changed: Set<string>,
  node: NodeModel,
  options: DiffOptions,
  irrelevantJump: ((rule: Rule) => boolean) | undefined,
  mirror?: (c: PacketClass) => PacketClass | null,
): FamilyRun {
  const { pending } = q;
  const family = env.family;
  const maxClasses = options.maxClasses ?? DEFAULT_MAX_CLASSES;
  const maxRetained = options.maxRetained ?? DEFAULT_MAX_RETAINED;
  const maxWork = options.maxWork ?? DEFAULT_MAX_WORK;
  const work = { rules: 0 };
  // Equal fates and rule lists are kept once (retain.ts): a change every Service crosses repeats them.
  const shared = new Shared();
  let weight = 0;
  let stopped: FamilyRun['stopped'] = null;
  const warnings: string[] = [];
  const changes: ClassChange[] = [];
  const boxes = new Map<ClassChange, { box: Box; input: PacketInput; affinity: readonly string[] }>();
  let approxClasses = 0;
  const openReasons = new Map<string, number>();
  const entered = new Set<string>();
  const enteredOpen = new Set<string>();
  const note = (side: number, trace: Trace, into: Set<string>) => {
    for (const o of trace.outcomes)
      for (const e of o.events) if (e.kind === 'chain') into.add(`${side} ${e.table} ${e.chain}`);
  };
  const changeOf = (
    c: PacketClass,
    ta: Trace,
    tb: Trace,
    oldF: ReturnType<typeof fatesOf>,
    newF: ReturnType<typeof fatesOf>,
    aspects: ReturnType<typeof compareFates>,
    approximate: boolean,
  ): ClassChange => {
    const ro = responsibleRules({ rs: oldRs, other: newRs }, ta, changed);
    const rn = responsibleRules({ rs: newRs, other: oldRs }, tb, changed);
    const none = !ro.differing.length && !rn.differing.length;
    const oldRules = none ? ro.inChanged : ro.differing;
    const newRules = none ? rn.inChanged : rn.differing;
    return {
      class: { packet: packetText(c, ta.packet.sport), extent: c.extent, origin: c.origin },
      group: groupOf(
        [
          { rs: oldRs, trace: ta },
          { rs: newRs, trace: tb },
        ],
        changed,
        [...oldRules, ...newRules],
      ),
      aspects: shared.share(aspects),
      old: shared.share(oldF),
      new: shared.share(newF),
      oldRules: shared.share(oldRules),
      newRules: shared.share(newRules),
      approximate,
    };
  };
  while (pending.length) {
    if (weight > maxRetained || work.rules > maxWork) {
      stopped = { changes: changes.length, waiting: pending.length, by: weight > maxRetained ? 'report' : 'work' };
      break;
    }
    const c = pending.pop()!;
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
    let open = false;
    if (c.box) {
      note(0, a.trace, entered);
      note(1, b.trace, entered);
      // A class that changes is cut exactly (no `skip`), so its range claims no packet that fares otherwise.
      // One that does not change may stay uncut at a source routing treats alike (refine.ts), and at the
      // rules `irrelevantJump` names: iptables names none (docs/diff.md, "No shortcut any more"); nftables
      // passes none, so its classes are always cut exactly.
      const chk = checkClass(
        env,
        c,
        [
          { rs: oldRs, trace: a.trace },
          { rs: newRs, trace: b.trace },
        ],
        q.add,
        aspects.length ? undefined : irrelevantJump,
        work,
      );
      if (chk.kind === 'split') {
        const before = q.state.added;
        for (const p of chk.pieces) q.add(p);
        if (q.state.added > before || !q.state.limited) continue;
        open = true;
        openReasons.set(
          `more than ${maxClasses} packet classes`,
          (openReasons.get(`more than ${maxClasses} packet classes`) ?? 0) + 1,
        );
      } else if (chk.kind === 'open') {
        open = true;
        openReasons.set(chk.reason, (openReasons.get(chk.reason) ?? 0) + 1);
      }
      if (open) {
        note(0, a.trace, enteredOpen);
        note(1, b.trace, enteredOpen);
      }
    }
    // A class whose marks a renaming of mark bits moves stands for its mirror too (mark-renaming.ts): the
    // mirror's walk under the old rules is this class's under the new ones, and the other way round.
    const views = [{ cls: c, ta: a.trace, tb: b.trace, oldF, newF, aspects }];
    const m = mirror?.(c);
    if (m) {
      const mo = fatesOf(b.trace, oldRs, options.paths ?? false);
      const mn = fatesOf(a.trace, newRs, options.paths ?? false);
      views.push({ cls: m, ta: b.trace, tb: a.trace, oldF: mo, newF: mn, aspects: compareFates(mo, mn) });
    }
    for (const v of views) {
      if (!v.aspects.length) continue;
      const approximate = open || v.ta.unknown || v.tb.unknown;
      if (approximate) approxClasses++;
      const change = changeOf(v.cls, v.ta, v.tb, v.oldF, v.newF, v.aspects, approximate);
      weight += weightOf(change);
      changes.push(change);
      if (v.cls.box && !approximate)
        boxes.set(change, { box: v.cls.box, input: v.cls.input, affinity: v.cls.affinity });
    }
  }
  const key = (c: ClassChange) => sharedChangeKey(shared, c);
  dropRedundant(changes, boxes, family, key);
  mergeAdjacent(changes, boxes, env, key);
  dropRedundant(changes, boxes, family, key);
  canonical(changes, boxes, env);
  for (let i = 0; i < changes.length; i++) changes[i] = withNodeLabel(changes[i]!, node);
  return {
    env,
    changes,
    traced: q.state.added - (stopped?.waiting ?? 0),
    refused: q.state.refused,
    stopped,
    approxClasses,
    openReasons,
    entered,
    enteredOpen,
    warnings,
  };
}
