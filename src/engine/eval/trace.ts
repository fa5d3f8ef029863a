/**
 * Entry point of the evaluator: builds the packet, runs it through the node's hooks, and merges paths that
 * end in the same state (same disposition, packet, marks, NAT and assumptions) by adding their exact
 * probabilities. Outcomes come most probable first; ties keep evaluation order, so traces are deterministic.
 */
import type { Ruleset } from '../model.ts';
import { type IpsetStore } from '../ipset/store.ts';
import { type Rational, add, format as formatRational, rational, toNumber } from '../rational.ts';
import type { EvalEnv } from './env.ts';
import type { HookInterceptor } from './intercept.ts';
import { type NodeConfig, NodeModel } from './node.ts';
import { inferNodeAddresses, nodePortHint } from './node-inference.ts';
import { isLoopback, parseAddr } from '../net/addr.ts';
import { type PacketInput, buildPacket } from './packet-spec.ts';
import { type Ending, type ShowAddr, toOutcome, traceArriving, traceLocal, viewPacket } from './pipeline.ts';
import type { Trace, TraceOutcome } from './trace-types.ts';

export interface TraceOptions {
  readonly node?: NodeConfig | NodeModel;
  readonly ipsets?: IpsetStore | null;
  /** `-m recent` lists in which the client has a live entry (session affinity). */
  readonly recent?: Iterable<string>;
  /** Record why each evaluated rule did not match (default true; off uses chain indexes and is faster). */
  readonly explain?: boolean;
  /** Rule evaluations allowed on one path (default 4,000,000). */
  readonly budget?: number;
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

function endingKey(o: Omit<TraceOutcome, 'paths'>): string {
  const p = o.packet;
  return [
    o.disposition, o.rejectWith, o.reason, p.src, p.sport, p.dst, p.dport, p.in, p.out, p.mark, p.ctmark, p.ctstate, o.dnat, o.snat, o.masquerade,
    o.assumptions.map((a) => `${a.table}/${a.chain}/${a.rule}/${a.assumed}`).join(','),
  ].join('|');
}

export function mergeEndings(endings: Ending[], show?: ShowAddr): TraceOutcome[] {
  const byKey = new Map<string, { outcome: Omit<TraceOutcome, 'paths'>; prob: Rational; paths: number; order: number }>();
  for (const e of endings) {
    const o = toOutcome(e, show);
    const key = endingKey(o);
    const prev = byKey.get(key);
    if (prev) {
      prev.prob = add(prev.prob, e.path.prob);
      prev.paths++;
    } else byKey.set(key, { outcome: o, prob: e.path.prob, paths: 1, order: byKey.size });
  }
  return [...byKey.values()]
    .sort((a, b) => toNumber(b.prob) - toNumber(a.prob) || a.order - b.order)
    .map((v) => ({ ...v.outcome, probability: toNumber(v.prob), probabilityExact: formatRational(v.prob), paths: v.paths }));
}

/** The node a trace runs on: as given, or the given config completed by what the ruleset implies. */
export function nodeFor(rs: Ruleset, config: NodeConfig | NodeModel | undefined, infer = true): NodeModel {
  if (config instanceof NodeModel) return config;
  if (!infer || config?.inferred) return new NodeModel(config);
  const inferred = inferNodeAddresses(rs);
  return new NodeModel(inferred.length ? { ...config, inferred } : config);
}

export function tracePacket(rs: Ruleset, input: PacketInput, options: TraceOptions = {}): TraceResult {
  const node = nodeFor(rs, options.node, options.inferNode ?? true);
  const hint = options.node instanceof NodeModel ? null : nodePortHint(rs, input, (t) => {
    const a = parseAddr(t);
    return a !== null && node.isSymbolic(a.v) && !isLoopback(a) && !node.isLocal(a);
  });
  if (!hint) return traceOn(rs, input, options, node);
  // Both readings of "is the written address this node's?", each outcome under its assumption.
  const given = options.node instanceof NodeModel ? undefined : options.node;
  const why = `${hint.address} is this node's address (port ${input.dport} is a NodePort here; no node address was given)`;
  const asNode = traceOn(rs, input, options, new NodeModel({ ...given, inferred: [...node.inferred, { address: hint.address, from: hint.from, why: 'assumed: the packet is sent to a NodePort' }] }));
  const other = traceOn(rs, input, options, node);
  if (!asNode.ok || !other.ok) return other;
  const tag = (assumed: 'matches' | 'does not match') => ({ table: 'nat', chain: 'KUBE-NODEPORTS', rule: hint.rule.index, line: hint.rule.line + 1, assumed, reason: why });
  const outcomes = [
    ...asNode.trace.outcomes.map((o) => ({ ...o, assumptions: [tag('matches'), ...o.assumptions] })),
    ...other.trace.outcomes.map((o) => ({ ...o, assumptions: [tag('does not match'), ...o.assumptions] })),
  ];
  const warnings = [`${hint.address}:${input.dport} may be a NodePort of this node (${hint.from}); no node address was given, so the trace shows both: ${hint.address} is this node's address, and it is not (pass --node-ip to decide)`, ...other.trace.warnings];
  return { ok: true, trace: { ...other.trace, outcomes, unknown: true, warnings } };
}

function traceOn(rs: Ruleset, input: PacketInput, options: TraceOptions, node: NodeModel): TraceResult {
  const built = buildPacket(input, rs.tables.size ? rs.family : null, (f) => node.primary(f), (a) => node.isLocal(a));
  if (!built.ok) return built;
  const env: EvalEnv = { node, ipsets: options.ipsets ?? null, recent: new Set(options.recent ?? []), hook: 'PREROUTING', table: '', ...(options.interceptors?.length ? { interceptors: options.interceptors } : {}) };
  const opts = { explain: options.explain ?? true, budget: options.budget ?? 4_000_000 };
  const show = (a: Parameters<ShowAddr>[0]) => node.show(a);
  const start = viewPacket(built.pkt, show);
  const endings =
    built.from === 'local' ? traceLocal(rs, built.pkt, env, opts) : traceArriving(rs, built.pkt, input.in ?? node.uplink, env, opts);
  const outcomes = mergeEndings(endings, show);
  const warnings = [...node.problems, ...nodeWarnings(node, built.pkt.family)];
  return {
    ok: true,
    trace: {
      packet: { ...start, in: built.from === 'outside' ? (input.in ?? node.uplink) : null },
      from: built.from,
      outcomes,
      unknown: outcomes.some((o) => o.assumptions.length > 0 || o.disposition === 'unknown'),
      warnings,
      node: {
        addresses: node.knownAddresses(built.pkt.family).map(show),
        symbolic: node.isSymbolic(built.pkt.family) ? node.symbolicLabel : null,
        inferred: node.inferred.filter((i) => i.address.includes(':') === (built.pkt.family === 6)),
      },
    },
  };
}

/** What the trace assumed about the node: the symbolic address, or addresses read off the files. */
function nodeWarnings(node: NodeModel, family: 4 | 6): string[] {
  const out: string[] = [];
  for (const i of node.inferred) {
    if (i.address.includes(':') !== (family === 6)) continue;
    out.push(`node address ${i.address} inferred from ${i.from}: ${i.why} (pass --node-ip to say otherwise)`);
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
  const decided = trace.outcomes.map((o) => {
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
