/**
 * One outcome's events as the steps of the flow graph: the start, each rule that matched (a row), each
 * load-balancing split (kube-proxy's `-m statistic` cascade, nft `numgen`, an IPVS scheduler: one step, whatever
 * the number of rules it took), routing decisions and the end. A step's key says which steps of different
 * paths are the same node: the same rule in the same visit of the same hook.
 */
import type { TraceEvent, TraceMiss, TraceOutcome, TraceStep } from '../../engine/api.ts';
import type { GraphRow, GraphTone } from '../../shared/protocol.ts';

export interface Step {
  readonly key: string;
  readonly kind: 'row' | 'balance' | 'routing' | 'end';
  readonly lane: string | null;
  readonly laneLabel?: string;
  readonly row?: GraphRow;
  readonly title?: string;
  /** For a split: what chooses the way (see `chooserOf`). */
  readonly chooser?: string;
  readonly why?: string;
  readonly line?: number | null;
  readonly tone?: GraphTone;
  /** A rewrite done as the packet leaves this step. */
  readonly rewrite?: string | null;
  /** For a split: the rule (or real server) the packet's branch took, and its line. */
  readonly via?: string | null;
  readonly viaLine?: number | null;
}

/** What a rule's verdict rewrote, as an edge reads it: `dst → 10.10.1.11:80`, `mark 0x0 → 0x4000`. */
export function rewriteOf(s: TraceStep): string | null {
  for (const text of [s.action ?? '', s.verdict]) {
    const nat = /^(DNAT|REDIRECT|dnat|redirect)\b.*?→ (\S+)/.exec(text);
    if (nat) return `dst → ${nat[2]}`;
    const src = /^(SNAT|MASQUERADE|snat|masquerade)\b.*?→ (\S+)/.exec(text);
    if (src) return `src → ${src[2]}`;
    const mark = /^(MARK|meta mark) (\S+) → (\S+)/.exec(text);
    if (mark) return `mark ${mark[2]} → ${mark[3]}`;
    const ct = /^(CONNMARK|ct mark) (\S+) → (\S+)/.exec(text);
    if (ct) return `ctmark ${ct[2]} → ${ct[3]}`;
  }
  return null;
}

function verdictTone(v: string): GraphTone {
  if (/^(DROP|REJECT|drop|reject)\b/.test(v)) return 'error';
  if (/not modelled|unknown/.test(v)) return 'unknown';
  if (/^(ACCEPT|accept)\b/.test(v)) return 'accept';
  return 'normal';
}

function missesBefore(misses: readonly TraceMiss[], s: TraceStep): string[] {
  return misses
    .filter(m => m.hook === s.hook && m.table === s.table && m.chain === s.chain && m.rule < s.rule)
    .slice(-4)
    .map(m => `#${m.rule} (line ${m.line}) did not match: ${m.reason}`);
}

const IPVS_CHOICE = /^(IPVS [^:]+): (.*) → (\S+) \(probability [^)]*\)$/;

interface Frame {
  readonly table: string;
  readonly chain: string;
  /** The step (a jump row) that entered this chain, or -1. */
  readonly entry: number;
  /** Steps before this chain's own. */
  readonly at: number;
  cascade: { readonly line: number; taken: number; readonly chooser: string } | null;
}

function endStep(o: TraceOutcome): Step {
  const d = o.disposition;
  const words: Record<string, string> = {
    local: 'delivered to a local process',
    forwarded: 'forwarded',
    output: 'sent out',
    dropped: 'dropped',
    rejected: 'rejected',
    unknown: 'unknown',
  };
  const out = o.packet.out && d !== 'dropped' && d !== 'rejected' ? ` via ${o.packet.out}` : '';
  const extra = o.rejectWith ? ` with ${o.rejectWith}` : o.reason && d !== 'forwarded' ? ` — ${o.reason}` : '';
  const title = `${words[d] ?? d}${out}${extra}`;
  const tone: GraphTone = d === 'dropped' || d === 'rejected' ? 'error' : d === 'unknown' ? 'unknown' : 'accept';
  return { key: `end|${title}`, kind: 'end', lane: null, title, tone: o.assumptions.length ? 'unknown' : tone };
}

