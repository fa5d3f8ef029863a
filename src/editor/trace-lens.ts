/**
 * What a trace says about each line it touched, for CodeLens and decorations: a rule that matched
 * ("✓ matched · step 4 · 50%"), one that was evaluated and missed ("✗ --dport 443 ≠ 80"), or both in
 * different outcomes (a random branch taken by some paths only). Step numbers and reasons come from the
 * trace's `steps` and `misses` (traced with `explain: true`).
 */
import type { Trace } from '../engine/api.ts';
import { percent } from './probability.ts';

export interface LineVerdict {
  /** 0-based line. */
  readonly line: number;
  /** Probability that a packet matched this rule (sum over outcomes), and the step in the most probable one. */
  matched: number;
  /** The step number in the most probable outcome that matched it. */
  step: number | null;
  stepOutcome: number | null;
  /** Whether outcomes matched it at different step numbers. */
  stepVaries: boolean;
  verdict: string | null;
  /** Probability that the rule was evaluated and missed, and the first reason. */
  missed: number;
  reason: string | null;
  /** An undecidable match was assumed here. */
  assumed: boolean;
}

export function traceLineVerdicts(trace: Trace): Map<number, LineVerdict> {
  const byLine = new Map<number, LineVerdict>();
  const get = (line1: number) => {
    const line = line1 - 1;
    let v = byLine.get(line);
    if (!v)
      byLine.set(
        line,
        (v = {
          line,
          matched: 0,
          step: null,
          stepOutcome: null,
          stepVaries: false,
          verdict: null,
          missed: 0,
          reason: null,
          assumed: false,
        }),
      );
    return v;
  };
  trace.outcomes.forEach((o, oi) => {
    const seenMatch = new Set<number>();
    o.steps.forEach((s, i) => {
      const v = get(s.line);
      if (!seenMatch.has(s.line)) {
        v.matched += o.probability;
        seenMatch.add(s.line);
      }
      if (v.step === null) {
        v.step = i + 1;
        v.stepOutcome = oi;
        v.verdict = s.verdict;
      } else if (v.step !== i + 1) v.stepVaries = true;
    });
    const seenMiss = new Set<number>();
    for (const m of o.misses) {
      const v = get(m.line);
      if (!seenMiss.has(m.line)) {
        v.missed += o.probability;
        seenMiss.add(m.line);
      }
      v.reason ??= m.reason;
    }
    for (const a of o.assumptions) get(a.line).assumed = true;
  });
  return byLine;
}

export function lensTitle(v: LineVerdict, outcomes: number): string {
  const parts: string[] = [];
  if (v.step !== null) {
    const where = outcomes > 1 && v.stepVaries && v.stepOutcome !== null ? ` of outcome ${v.stepOutcome + 1}` : '';
    parts.push(`✓ matched · step ${v.step}${where} · ${percent(Math.min(1, v.matched))}`);
  }
  if (v.reason !== null)
    parts.push(`✗ ${v.reason}${v.step !== null || v.missed < 0.999999 ? ` · ${percent(Math.min(1, v.missed))}` : ''}`);
  if (v.assumed) parts.push('? undecidable: assumed both ways');
  return parts.join('  ');
}

/** Lines by how the trace treated them, for decorations. */
export interface TraceMarks {
  readonly matched: number[];
  readonly missed: number[];
  readonly assumed: number[];
}

export function traceMarks(verdicts: ReadonlyMap<number, LineVerdict>): TraceMarks {
  const matched: number[] = [];
  const missed: number[] = [];
  const assumed: number[] = [];
  for (const v of verdicts.values()) {
    if (v.assumed) assumed.push(v.line);
    else if (v.step !== null) matched.push(v.line);
    else if (v.reason !== null) missed.push(v.line);
  }
  const sort = (a: number[]) => a.sort((x, y) => x - y);
  return { matched: sort(matched), missed: sort(missed), assumed: sort(assumed) };
}

/** The 0-based line of step 1 of the most probable outcome (where the editor goes after a trace), or null. */
export function firstStepLine(trace: Trace): number | null {
  const step = trace.outcomes.find(o => o.steps.length > 0)?.steps[0];
  return step ? step.line - 1 : null;
}
