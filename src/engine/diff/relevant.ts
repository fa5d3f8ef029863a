/**
 * The kernel's hook order, as the comparison needs it: whether a rewrite (DNAT, SNAT, MARK, …) in one hook
 * and table can run before a test in another on some journey of a packet (`canPrecede`). region.ts leaves
 * a field of a region open only where an earlier rewrite can write into it.
 */
import { type HookName, TABLE_HOOKS } from '../model.ts';
import { hooksOf } from './graph.ts';

/**
 * The stages a packet passes, in order, on each of its possible journeys (pipeline.ts): arriving and
 * delivered, arriving and forwarded, and sent by the node (looping back through `lo` without nat).
 */
const JOURNEYS: readonly (readonly string[])[] = (() => {
  const stages = (hooks: HookName[], skipNat = false) =>
    hooks.flatMap(h =>
      Object.entries(TABLE_HOOKS)
        .filter(([t, v]) => v.hooks[h] !== undefined && !(skipNat && t === 'nat'))
        .sort((a, b) => a[1].hooks[h]! - b[1].hooks[h]!)
        .map(([t]) => `${h} ${t}`),
    );
  return [
    stages(['PREROUTING', 'INPUT']),
    stages(['PREROUTING', 'FORWARD', 'POSTROUTING']),
    [...stages(['OUTPUT', 'POSTROUTING']), ...stages(['PREROUTING', 'INPUT'], true)],
  ];
})();

/** Whether a rewrite in (hooks, table) can happen before a test in (hooks, table) on some journey. */
export function canPrecede(wMask: number, wTable: string, tMask: number, tTable: string, nat: boolean): boolean {
  for (const wh of hooksOf(wMask)) {
    for (const th of hooksOf(tMask)) {
      const a = `${wh} ${wTable}`;
      const b = `${th} ${tTable}`;
      // A NAT binding ends its table's walk, so it never feeds a later rule of the same walk.
      if (a === b) {
        if (!nat) return true;
        continue;
      }
      if (JOURNEYS.some(j => j.indexOf(a) >= 0 && j.indexOf(b) > j.indexOf(a))) return true;
    }
  }
  return false;
}
