/**
 * Entry point of the evaluator: builds the packet, runs it through the node's hooks, and merges paths that
 * end in the same state (same disposition, packet, marks, NAT and assumptions) by adding their exact
 * probabilities. Outcomes come most probable first; ties keep evaluation order, so traces are deterministic.
 */
import type { Ruleset } from '../model.ts';
import { type IpsetStore } from '../ipset/store.ts';
import { type Rational, add, format as formatRational, rational, toNumber } from '../rational.ts';
import type { TraceEnv } from './env.ts';
import type { HookInterceptor } from './intercept.ts';
import { type NodeConfig, NodeModel } from './node.ts';
import { clusterNodeHints, inferNodeAddresses, nodePortHint } from './node-inference.ts';
import { isLoopback, parseAddr } from '../net/addr.ts';
import { type PacketInput, buildPacket } from './packet-spec.ts';
import { type Ending, type ShowAddr, toOutcome, traceArriving, traceLocal, viewPacket } from './pipeline.ts';
import type { Trace, TraceOutcome } from './trace-types.ts';
import {
  type LiveMarks,
  type TraceLimits,
  DEFAULT_MAX_PATHS,
  DEFAULT_MAX_RECORDS,
  DEFAULT_MAX_STEPS,
  addRemainder,
  liveMarks,
  newLimits,
} from './budget.ts';
import { fileErrorsOf } from './file-errors.ts';

export interface TraceOptions {
  readonly node?: NodeConfig | NodeModel;
  readonly ipsets?: IpsetStore | null;
  /** `-m recent` lists in which the client has a live entry (session affinity). */
  readonly recent?: Iterable<string>;
  /**
   * Record why each evaluated rule did not match (default true; off uses chain indexes and is faster).
   * `'grouped'`: the same record given as `missesGrouped` (consecutive alike misses as one entry; the rules a
   * destination index skipped as one), `misses` left empty — thousands of entries fewer at 300k rules.
   */
  readonly explain?: boolean | 'grouped';
  /**
   * Keep each outcome's `events`, the full narrative for diagrams and kernel-words views (default true).
   * Off, outcomes carry `events: []`; everything else — steps, misses, notes, budgets — is the same.
   */
  readonly events?: boolean;
  /** Rule evaluations allowed in the whole trace (default 4,000,000). */
  readonly budget?: number;
  /** Paths followed at once before further forks are left unexplored (default 4096). */
  readonly maxPaths?: number;
  /** Outcomes listed; less likely ones join the "not enumerated" entry (default 256). */
  readonly maxOutcomes?: number;
  /** Steps, events and misses copied into forked paths (the trace's memory; default 3,000,000). */
  readonly maxRecords?: number;
  /** Packet handlers registered on hooks beside the tables, such as IPVS (intercept.ts). Default none. */
  readonly interceptors?: readonly HookInterceptor[];
  /**
   * Read node addresses off the ruleset when `node` is a config without addresses of a family
   * (node-inference.ts). Default true; a NodeModel passed as `node` is used as it is.
   */
  readonly inferNode?: boolean;
}

export type TraceResult = { ok: true; trace: Trace } | { ok: false; error: string };

function parseExact(s: string): Rational {
  const [n, d] = s.split('/');
  return rational(BigInt(n!), BigInt(d ?? '1'));
}

function endingKey(o: Omit<TraceOutcome, 'paths'>, live: LiveMarks, mark: number, ctmark: number): string {
  const p = o.packet;
  return [
    o.disposition,
    o.rejectWith,
    o.reason,
    p.src,
    p.sport,
    p.dst,
    p.dport,
    p.in,
    p.out,
    (mark & live.nf) >>> 0,
    (ctmark & live.ct) >>> 0,
    p.ctstate,
    o.dnat,
    o.snat,
    o.masquerade,
    o.assumptions.map(a => `${a.table}/${a.chain}/${a.rule}/${a.assumed}`).join(','),
  ].join('|');
}

const ALL_LIVE: LiveMarks = { nf: 0xffffffff, ct: 0xffffffff };

interface Merged {
  outcome: Omit<TraceOutcome, 'paths'>;
  prob: Rational;
  paths: number;
  order: number;
  mark: number;
  ctmark: number;
  variesNf: number;
  variesCt: number;
}

