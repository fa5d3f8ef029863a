/**
 * One path of a packet through the rules: its probability so far, its packet state and everything it has
 * recorded. Paths fork at branch points (statistic, undecidable matches); a fork copies the record.
 */
import { type Rational, ONE } from '../rational.ts';
import { type PacketState, clonePacket } from '../net/packet.ts';
import { MissLog } from './miss-log.ts';
import type { TraceAssumption, TraceEvent, TraceStep } from './trace-types.ts';

/**
 * Where a path's events go: the list itself, or only their count when the caller shows no events (the
 * CLI's `--json` without `--events`). The count keeps what depends on the list's length — the records
 * budget of forks, the note when a path's record is cut — the same either way.
 */
export interface EventLog {
  readonly length: number;
  push(...events: TraceEvent[]): number;
}

/** An event log that keeps no events, only how many there were. */
export class EventCount implements EventLog {
  constructor(public length = 0) {}

  push(...events: TraceEvent[]): number {
    return (this.length += events.length);
  }
}

/** The events a log kept (none when it only counted them). */
export function eventsOf(log: EventLog): TraceEvent[] {
  return log instanceof EventCount ? [] : (log as TraceEvent[]);
}

export interface Path {
  prob: Rational;
  pkt: PacketState;
  steps: TraceStep[];
  /** Why-not: the rules that did not match (miss-log.ts). */
  misses: MissLog;
  events: EventLog;
  assumptions: TraceAssumption[];
  notes: string[];
  masquerade: boolean;
  /** Rule evaluations so far, bounded to stop goto loops the loader would have refused. */
  work: number;
  /**
   * A route chosen by re-routing inside the OUTPUT hook. The hook's remaining tables still see the
   * interface the hook was entered with (`state->out`); POSTROUTING sees this one.
   */
  rerouted: string | null;
  /** How many paths this one stands for after merging siblings that differ only in unread mark bits. */
  count: number;
  /** Bits of the packet mark / connection mark in which merged paths differ (no rule reads them). */
  variesNf: number;
  variesCt: number;
  /** The rules of the jump loop this path ran into, when it did. */
  loop?: TraceStep[];
}

export function newPath(pkt: PacketState, recordEvents = true): Path {
  return {
    prob: ONE,
    pkt,
    steps: [],
    misses: new MissLog(),
    events: recordEvents ? [] : new EventCount(),
    assumptions: [],
    notes: [],
    masquerade: false,
    work: 0,
    rerouted: null,
    count: 1,
    variesNf: 0,
    variesCt: 0,
  };
}

export function forkPath(p: Path): Path {
  return {
    prob: p.prob,
    pkt: clonePacket(p.pkt),
    steps: [...p.steps],
    misses: p.misses.fork(),
    events: p.events instanceof EventCount ? new EventCount(p.events.length) : [...(p.events as TraceEvent[])],
    assumptions: [...p.assumptions],
    notes: [...p.notes],
    masquerade: p.masquerade,
    work: p.work,
    rerouted: p.rerouted,
    count: p.count,
    variesNf: p.variesNf,
    variesCt: p.variesCt,
  };
}
