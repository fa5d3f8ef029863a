/**
 * Line access over one snapshot of a document's text. Line offsets are found once, on first use, so a
 * 430k-line dump costs one pass and an Int32Array; a line is then a slice (without its `\r`).
 */
export interface LineSource {
  readonly lineCount: number;
  lineAt(line: number): string;
}

export class TextLines implements LineSource {
  private starts: Int32Array | null = null;
  private count = 0;

  constructor(readonly text: string) {}

  get lineCount(): number {
    return this.offsets().count;
  }

  lineAt(line: number): string {
    const { starts, count } = this.offsets();
    if (line < 0 || line >= count) return '';
    const s = starts[line]!;
    let e = line + 1 < count ? starts[line + 1]! - 1 : this.text.length;
    if (e > s && this.text.charCodeAt(e - 1) === 13) e--;
    return this.text.slice(s, e);
  }

  /** The 0-based line of a character offset. */
  lineOfOffset(offset: number): number {
    const { starts, count } = this.offsets();
    let lo = 0;
    let hi = count - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  private offsets(): { starts: Int32Array; count: number } {
    if (!this.starts) {
      let n = 1;
      for (let i = this.text.indexOf('\n'); i >= 0; i = this.text.indexOf('\n', i + 1)) n++;
      const starts = new Int32Array(n);
      let k = 1;
      for (let i = this.text.indexOf('\n'); i >= 0; i = this.text.indexOf('\n', i + 1)) starts[k++] = i + 1;
      this.starts = starts;
      this.count = n;
    }
    return { starts: this.starts, count: this.count };
  }
}

/** Lines given as an array (tests, small documents). */
export function arrayLines(lines: readonly string[]): LineSource {
  return { lineCount: lines.length, lineAt: i => lines[i] ?? '' };
}