/**
 * Adds up paths that end in the same state. Mark bits no rule reads (`live`) do not tell states apart;
 * the bits in which merged paths differ are listed as `markVaries` / `ctmarkVaries`.
 */
export function mergeEndings(
  endings: Ending[],
  show?: ShowAddr,
  live: LiveMarks = ALL_LIVE,
  grouped = false,
): TraceOutcome[] {
  const byKey = new Map<string, Merged>();
  for (const e of endings) {
    const o = toOutcome(e, show, false, grouped);
    const path = e.path;
    const key = endingKey(o, live, path.pkt.mark, path.pkt.ct.mark);
    const prev = byKey.get(key);
    if (prev) {
      prev.prob = add(prev.prob, path.prob);
      prev.paths += path.count;
      prev.variesNf = (prev.variesNf | path.variesNf | (prev.mark ^ path.pkt.mark)) >>> 0;
      prev.variesCt = (prev.variesCt | path.variesCt | (prev.ctmark ^ path.pkt.ct.mark)) >>> 0;
    } else {
      const extra = path.loop ? { loop: path.loop } : {};
      byKey.set(key, {
        outcome: { ...o, ...extra },
        prob: path.prob,
        paths: path.count,
        order: byKey.size,
        mark: path.pkt.mark,
        ctmark: path.pkt.ct.mark,
        variesNf: path.variesNf,
        variesCt: path.variesCt,
      });
    }
  }
  // Each sum converted once (bigint work), not in every comparison of the sort.
  return [...byKey.values()]
    .map(v => ({ v, p: toNumber(v.prob) }))
    .sort((a, b) => b.p - a.p || a.v.order - b.v.order)
    .map(({ v, p }) => ({
      ...v.outcome,
      probability: p,
      probabilityExact: formatRational(v.prob),
      paths: v.paths,
      ...(v.variesNf ? { markVaries: `0x${v.variesNf.toString(16)}` } : {}),
      ...(v.variesCt ? { ctmarkVaries: `0x${v.variesCt.toString(16)}` } : {}),
    }));
}

/**
 * Keeps the `max` most likely outcomes; the others join the probability not enumerated, so the list stays
 * readable and bounded while the probabilities still add up.
 */
function capOutcomes(outcomes: TraceOutcome[], max: number, limits: TraceLimits): TraceOutcome[] {
  if (outcomes.length <= max) return outcomes;
  limits.exhausted ??= `more than ${max} distinct outcomes: the ${outcomes.length - max} least likely are not listed`;
  for (const o of outcomes.slice(max)) addRemainder(limits, parseExact(o.probabilityExact), o.paths, o.assumptions);
  return outcomes.slice(0, max);
}

function percentOf(p: Rational): string {
  const v = toNumber(p) * 100;
  return v >= 0.01 || v === 0 ? `${Number(v.toPrecision(4))} %` : `${v.toExponential(2)} %`;
}

/** One entry per assumption set for what the budgets left unexplored: "remaining probability p over N paths". */
function remainderOutcomes(limits: TraceLimits, packet: TraceOutcome['packet']): TraceOutcome[] {
  const out: TraceOutcome[] = [];
  for (const r of limits.remainder.values()) {
    const why = limits.exhausted ?? 'a budget ran out';
    const reason = `remaining probability ${formatRational(r.prob)} (${percentOf(r.prob)}) over ${r.paths} branch${r.paths === 1 ? '' : 'es'} not enumerated, each holding one outcome or more: ${why}`;
    out.push({
      probability: toNumber(r.prob),
      probabilityExact: formatRational(r.prob),
      disposition: 'unknown',
      packet,
      dnat: null,
      snat: null,
      masquerade: false,
      rejectWith: null,
      reason,
      steps: [],
      misses: [],
      assumptions: r.assumptions,
      events: [],
      notes: [],
      paths: r.paths,
      notEnumerated: { paths: r.paths, reason: why },
    });
  }
  return out;
}

/** The node a trace runs on: as given, or the given config completed by what the ruleset implies. */
export function nodeFor(
  rs: Ruleset,
  config: NodeConfig | NodeModel | undefined,
  infer = true,
  ipsets: IpsetStore | null = null,
): NodeModel {
  if (config instanceof NodeModel) return config;
  if (!infer || config?.inferred) return new NodeModel(config);
  const inferred = inferNodeAddresses(rs, ipsets);
  return new NodeModel(inferred.length ? { ...config, inferred } : config);
}

