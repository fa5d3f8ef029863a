/** Human-readable output of the CLI: a tree per packet, most probable outcome first. */
import type { Diagnostic, Trace, TraceMissGroup } from '../engine/api.ts';
import { formatDiagnostic, formatPercent as percent, outcomeHeadline as headline } from '../engine/api.ts';

export interface FormatOptions {
  /** `grouped`: consecutive alike misses (and the rules a chain's index skipped) as one line each. */
  readonly whyNot: boolean | 'grouped';
  readonly maxMissesPerChain: number;
  /** Outcomes drawn in full; the rest are summed on one line (--json lists every one). Default 20. */
  readonly maxOutcomes?: number;
}

/** Lines before any outcome: the file's errors come first, since they change what every answer means. */
function preamble(trace: Trace): string[] {
  return trace.fileErrors ? [`⚠ ${trace.fileErrors.message}`] : [];
}

export function formatTrace(trace: Trace, title: string, opts: FormatOptions): string {
  const lines: string[] = preamble(trace);
  const p = trace.packet;
  lines.push(`${title}  (${trace.from === 'local' ? 'sent by the node' : `arrives on ${p.in ?? '?'}`})`);
  const max = opts.maxOutcomes ?? 20;
  const errorLines = new Set(trace.fileErrors?.lines ?? []);
  const listed = trace.outcomes.filter((o, i) => i < max || o.notEnumerated);
  const hidden = trace.outcomes.filter((o, i) => i >= max && !o.notEnumerated);
  const shown: ((typeof trace.outcomes)[number] | null)[] = [...listed];
  if (hidden.length) shown.splice(listed.filter(o => !o.notEnumerated).length, 0, null);
  shown.forEach((o, i) => {
    const last = i === shown.length - 1;
    const bar = last ? '   ' : '│  ';
    if (!o) {
      const sum = hidden.reduce((a, h) => a + h.probability, 0);
      lines.push(
        `${last ? '└─' : '├─'} ${percent(sum).padStart(7)}  … ${hidden.length} less likely outcome${hidden.length === 1 ? '' : 's'} not drawn here (--json lists every one)`,
      );
      return;
    }
    lines.push(
      `${last ? '└─' : '├─'} ${percent(o.probability).padStart(7)}  ${headline(o)}${o.paths > 1 && !o.notEnumerated ? `  [${o.paths} paths]` : ''}`,
    );
    if (o.markVaries)
      lines.push(
        `${bar}   packet mark bits ${o.markVaries} differ among these paths (no rule reads them, so they were merged)`,
      );
    if (o.ctmarkVaries)
      lines.push(
        `${bar}   connection mark bits ${o.ctmarkVaries} differ among these paths (no rule reads them, so they were merged)`,
      );
    for (const a of o.assumptions)
      lines.push(`${bar}   ? assuming ${a.table} ${a.chain} rule ${a.rule} (line ${a.line}) ${a.assumed}: ${a.reason}`);
    // nftables steps name the family too (`ip kube-proxy services`) and what the rule's statements did.
    const where = (s: (typeof o.steps)[number]) => `${s.family ? `${s.family} ` : ''}${s.table} ${s.chain}`;
    const width = Math.max(0, ...o.steps.map(s => where(s).length));
    for (const s of o.steps) {
      const flag = errorLines.has(s.line) ? '   ⚠ this line has an error' : '';
      lines.push(
        `${bar}   ${where(s).padEnd(width)}  #${String(s.rule).padEnd(4)} line ${String(s.line).padEnd(6)} ${s.verdict}${s.action ? ` (${s.action})` : ''}${flag}`,
      );
    }
    if (opts.whyNot === 'grouped' && o.missesGrouped?.length) lines.push(...groupedMisses(o.missesGrouped, bar, opts));
    else if (opts.whyNot && o.misses.length) {
      lines.push(`${bar}   why the other rules on the way did not match:`);
      const perChain = new Map<string, number>();
      for (const m of o.misses) {
        const key = `${m.table} ${m.chain}`;
        const n = (perChain.get(key) ?? 0) + 1;
        perChain.set(key, n);
        if (n <= opts.maxMissesPerChain)
          lines.push(
            `${bar}   ✗ ${key.padEnd(width)}  #${String(m.rule).padEnd(4)} line ${String(m.line).padEnd(6)} ${m.reason}`,
          );
      }
      for (const [key, n] of perChain) {
        if (n > opts.maxMissesPerChain)
          lines.push(`${bar}   ✗ ${key}: ${n - opts.maxMissesPerChain} more (--json --why-not lists every one)`);
      }
    }
    for (const n of o.notes) lines.push(`${bar}   note: ${n}`);
  });
  for (const w of trace.warnings) lines.push(`warning: ${w}`);
  return lines.join('\n');
}

/** `--why-not=grouped`: one line per group, `#first–last  lines a–b  reason (N rules)`, a few per chain. */
function groupedMisses(groups: readonly TraceMissGroup[], bar: string, opts: FormatOptions): string[] {
  const lines = [`${bar}   why the other rules on the way did not match:`];
  const key = (g: TraceMissGroup) => `${g.table} ${g.chain}`;
  const width = Math.max(0, ...groups.map(g => key(g).length));
  const perChain = new Map<string, number>();
  for (const g of groups) {
    const n = (perChain.get(key(g)) ?? 0) + 1;
    perChain.set(key(g), n);
    if (n > opts.maxMissesPerChain) continue;
    // A group of one is the line `--why-not` writes.
    const at =
      g.count > 1
        ? `#${g.rule}–${g.lastRule} lines ${g.line}–${g.lastLine}`
        : `#${String(g.rule).padEnd(4)} line ${String(g.line).padEnd(6)}`;
    lines.push(`${bar}   ✗ ${key(g).padEnd(width)}  ${at} ${g.reason}${g.count > 1 ? ` (${g.count} rules)` : ''}`);
  }
  for (const [k, n] of perChain)
    if (n > opts.maxMissesPerChain)
      lines.push(
        `${bar}   ✗ ${k}: ${n - opts.maxMissesPerChain} more groups (--json --why-not=grouped lists every one)`,
      );
  return lines;
}

export function formatDiagnostics(file: string, diagnostics: readonly Diagnostic[]): string[] {
  return [...diagnostics]
    .sort((a, b) => a.range.start.line - b.range.start.line || a.range.start.character - b.range.start.character)
    .map(d => formatDiagnostic(file, d));
}
