/** Pieces both ipvsadm parsers share: numeric `addr:port` words, ranges, diagnostics. */
import { type Diagnostic, type DiagnosticCode, type Range, lineRange } from '../diagnostics.ts';
import { formatAddr, parseAddr } from '../net/addr.ts';

export interface Word {
  readonly text: string;
  readonly start: number;
}

/** Splits a line on blanks, keeping each word's column. */
export function words(line: string): Word[] {
  const out: Word[] = [];
  const re = /\S+/g;
  for (let m = re.exec(line); m; m = re.exec(line)) out.push({ text: m[0], start: m.index });
  return out;
}

export function wordRange(lineNo: number, w: Word): Range {
  return lineRange(lineNo, w.start, w.start + w.text.length);
}

/** `10.0.0.1:80` or `[2001:db8::1]:80` as ipvsadm -n prints and reads them; null when not numeric. */
export function parseHostPort(text: string): { addr: string; port: number } | null {
  const m = /^\[([0-9a-fA-F:.]+)\]:(\d+)$/.exec(text) ?? /^([0-9.]+):(\d+)$/.exec(text);
  if (!m) return null;
  const a = parseAddr(m[1]!);
  const port = Number(m[2]);
  if (!a || port > 65535) return null;
  return { addr: formatAddr(a), port };
}

export class DiagnosticSink {
  readonly list: Diagnostic[] = [];
  add(code: DiagnosticCode, message: string, range: Range, severity: Diagnostic['severity'] = 'error'): void {
    this.list.push({ code, severity, message, range });
  }
}