export function tracePacket(rs: Ruleset, input: PacketInput, options: TraceOptions = {}): TraceResult {
  const node = nodeFor(rs, options.node, options.inferNode ?? true, options.ipsets ?? null);
  const hint =
    options.node instanceof NodeModel
      ? null
      : nodePortHint(rs, input, t => {
          const a = parseAddr(t);
          return a !== null && node.isSymbolic(a.v) && !isLoopback(a) && !node.isLocal(a);
        });
  if (!hint) return traceOn(rs, input, options, node);
  // Both readings of "is the written address this node's?", each outcome under its assumption.
  const given = options.node instanceof NodeModel ? undefined : options.node;
  const why = `${hint.address} is this node's address (port ${input.dport} is a NodePort here; no node address was given)`;
  const asNode = traceOn(
    rs,
    input,
    options,
    new NodeModel({
      ...given,
      inferred: [
        ...node.inferred,
        { address: hint.address, from: hint.from, why: 'assumed: the packet is sent to a NodePort' },
      ],
    }),
  );
  const other = traceOn(rs, input, options, node);
  if (!asNode.ok || !other.ok) return other;
  const tag = (assumed: 'matches' | 'does not match') => ({
    table: 'nat',
    chain: 'KUBE-NODEPORTS',
    rule: hint.rule.index,
    line: hint.rule.line + 1,
    assumed,
    reason: why,
  });
  const outcomes = [
    ...asNode.trace.outcomes.map(o => ({ ...o, assumptions: [tag('matches'), ...o.assumptions] })),
    ...other.trace.outcomes.map(o => ({ ...o, assumptions: [tag('does not match'), ...o.assumptions] })),
  ];
  const warnings = [
    `${hint.address}:${input.dport} may be a NodePort of this node (${hint.from}); no node address was given, so the trace shows both: ${hint.address} is this node's address, and it is not (pass --node-ip to decide)`,
    ...other.trace.warnings,
  ];
  return { ok: true, trace: { ...other.trace, outcomes, unknown: true, warnings } };
}

function traceOn(rs: Ruleset, input: PacketInput, options: TraceOptions, node: NodeModel): TraceResult {
  const built = buildPacket(
    input,
    rs.tables.size && rs.format !== 'nft' ? rs.family : null,
    f => node.primary(f),
    a => node.isLocal(a),
  );
  if (!built.ok) return built;
  const env: TraceEnv = {
    node,
    ipsets: options.ipsets ?? null,
    recent: new Set(options.recent ?? []),
    hook: 'PREROUTING',
    table: '',
    ...(options.interceptors?.length ? { interceptors: options.interceptors } : {}),
  };
  const limits = newLimits(
    options.budget ?? DEFAULT_MAX_STEPS,
    options.maxPaths ?? DEFAULT_MAX_PATHS,
    options.maxRecords ?? DEFAULT_MAX_RECORDS,
  );
  let live: LiveMarks | null = null;
  const liveOf = () => (live ??= liveMarks(rs, (options.interceptors?.length ?? 0) > 0));
  const explain = options.explain ?? true;
  const opts = {
    explain: explain !== false,
    events: options.events ?? true,
    limits,
    live: liveOf,
    steps: new Map(),
  };
  const show = (a: Parameters<ShowAddr>[0]) => node.show(a);
  const start = viewPacket(built.pkt, show);
  const endings =
    built.from === 'local'
      ? traceLocal(rs, built.pkt, env, opts)
      : traceArriving(rs, built.pkt, input.in ?? node.uplink, env, opts);
  const merged = capOutcomes(
    mergeEndings(endings, show, endings.length > 1 ? liveOf() : ALL_LIVE, explain === 'grouped'),
    options.maxOutcomes ?? 256,
    limits,
  );
  const outcomes = [...merged, ...remainderOutcomes(limits, start)];
  const warnings = [...node.problems, ...nodeWarnings(node, built.pkt.family), ...apiServerHints(rs, node, input)];
  const notEvaluated = [...rs.tables.values()].filter(
    t => t.family === 'arp' || t.family === 'bridge' || t.family === 'netdev',
  );
  if (notEvaluated.length)
    warnings.push(
      `not evaluated: ${notEvaluated.map(t => `table ${t.family} ${t.name}`).join(', ')} (packetlens traces the ip, ip6 and inet families)`,
    );
  return {
    ok: true,
    trace: {
      packet: { ...start, in: built.from === 'outside' ? (input.in ?? node.uplink) : null },
      from: built.from,
      outcomes,
      unknown: outcomes.some(o => o.assumptions.length > 0 || o.disposition === 'unknown'),
      warnings,
      budget: { steps: limits.steps, paths: limits.paths, exhausted: limits.exhausted },
      ...fileErrorsOf(rs),
      node: {
        addresses: node.knownAddresses(built.pkt.family).map(show),
        symbolic: node.isSymbolic(built.pkt.family) ? node.symbolicLabel : null,
        inferred: node.inferred.filter(i => i.address.includes(':') === (built.pkt.family === 6)),
      },
    },
  };
}

