/** Editor-neutral positions and edits (0-based lines and characters, end exclusive), as the engine's. */
import type { Range } from '../engine/api.ts';

export type { Range };

export interface TextEdit {
  readonly range: Range;
  readonly newText: string;
}

export function range(line: number, start: number, endLine: number, end: number): Range {
  return { start: { line, character: start }, end: { line: endLine, character: end } };
}

export function lineSpan(line: number, start: number, end: number): Range {
  return range(line, start, line, end);
}

/** The whole line including its line break: deleting this range removes the line. */
export function wholeLine(line: number): Range {
  return range(line, 0, line + 1, 0);
}
