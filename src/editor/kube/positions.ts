/**
 * What a position in a manifest points at: a Service (its `kind: Service` line or its `metadata.name`), one
 * of the Service fields whose meaning for packets a hover explains (`type`, `externalTrafficPolicy`,
 * `internalTrafficPolicy`, `selector`, `sessionAffinity`, `clusterIP`), or one of its ports. The reader
 * keeps each object's and field's range; the `kind` and `name` lines are found in the object's own lines.
 */
import type { Range, ServiceM, ServicePortInfo } from '../../engine/api.ts';
import { lineSpan } from '../ranges.ts';
import type { LineSource } from '../text-lines.ts';
import type { ClusterView } from './cluster.ts';

export const HOVER_FIELDS = [
  'type',
  'externalTrafficPolicy',
  'internalTrafficPolicy',
  'selector',
  'sessionAffinity',
  'clusterIP',
] as const;
export type HoverField = (typeof HOVER_FIELDS)[number];

export type ManifestTarget =
  | { readonly kind: 'service'; readonly service: ServiceM }
  | { readonly kind: 'field'; readonly service: ServiceM; readonly field: HoverField }
  | { readonly kind: 'port'; readonly service: ServiceM; readonly port: ServicePortInfo };

export interface TargetAt {
  readonly target: ManifestTarget;
  readonly range: Range;
}

/** Whether `line` lies in `r`, an end at column 0 being exclusive (the reader's ranges end at the next line). */
export function coversLine(r: Range, line: number): boolean {
  return line >= r.start.line && (line < r.end.line || (line === r.end.line && r.end.character > 0));
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The ranges of the `kind: Service` key and of the Service's `name: …` under `metadata`. */
export function serviceAnchors(lines: LineSource, service: ServiceM): Range[] {
  const out: Range[] = [];
  const kind = /(["']?)kind\1\s*:\s*(["']?)Service\2(?=\s*(?:,|#|$))/;
  const name = new RegExp(`(["']?)name\\1\\s*:\\s*(["']?)${escape(service.name)}\\2(?=\\s*(?:,|#|$))`);
  let inMetadata = false;
  let nameFound = false;
  const r = service.loc.range;
  for (let line = r.start.line; line <= Math.min(r.end.line, lines.lineCount - 1); line++) {
    if (!coversLine(r, line)) break;
    const text = lines.lineAt(line);
    const k = kind.exec(text);
    if (k) out.push(lineSpan(line, k.index, k.index + k[0].length));
    if (/(["']?)metadata\1\s*:/.test(text)) inMetadata = true;
    if (inMetadata && !nameFound) {
      const n = name.exec(text);
      if (n) {
        out.push(lineSpan(line, n.index, n.index + n[0].length));
        nameFound = true;
      }
    }
  }
  return out;
}

function within(r: Range, line: number, character: number): boolean {
  return line === r.start.line && character >= r.start.character && character <= r.end.character;
}

/** The target at a position of the manifest file `file`, with the range a hover covers. */
export function targetAt(
  view: ClusterView,
  file: string,
  lines: LineSource,
  line: number,
  character: number,
): TargetAt | null {
  for (const service of view.servicesIn(file)) {
    if (!coversLine(service.loc.range, line)) continue;
    const text = lines.lineAt(line);
    for (const field of HOVER_FIELDS) {
      const loc = service.fieldLocs[field];
      if (loc && loc.range.start.line === line && character >= loc.range.start.character) {
        return {
          target: { kind: 'field', service, field },
          range: lineSpan(line, loc.range.start.character, text.trimEnd().length),
        };
      }
    }
    for (const a of serviceAnchors(lines, service))
      if (within(a, line, character)) return { target: { kind: 'service', service }, range: a };
    for (const port of view.portsOf(service)) {
      if (coversLine(port.loc.range, line)) {
        const start = text.length - text.trimStart().length;
        if (character >= start)
          return { target: { kind: 'port', service, port }, range: lineSpan(line, start, text.trimEnd().length) };
      }
    }
    return null;
  }
  return null;
}