/** A written address the dump names as the API server's node: it may be this node, which nobody said. */
function apiServerHints(rs: Ruleset, node: NodeModel, input: PacketInput): string[] {
  const out: string[] = [];
  for (const [role, text] of [
    ['source', input.src],
    ['destination', input.dst],
  ] as const) {
    const a = text ? parseAddr(text) : null;
    if (!a || !node.isSymbolic(a.v) || node.isLocal(a)) continue;
    const line = clusterNodeHints(rs).get(text!);
    if (line)
      out.push(
        `the ${role} ${text} is a node of this cluster (an API server endpoint of default/kubernetes, ${line}); it was taken as another node — if it is this one, pass --node-ip ${text}`,
      );
  }
  return out;
}

/** What the trace assumed about the node: the symbolic address, or addresses read off the files. */
function nodeWarnings(node: NodeModel, family: 4 | 6): string[] {
  const out: string[] = [];
  for (const i of node.inferred) {
    if (i.address.includes(':') !== (family === 6)) continue;
    if (i.extra)
      out.push(`local address ${i.address}${i.iface ? ` (${i.iface})` : ''} inferred from ${i.from}: ${i.why}`);
    else out.push(`node address ${i.address} inferred from ${i.from}: ${i.why} (pass --node-ip to say otherwise)`);
  }
  if (node.isSymbolic(family)) {
    out.push(
      `no node address given: assumed the node has one address on ${node.uplink}, shown as ${node.symbolicLabel} — it is local (addrtype LOCAL), ` +
        `the MASQUERADE source, and none of the addresses written in the packet; write ${node.symbolicLabel} (or node) in a packet for the node itself, ` +
        `or pass --node-ip / set packetlens.node.addresses`,
    );
  }
  return out;
}

/**
 * The probability invariant: unknown matches make the trace a decision tree, so for every way of deciding
 * them (an assignment of "matches"/"does not match" to each undecided rule visit) the outcomes consistent
 * with it must add up to exactly 1. Returns the sum for each assignment (at most 2^12 of them; beyond that,
 * the single sum with every decision weighted 1/2, which must also be exactly 1).
 */
export function probabilitySums(trace: Trace): string[] {
  const vars = new Set<string>();
  const decided = trace.outcomes.map(o => {
    const seen = new Map<string, number>();
    const m = new Map<string, string>();
    for (const a of o.assumptions) {
      const base = `${a.table}/${a.chain}/${a.rule}`;
      const k = (seen.get(base) ?? 0) + 1;
      seen.set(base, k);
      m.set(`${base}#${k}`, a.assumed);
      vars.add(`${base}#${k}`);
    }
    return { p: parseExact(o.probabilityExact), m };
  });
  const names = [...vars];
  if (names.length > 12) {
    let sum = rational(0n, 1n);
    for (const d of decided) sum = add(sum, rational(d.p.num, d.p.den * (1n << BigInt(d.m.size))));
    return [formatRational(sum)];
  }
  const sums: string[] = [];
  for (let bits = 0; bits < 1 << names.length; bits++) {
    let sum = rational(0n, 1n);
    for (const d of decided) {
      let ok = true;
      for (const [v, assumed] of d.m) {
        const on = (bits >> names.indexOf(v)) & 1;
        if ((assumed === 'matches') !== (on === 1)) {
          ok = false;
          break;
        }
      }
      if (ok) sum = add(sum, d.p);
    }
    sums.push(formatRational(sum));
  }
  return sums;
}