/** The steps of one outcome's path. */
export function pathSteps(o: TraceOutcome, offset: number): Step[] {
  // No node for the start: the panel's header says the packet; one more column would only widen the graph.
  const steps: Step[] = [];
  const seen = new Map<string, number>();
  const laneSeen = new Map<string, number>();
  let lane: string | null = null;
  let laneLabel = '';
  let frames: Frame[] = [];
  let lastVerdict = '';
  const line = (l: number) => l - 1 + offset;
  const push = (s: Step) => {
    // The same step twice on one path (a chain entered twice) is a second node, not a loop in the drawing.
    const n = (seen.get(s.key) ?? 0) + 1;
    seen.set(s.key, n);
    steps.push(n === 1 ? s : { ...s, key: `${s.key}|${n}` });
  };
  const split = (f: Frame, via: string, viaLine: number | null, rewrite: string | null = null) => {
    push({
      key: `balance|${lane}|${f.table}|${f.chain}`,
      kind: 'balance',
      lane,
      laneLabel,
      title: `${f.table} ${f.chain}`,
      chooser: f.cascade!.chooser,
      why: `load balancing: the ${f.table} ${f.chain} chain sends each new connection one way, at random`,
      line: line(f.cascade!.line),
      via,
      viaLine,
      rewrite,
    });
    f.cascade = null;
  };
  const events: readonly TraceEvent[] = o.events;
  for (const e of events) {
    const top = frames[frames.length - 1];
    switch (e.kind) {
      case 'hook': {
        const n = (laneSeen.get(e.hook) ?? 0) + 1;
        laneSeen.set(e.hook, n);
        lane = n === 1 ? e.hook : `${e.hook} (${n})`;
        laneLabel = `${e.hook}${e.iface.in ? ` · in ${e.iface.in}` : ''}${e.iface.out ? ` · out ${e.iface.out}` : ''}`;
        frames = [];
        break;
      }
      case 'chain': {
        if (lastVerdict.startsWith('goto ') && frames.length) frames.pop();
        const jumped = /^(jump|goto) /i.test(lastVerdict) && steps[steps.length - 1]?.kind === 'row';
        frames.push({
          table: e.table,
          chain: e.chain,
          entry: jumped ? steps.length - 1 : -1,
          at: steps.length,
          cascade: null,
        });
        lastVerdict = '';
        break;
      }
      case 'branch': {
        if (top && !top.cascade) top.cascade = { line: e.line, taken: 0, chooser: chooserOf(e.label) };
        if (top?.cascade && e.taken) top.cascade.taken++;
        break;
      }
      case 'rule': {
        const s = e.step;
        lastVerdict = s.verdict;
        const where = `${s.table} ${s.chain} #${s.rule}`;
        if (top?.cascade) {
          split(top, `${where} ${s.verdict}`, line(s.line), rewriteOf(s));
          break;
        }
        const why = [`matched: ${s.action ?? s.verdict} (line ${s.line + offset})`, ...missesBefore(o.misses, s)];
        push({
          key: `rule|${lane}|${where}|${s.verdict}`,
          kind: 'row',
          lane,
          laneLabel,
          row: {
            where,
            verdict: s.action && s.action !== s.verdict ? `${s.verdict} (${s.action})` : s.verdict,
            line: line(s.line),
            why: why.join('\n'),
            walk: false,
            rewrite: rewriteOf(s),
            tone: verdictTone(s.verdict),
          },
          rewrite: rewriteOf(s),
        });
        break;
      }
      case 'policy': {
        if (top?.cascade) split(top, `no rule of ${top.chain} taken`, null);
        const where = `${e.table} ${e.chain}`;
        push({
          key: `policy|${lane}|${where}|${e.verdict}`,
          kind: 'row',
          lane,
          laneLabel,
          row: {
            where,
            verdict: `policy ${e.verdict}`,
            line: line(e.line),
            why: `no rule of ${where} decided: its policy ${e.verdict} applies`,
            // A chain that let the packet through by its policy is part of the walk (shown when expanded).
            walk: /^accept$/i.test(e.verdict),
            rewrite: null,
            tone: verdictTone(e.verdict),
          },
        });
        frames = [];
        break;
      }
      case 'return': {
        const f = frames.pop();
        if (!f) break;
        if (f.cascade) split(f, `no rule of ${f.chain} taken (returned)`, null);
        if (f.entry >= 0 && steps.slice(f.at).every(x => x.kind === 'row' && x.row!.walk)) {
          // Nothing in the chain matched: the jump into it is part of the walk, collapsed by default.
          const s = steps[f.entry]!;
          steps[f.entry] = {
            ...s,
            row: {
              ...s.row!,
              walk: true,
              why: `${s.row!.why}\nnothing in ${f.table} ${f.chain} matched; back in the caller`,
            },
          };
        }
        lastVerdict = '';
        break;
      }
      case 'assume': {
        const a = e.assumption;
        const where = `${a.table} ${a.chain} #${a.rule}`;
        push({
          key: `assume|${lane}|${where}|${a.assumed}`,
          kind: 'row',
          lane,
          laneLabel,
          row: {
            where,
            verdict: `assumed: ${a.assumed}`,
            line: line(a.line),
            why: `unknown: ${a.reason}; this path assumes the rule ${a.assumed}`,
            walk: false,
            rewrite: null,
            tone: 'unknown',
          },
        });
        break;
      }
      case 'nat-skipped':
        push({
          key: `natskip|${lane}`,
          kind: 'row',
          lane,
          laneLabel,
          row: {
            where: `nat on ${e.hook}`,
            verdict: 'skipped',
            line: null,
            why: e.reason,
            walk: false,
            rewrite: null,
            tone: 'normal',
          },
        });
        break;
      case 'routing':
        frames = [];
        push({
          key: `routing|${e.decision}|${e.iface ?? ''}`,
          kind: 'routing',
          lane: null,
          title: `routing: ${e.decision}${e.iface ? ` via ${e.iface}` : ''}`,
          why: e.reason,
          tone: e.decision === 'drop' ? 'error' : 'normal',
        });
        break;
      case 'note': {
        const m = IPVS_CHOICE.exec(e.text);
        if (!m) break;
        push({
          key: `ipvs|${lane}|${m[1]}`,
          kind: 'balance',
          lane,
          laneLabel,
          title: m[1]!,
          chooser: 'IPVS scheduler',
          why: `IPVS scheduling: ${m[2]}`,
          via: `real server ${m[3]}`,
          viaLine: null,
          rewrite: `dst → ${m[3]}`,
        });
        break;
      }
    }
  }
  steps.push(endStep(o));
  return steps.map((s, i) => routingAsRow(s, steps[i + 1]));
}

/** A routing decision followed by rules is the first row of the hook it leads to (one node fewer across). */
function routingAsRow(s: Step, next: Step | undefined): Step {
  if (s.kind !== 'routing' || next?.kind !== 'row') return s;
  return {
    key: s.key,
    kind: 'row',
    lane: next.lane,
    laneLabel: next.laneLabel,
    row: {
      where: 'routing',
      verdict: s.title!.replace(/^routing: /, ''),
      line: null,
      why: s.why ?? '',
      walk: false,
      rewrite: null,
      tone: s.tone ?? 'normal',
    },
  };
}

/**
 * What makes a random choice, from the branch event's label: nft's `numgen` (its statement text), iptables'
 * `-m statistic` (labels "random …" / "every …th packet", statistic.ts), else the label's first word.
 */
export function chooserOf(label: string): string {
  if (/\bnumgen\b/.test(label)) return 'numgen';
  if (/^(not )?(random|every)\b/.test(label)) return 'statistic';
  return label.split(/\s/, 1)[0] ?? '';
}
