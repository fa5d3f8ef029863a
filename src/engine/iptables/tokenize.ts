/**
 * Splits one iptables-restore line into words the way iptables-restore does (`add_param_to_argv` in
 * iptables/xshared.c): words are separated by spaces or tabs, double quotes group a word, and inside quotes
 * a backslash escapes `"`, `\` and `'` (what `xtables_save_string` writes). The tokenizer never throws: an
 * unterminated quote is reported and the word runs to the end of the line.
 */
export interface Token {
  readonly text: string;
  /** Character offsets in the line, end exclusive; they cover the quotes of a quoted word. */
  readonly start: number;
  readonly end: number;
  readonly quoted: boolean;
}

export interface TokenizeResult {
  readonly tokens: Token[];
  readonly unterminatedQuoteAt: number;
}

export function tokenizeLine(line: string): TokenizeResult {
  const tokens: Token[] = [];
  const n = line.length;
  let i = 0;
  let unterminatedQuoteAt = -1;
  while (i < n) {
    let c = line.charCodeAt(i);
    while (c === 32 || c === 9 || c === 13) {
      if (++i >= n) return { tokens, unterminatedQuoteAt };
      c = line.charCodeAt(i);
    }
    const start = i;
    let quoted = false;
    let simpleEnd = -1;
    // Fast path: a word without quotes or backslashes is a plain slice.
    while (i < n) {
      c = line.charCodeAt(i);
      if (c === 32 || c === 9 || c === 13) break;
      if (c === 34) {
        quoted = true;
        break;
      }
      i++;
    }
    if (!quoted) {
      simpleEnd = i;
      tokens.push({ text: line.slice(start, simpleEnd), start, end: simpleEnd, quoted: false });
      continue;
    }
    let text = line.slice(start, i);
    let inQuote = false;
    while (i < n) {
      c = line.charCodeAt(i);
      if (inQuote) {
        if (c === 92 && i + 1 < n) {
          const next = line.charCodeAt(i + 1);
          if (next === 34 || next === 92 || next === 39) {
            text += line[i + 1];
            i += 2;
            continue;
          }
        }
        if (c === 34) {
          inQuote = false;
          i++;
          continue;
        }
        text += line[i];
        i++;
      } else {
        if (c === 32 || c === 9 || c === 13) break;
        if (c === 34) {
          inQuote = true;
          quoted = true;
          i++;
          continue;
        }
        text += line[i];
        i++;
      }
    }
    if (inQuote) unterminatedQuoteAt = start;
    tokens.push({ text, start, end: i, quoted: true });
  }
  return { tokens, unterminatedQuoteAt };
}

const NO_QUOTE = /^[A-Za-z0-9_-]+$/;

/** Quotes a word as `xtables_save_string` does when it contains anything but `[A-Za-z0-9_-]`. */
export function saveString(value: string): string {
  if (NO_QUOTE.test(value)) return value;
  return `"${value.replace(/["\\']/g, m => `\\${m}`)}"`;
}

/** Quotes a word only when it would not survive tokenizing unquoted. */
export function quoteIfNeeded(value: string): string {
  if (value.length > 0 && !/[\s"]/.test(value)) return value;
  return `"${value.replace(/["\\']/g, m => `\\${m}`)}"`;
}

/**
 * A reusable token buffer for the parser's hot loop: tokenizing 430k lines into Token objects would
 * allocate millions of short-lived records, so the parser tokenizes each line into these parallel arrays.
 */
export class TokenBuffer {
  count = 0;
  /** The words; `undefined` past `count`. */
  readonly text: (string | undefined)[] = [];
  start = new Int32Array(64);
  end = new Int32Array(64);
  quoted = new Uint8Array(64);
  unterminatedQuoteAt = -1;

  fill(line: string): void {
    this.fillFrom(line, 0);
  }

  /** Tokenizes `line` from character `from` on; offsets stay relative to the whole line. */
  fillFrom(line: string, from: number): void {
    this.fillText(line, 0, from, line.length);
  }

  /**
   * Tokenizes one line of a larger text, the characters `lineStart + from` to `lineStart + lineLength`, with
   * offsets relative to the line's start: the rows of a dump (rule-store.ts) are read in place, without a
   * string of each line, and reading the dump's own flat string character by character is faster than
   * reading a slice of it.
   */
  fillText(text: string, lineStart: number, from: number, lineLength: number): void {
    this.fillWords(text, lineStart, from, lineLength);
    // A word past `count` is no word of this line: a reader of `text[i]` finds undefined, not a word of the
    // line read before (`-A` alone named the previous line's chain, `:CHAIN` alone took its policy).
    const words = this.text;
    for (let k = this.count; k < words.length && words[k] !== undefined; k++) words[k] = undefined;
  }

  private fillWords(text: string, lineStart: number, from: number, lineLength: number): void {
    this.count = 0;
    this.unterminatedQuoteAt = -1;
    const n = lineStart + lineLength;
    let i = lineStart + from;
    while (i < n) {
      let c = text.charCodeAt(i);
      if (c === 32 || c === 9 || c === 13) {
        i++;
        continue;
      }
      const start = i;
      while (i < n) {
        c = text.charCodeAt(i);
        if (c === 32 || c === 9 || c === 13 || c === 34) break;
        i++;
      }
      if (i >= n || c !== 34) {
        this.push(text.slice(start, i), start - lineStart, i - lineStart, false);
        continue;
      }
      // A quoted word (kube-proxy quotes every comment): slice between the quotes unless it has escapes.
      let word = text.slice(start, i);
      while (i < n && text.charCodeAt(i) === 34) {
        // The closing quote, unless a backslash or the end of the line comes first (searched within the line:
        // the text goes on past it).
        let close = i + 1;
        while (close < n && (c = text.charCodeAt(close)) !== 34 && c !== 92) close++;
        if (close < n && c === 34) {
          word += text.slice(i + 1, close);
          i = close + 1;
        } else {
          // Escapes or no closing quote: the general tokenizer reads the rest of this word exactly.
          const rest = tokenizeLine(text.slice(i, n));
          const first = rest.tokens[0]!;
          word += first.text;
          if (rest.unterminatedQuoteAt === 0) this.unterminatedQuoteAt = i - lineStart;
          i += first.end;
          break;
        }
        // Unquoted characters may follow the closing quote within the same word.
        const wordStart = i;
        while (i < n) {
          c = text.charCodeAt(i);
          if (c === 32 || c === 9 || c === 13 || c === 34) break;
          i++;
        }
        word += text.slice(wordStart, i);
      }
      this.push(word, start - lineStart, i - lineStart, true);
    }
  }

  private push(text: string, start: number, end: number, quoted: boolean): void {
    const k = this.count++;
    if (k >= this.start.length) {
      const grow = (a: Int32Array) => {
        const b = new Int32Array(a.length * 2);
        b.set(a);
        return b;
      };
      this.start = grow(this.start);
      this.end = grow(this.end);
      const q = new Uint8Array(this.quoted.length * 2);
      q.set(this.quoted);
      this.quoted = q;
    }
    this.text[k] = text;
    this.start[k] = start;
    this.end[k] = end;
    this.quoted[k] = quoted ? 1 : 0;
  }
}
