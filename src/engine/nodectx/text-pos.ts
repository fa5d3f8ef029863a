/** Offsets to editor positions, and the offsets of a JSON array's top-level elements (JSON.parse keeps none). */
import type { Range } from '../diagnostics.ts';

export class LineIndex {
  private readonly starts: number[] = [0];
  constructor(text: string) {
    for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) this.starts.push(i + 1);
  }
  /** Zero-based line of an offset (binary search). */
  lineOf(offset: number): number {
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }
  range(from: number, to: number): Range {
    const l1 = this.lineOf(from);
    const l2 = this.lineOf(Math.max(from, to));
    return {
      start: { line: l1, character: from - this.starts[l1]! },
      end: { line: l2, character: Math.max(from, to) - this.starts[l2]! },
    };
  }
}

/**
 * Start and end offsets of the top-level elements of a JSON array text (one scan; strings and nesting
 * respected). Used only after JSON.parse accepted the text, so the text is well formed.
 */
export function topLevelElements(text: string): [number, number][] {
  const out: [number, number][] = [];
  let depth = 0;
  let inStr = false;
  let start = -1;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inStr) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inStr = false;
      continue;
    }
    if (c === 34) {
      inStr = true;
      if (depth === 1 && start < 0) start = i;
    } else if (c === 91 /* [ */ || c === 123 /* { */) {
      if (depth === 1 && start < 0) start = i;
      depth++;
    } else if (c === 93 /* ] */ || c === 125 /* } */) {
      depth--;
      if (depth === 1 && start >= 0) {
        out.push([start, i + 1]);
        start = -1;
      }
    } else if (c === 44 /* , */) {
      if (depth !== 1) continue;
      if (start >= 0) out.push([start, i]);
      start = -1;
    } else if (depth === 1 && start < 0 && c > 32) start = i;
  }
  return out;
}
