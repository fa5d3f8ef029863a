/**
 * `trace --format xtables-monitor|nft-monitor` (the prediction in the kernel's words) and `trace --live
 * CAPTURE` (a live capture held against the prediction): CLI glue over src/engine/live/.
 */
import { type Ruleset, type Trace, compareWithCapture, outcomeInKernelWords } from '../engine/api.ts';
import { UsageError } from './args.ts';

export const KERNEL_FORMATS = ['xtables-monitor', 'nft-monitor'] as const;

export function kernelWords(trace: Trace, format: string, text: string): string[] {
  if (!(KERNEL_FORMATS as readonly string[]).includes(format))
    throw new UsageError(`--format takes xtables-monitor or nft-monitor, not '${format}'`);
  const lines = text.split('\n');
  const out: string[] = [];
  trace.outcomes.forEach((o, i) => {
    out.push(
      `# outcome ${i + 1}: ${(o.probability * 100).toFixed(4).replace(/\.?0+$/, '')}% ${o.disposition}${o.dnat ? ` (DNAT ${o.dnat})` : ''}${o.snat ? ` (source ${o.snat})` : ''}`,
    );
    out.push(
      ...outcomeInKernelWords(
        o,
        i,
        { src: trace.packet.src, dst: trace.packet.dst, dport: trace.packet.dport },
        format as 'xtables-monitor',
        l => lines[l - 1],
      ),
    );
  });
  return out;
}

export function liveReport(
  trace: Trace,
  rs: Ruleset,
  text: string,
  captureFile: string,
  captureText: string,
  symbolic: boolean,
) {
  const lines = text.split('\n');
  return compareWithCapture(trace, rs, l => lines[l - 1], captureText, symbolic);
}

export function formatLive(r: ReturnType<typeof liveReport>, captureFile: string): string[] {
  const out = [
    `live trace ${captureFile}: ${r.format ?? 'not a capture'}${r.traceId ? `, trace id ${r.traceId}` : ''}`,
  ];
  if (r.result === 'no-capture') out.push(`  ${r.skipped.join('; ')}`);
  else if (r.result === 'same-path')
    out.push(
      `  same path as predicted outcome ${r.outcome!.index + 1} (${r.outcome!.headline}): ${r.agreed} rule and policy steps agree`,
    );
  else {
    out.push(
      `  the paths part after ${r.agreed} agreeing steps (closest: predicted outcome ${r.outcome!.index + 1}, ${r.outcome!.headline})`,
    );
    out.push(`  kernel:    ${r.parted!.kernel ?? '(trace ends)'}`);
    out.push(`  predicted: ${r.parted!.predicted ?? '(path ends)'}`);
    out.push(`  likely reason (${r.parted!.reason}): ${r.parted!.explanation}`);
  }
  if (r.result !== 'no-capture' && r.skipped.length)
    out.push(
      `  skipped ${r.skipped.length} captured lines: ${r.skipped.slice(0, 3).join('; ')}${r.skipped.length > 3 ? '; …' : ''}`,
    );
  return out;
}
