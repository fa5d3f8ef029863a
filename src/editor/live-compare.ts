/**
 * "Compare with Live Trace…" (issue 19): a capture from the node — `xtables-monitor --trace`, `nft monitor
 * trace`, or the kernel's `TRACE:` lines from dmesg or the journal — held against the dump's prediction by
 * the engine's live/align. What packet a capture traced (`capturePacket`, for the packet input when no trace
 * is open), the comparison itself (`compareLive`, run in the engine worker), and how it is said
 * (`liveView`: one message, the details for the log, and the dump line to mark: where the paths part).
 * Pure: no `vscode`.
 */
import { type LiveComparison, type Trace, compareWithCapture, readCapture } from '../engine/api.ts';
import type { DumpIndex } from './dump-index.ts';
import { inEditorWords } from './editor-words.ts';

/** A capture's first traced packet as packet text (`tcp 172.18.0.100:40000 -> 172.18.255.200:80 in=eth0`). */
export interface CapturePacket {
  readonly format: string | null;
  /** Packets (trace ids) in the capture. */
  readonly packets: number;
  readonly packet: string | null;
  /** What the capture did not say and the packet text assumes (the protocol), or why there is no packet. */
  readonly note: string | null;
}

const host = (a: string, port: number | null) => (port !== null && a.includes(':') ? `[${a}]` : a);

export function capturePacket(text: string): CapturePacket {
  const cap = readCapture(text);
  const base = { format: cap.format, packets: cap.groups.length };
  for (const g of cap.groups) {
    const p = g.events.find(e => e.packet?.src && e.packet.dst)?.packet;
    if (!p) continue;
    const proto = p.protocol ?? (p.sport !== null || p.dport !== null ? 'tcp' : null);
    const words = [
      proto ?? 'icmp',
      `${host(p.src!, p.sport)}${p.sport !== null ? `:${p.sport}` : ''}`,
      '->',
      `${host(p.dst!, p.dport)}${p.dport !== null ? `:${p.dport}` : ''}`,
      p.iif ? `in=${p.iif}` : 'from=local',
    ];
    return {
      ...base,
      packet: words.join(' '),
      note: p.protocol
        ? null
        : `the capture does not name the protocol: ${proto ?? 'icmp'} is assumed — correct it if it is wrong`,
    };
  }
  return {
    ...base,
    packet: null,
    note: cap.groups.length
      ? 'the capture has no packet line with addresses (PACKET:, packet:, or a TRACE: line with SRC= DST=)'
      : 'nothing in it is an xtables-monitor --trace, nft monitor trace or kernel TRACE: line',
  };
}

/** The engine's comparison of a trace of the dump with a capture. */
export function compareLive(index: DumpIndex, trace: Trace, capture: string): LiveComparison {
  const symbolic = trace.node?.symbolic !== undefined && trace.node.symbolic !== null;
  const lines = index.lines;
  return compareWithCapture(
    trace,
    index.ruleset,
    l => (l >= 1 && l <= lines.lineCount ? lines.lineAt(l - 1) : undefined),
    capture,
    symbolic,
  );
}

/** How a comparison is said in the editor. */
export interface LiveView {
  readonly result: LiveComparison['result'];
  readonly severity: 'info' | 'warning';
  /** The notification, in the editor's words. */
  readonly message: string;
  /** The full report for the log: every line of `trace --live`'s. */
  readonly details: readonly string[];
  /** The dump line (0-based) to mark, or null: where the paths part. */
  readonly line: number | null;
  /** The mark's words beside that line. */
  readonly mark: string | null;
}

export function liveView(c: LiveComparison, captureName: string): LiveView {
  const what = `The live trace ${captureName} (${c.format ?? 'not a capture'}${c.traceId ? `, trace id ${c.traceId}` : ''})`;
  const details = [`${what}:`];
  if (c.result === 'no-capture') {
    details.push(...c.skipped.map(s => `  ${s}`));
    return {
      result: c.result,
      severity: 'warning',
      message: `${what} has nothing to compare: ${inEditorWords(c.skipped.join('; '))}.`,
      details,
      line: null,
      mark: null,
    };
  }
  const o = c.outcome!;
  if (c.skipped.length)
    details.push(
      `  skipped ${c.skipped.length} captured lines: ${c.skipped.slice(0, 5).join('; ')}${c.skipped.length > 5 ? '; …' : ''}`,
    );
  if (c.result === 'same-path') {
    details.push(
      `  same path as predicted outcome ${o.index + 1} (${o.headline}): ${c.agreed} rule and policy steps agree`,
    );
    return {
      result: c.result,
      severity: 'info',
      message: `${what} takes the predicted path: outcome ${o.index + 1} (${o.headline}); ${c.agreed} rule and policy steps agree.`,
      details,
      line: null,
      mark: null,
    };
  }
  const p = c.parted!;
  const explanation = inEditorWords(p.explanation);
  details.push(
    `  the paths part after ${c.agreed} agreeing steps (closest: predicted outcome ${o.index + 1}, ${o.headline})`,
    `  kernel:    ${p.kernel ?? '(trace ends)'}`,
    `  predicted: ${p.predicted ?? '(path ends)'}`,
    `  likely reason (${p.reason}): ${explanation}`,
  );
  // Where to look in the dump: the rule the kernel took there when the dump has it, else the predicted one.
  const kernelFirst =
    p.reason === 'not-matched' ||
    p.reason === 'assumed' ||
    p.reason === 'verdict-differs' ||
    p.reason === 'prediction-ended';
  const line1 = kernelFirst ? (p.kernelLine ?? p.predictedLine) : (p.predictedLine ?? p.kernelLine);
  const at = p.kernel ?? p.predicted ?? 'the end of the path';
  return {
    result: c.result,
    severity: 'warning',
    message: `${what} parts from the prediction after ${c.agreed} agreeing steps — kernel: ${p.kernel ?? '(its trace ends)'}; predicted: ${p.predicted ?? '(the path ends)'}. Likely reason: ${explanation}`,
    details,
    line: line1 ? line1 - 1 : null,
    mark: `◀ the live trace parts here (${p.reason}): ${at.length > 120 ? `${at.slice(0, 117)}…` : at}`,
  };
}
