/**
 * Plain-text presentation of engine values shared by the CLI, the editor and the diff report, so the same
 * outcome reads the same everywhere.
 */
import type { TraceOutcome } from './eval/trace-types.ts';

/** `50%`, `33.33%`, `0.000012%`: two decimals, more for tiny shares, no trailing zeros. */
export function formatPercent(p: number): string {
  if (p >= 1) return '100%';
  if (p <= 0) return '0%';
  const digits = p * 100 < 0.01 ? 6 : 2;
  return `${(p * 100).toFixed(digits).replace(/\.?0+$/, '')}%`;
}

/** One line for an outcome: `forwarded → 10.10.1.11:80 via eth0 (DNAT 10.10.1.11:80) masqueraded to 172.18.0.4`. */
export function outcomeHeadline(o: TraceOutcome): string {
  const parts: string[] = [o.disposition];
  if (o.disposition === 'forwarded' || o.disposition === 'local' || o.disposition === 'output') {
    const where = o.packet.dport !== null ? `${o.packet.dst}:${o.packet.dport}` : o.packet.dst;
    parts.push(`→ ${where}${o.packet.out ? ` via ${o.packet.out}` : ''}`);
  }
  if (o.dnat) parts.push(`(DNAT ${o.dnat})`);
  if (o.snat) parts.push(o.masquerade ? `masqueraded to ${o.snat}` : `SNAT to ${o.snat}`);
  if (o.rejectWith) parts.push(`with ${o.rejectWith}`);
  if (o.reason && o.disposition !== 'rejected') parts.push(`— ${o.reason}`);
  return parts.join(' ');
}
