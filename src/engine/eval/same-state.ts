/**
 * Whether two paths at the same rule will fare the same from there on: the same packet and connection
 * state, the same assumptions and the same pending NAT/masquerade facts — up to the mark bits no rule
 * reads (budget.ts `liveMarks`), which cannot change what any later rule does.
 */
import type { LiveMarks } from './budget.ts';
import type { PacketState } from '../net/packet.ts';
import type { Path } from './path.ts';

function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (a instanceof Set) {
    if (!(b instanceof Set) || a.size !== b.size) return false;
    for (const x of a) if (!b.has(x)) return false;
    return true;
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (const k of ka) if (!same((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  return true;
}

function samePacket(a: PacketState, b: PacketState, live: LiveMarks): boolean {
  if (((a.mark ^ b.mark) & live.nf) !== 0 || ((a.ct.mark ^ b.ct.mark) & live.ct) !== 0) return false;
  for (const k of Object.keys(a) as (keyof PacketState)[]) {
    if (k === 'mark' || k === 'ct') continue;
    if (!same(a[k], b[k])) return false;
  }
  if (Object.keys(b).length !== Object.keys(a).length) return false;
  for (const k of Object.keys(a.ct) as (keyof PacketState['ct'])[]) {
    if (k !== 'mark' && !same(a.ct[k], b.ct[k])) return false;
  }
  return true;
}

export function sameState(p: Path, q: Path, live: () => LiveMarks): boolean {
  if (p.masquerade !== q.masquerade || p.rerouted !== q.rerouted || p.assumptions.length !== q.assumptions.length)
    return false;
  for (let i = 0; i < p.assumptions.length; i++) if (p.assumptions[i] !== q.assumptions[i]) return false;
  // Marks first: the common case of siblings that differ in a mark bit someone reads.
  const marks = live();
  return samePacket(p.pkt, q.pkt, marks);
}
