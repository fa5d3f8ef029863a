/**
 * Issue 18's targets as `npm run bench` measured them: each part of the bench records its figures here and
 * bench.ts prints one list at the end — every target with the figure measured, the peer beside it where
 * there is one, and whether it is met (or by how much it is missed). A benchmark, not a test: nothing fails.
 */
export interface TargetLine {
  readonly what: string;
  /** null: not measured in this run (a peer tool missing, a part that failed), with the reason in detail. */
  readonly met: boolean | null;
  readonly detail: string;
}

const lines: TargetLine[] = [];

/** Records one target's outcome. */
export function target(what: string, met: boolean | null, detail: string): void {
  lines.push({ what, met, detail });
}

/** "met" when at most the limit, else the factor by which it is missed. */
export function atMost(what: string, value: number, limit: number, unit: string, extra = ''): void {
  const met = value <= limit;
  const miss = met ? '' : ` — missed by ${(value / limit).toFixed(2)}×`;
  target(what, met, `${fmtNum(value)} ${unit} (target ≤ ${fmtNum(limit)} ${unit})${miss}${extra ? `; ${extra}` : ''}`);
}

/** A speed ratio (peer time / ours) that must reach `limit`. */
export function ratioAtLeast(what: string, ratio: number, limit: number, extra: string): void {
  const met = ratio >= limit;
  const miss = met ? '' : ` — short by ${(limit / ratio).toFixed(2)}×`;
  target(what, met, `${ratio.toFixed(2)}× (target ≥ ${limit}×)${miss}; ${extra}`);
}

function fmtNum(n: number): string {
  return n >= 100 ? String(Math.round(n)) : String(+n.toFixed(3));
}

/** Prints every recorded target, then the list as one JSON line. */
export function printTargets(): void {
  console.log('\nissue 18 targets, as measured in this run:');
  for (const l of lines)
    console.log(`  ${l.met === null ? 'n/a    ' : l.met ? 'met    ' : 'NOT met'}  ${l.what}: ${l.detail}`);
  const missed = lines.filter(l => l.met === false).length;
  console.log(`  ${lines.length - missed} of ${lines.length} met or not measured; ${missed} not met`);
  console.log(JSON.stringify({ targets: lines }));
}
