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
import { type PacketInput, buildPacket } from './packet-spec.ts';
import { type Ending, toOutcome, traceArriving, traceLocal, viewPacket } from './pipeline.ts';
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

export function mergeEndings(endings: Ending[]): TraceOutcome[] {
  const byKey = new Map<string, { outcome: Omit<TraceOutcome, 'paths'>; prob: Rational; paths: number; order: number }>();
  for (const e of endings) {
    const o = toOutcome(e);
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

export function tracePacket(rs: Ruleset, input: PacketInput, options: TraceOptions = {}): TraceResult {
  const node = options.node instanceof NodeModel ? options.node : new NodeModel(options.node);
  const built = buildPacket(input, rs.tables.size ? rs.family : null, (f) => node.primary(f), (a) => node.isLocal(a));
  if (!built.ok) return built;
  const env: EvalEnv = { node, ipsets: options.ipsets ?? null, recent: new Set(options.recent ?? []), hook: 'PREROUTING', table: '', ...(options.interceptors?.length ? { interceptors: options.interceptors } : {}) };
  const opts = { explain: options.explain ?? true, budget: options.budget ?? 4_000_000 };
  const start = viewPacket(built.pkt);
  const endings =
    built.from === 'local' ? traceLocal(rs, built.pkt, env, opts) : traceArriving(rs, built.pkt, input.in ?? node.uplink, env, opts);
  const outcomes = mergeEndings(endings);
  const warnings = [...node.problems];
  if (node.addresses().length === 0) warnings.push('no node addresses given: addrtype LOCAL and local delivery only know 127.0.0.0/8 (pass --node-ip)');
  return {
    ok: true,
    trace: {
      packet: { ...start, in: built.from === 'outside' ? (input.in ?? node.uplink) : null },
      from: built.from,
      outcomes,
      unknown: outcomes.some((o) => o.assumptions.length > 0 || o.disposition === 'unknown'),
      warnings,
    },
  };
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
