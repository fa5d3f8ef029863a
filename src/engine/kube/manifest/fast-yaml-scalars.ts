/**
 * Scalars for the fast YAML reader (fast-yaml.ts): the text of one-line plain and quoted scalars and of `|`/`|-`
 * literal blocks, and their values under the YAML 1.2 core schema, as the `yaml` package gives them. Each
 * function reads the text `t` at an offset and throws `GIVE_UP` on anything outside the reader's subset.
 */

/** Thrown inside the reader when the input leaves the subset; never escapes `readFastYaml`. */
export class GiveUp {}
export const GIVE_UP = new GiveUp();

/** YAML 1.2 core schema resolution of a plain scalar, in `yaml`'s tag order (null, bool, int, float, string). */
export function resolvePlain(s: string): unknown {
  if (s === '' || s === '~' || s === 'null' || s === 'Null' || s === 'NULL') return null;
  if (s === 'true' || s === 'True' || s === 'TRUE') return true;
  if (s === 'false' || s === 'False' || s === 'FALSE') return false;
  const c = s.charCodeAt(0);
  // Only strings starting with a digit, a sign or a dot can be numbers.
  if (!((c >= 48 && c <= 57) || c === 43 || c === 45 || c === 46)) return s;
  if (/^0o[0-7]+$/.test(s)) return parseInt(s.substring(2), 8);
  if (/^[-+]?[0-9]+$/.test(s)) return parseInt(s, 10);
  if (/^0x[0-9a-fA-F]+$/.test(s)) return parseInt(s.substring(2), 16);
  if (/^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/.test(s))
    return s.slice(-3).toLowerCase() === 'nan' ? NaN : s[0] === '-' ? -Infinity : Infinity;
  if (/^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/.test(s)) return parseFloat(s);
  if (/^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/.test(s)) return parseFloat(s);
  return s;
}

const ESCAPES: Record<string, string> = {
  '0': '\0',
  a: '\x07',
  b: '\b',
  t: '\t',
  n: '\n',
  v: '\v',
  f: '\f',
  r: '\r',
  e: '\x1b',
  '"': '"',
  '/': '/',
  '\\': '\\',
  N: '\u0085',
  _: '\u00a0',
  L: '\u2028',
  P: '\u2029',
};

/** Characters that cannot start a plain scalar (or start something else: flow, quotes, props, comments). */
export const NOT_PLAIN_START = new Set([
  '[',
  ']',
  '{',
  '}',
  ',',
  '#',
  '&',
  '*',
  '!',
  '|',
  '>',
  "'",
  '"',
  '%',
  '@',
  '`',
]);

/**
 * The end of a one-line plain scalar in block context starting at `p` (trailing spaces excluded), and
 * whether it ends at a `: ` (a key).
 */
export function plainEnd(t: string, p: number, _key: boolean): { end: number; key: boolean } {
  const n = t.length;
  let q = p;
  let last = p; // end of the last non-space character
  while (q < n) {
    const ch = t.charCodeAt(q);
    if (ch === 10) break; // \n
    if (ch === 58) {
      // ':'
      const nx = t.charCodeAt(q + 1);
      if (q + 1 >= n || nx === 32 || nx === 10) return { end: last, key: true };
    } else if (ch === 35 && t.charCodeAt(q - 1) === 32) {
      break; // ' #' starts a comment
    }
    q++;
    if (ch !== 32) last = q;
  }
  return { end: last, key: false };
}

/** The offset after the closing quote of a one-line quoted scalar at `p`. */
export function quotedEnd(t: string, p: number): number {
  const quote = t[p];
  let q = p + 1;
  for (;;) {
    const ch = t[q];
    if (ch === undefined || ch === '\n') throw GIVE_UP; // unterminated or multi-line
    if (quote === '"' && ch === '\\') {
      q += 2;
      continue;
    }
    if (ch === quote) {
      if (quote === "'" && t[q + 1] === "'") {
        q += 2;
        continue;
      }
      return q + 1;
    }
    q++;
  }
}

export function quotedValue(t: string, p: number, end: number): string {
  if (t[p] === "'") return t.slice(p + 1, end - 1).replace(/''/g, "'");
  const body = t.slice(p + 1, end - 1);
  if (!body.includes('\\')) return body;
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const ch = body[i]!;
    if (ch !== '\\') {
      out += ch;
      continue;
    }
    const e = body[++i]!;
    const simple = ESCAPES[e];
    if (simple !== undefined) {
      out += simple;
      continue;
    }
    const len = e === 'x' ? 2 : e === 'u' ? 4 : e === 'U' ? 8 : 0;
    const hex = body.slice(i + 1, i + 1 + len);
    if (len === 0 || !/^[0-9a-fA-F]+$/.test(hex) || hex.length !== len) throw GIVE_UP;
    const cp = parseInt(hex, 16);
    if (cp > 0x10ffff) throw GIVE_UP;
    out += String.fromCodePoint(cp);
    i += len;
  }
  return out;
}

function lineEnd(t: string, p: number): number {
  const e = t.indexOf('\n', p);
  return e < 0 ? t.length : e;
}

/**
 * `|` or `|-` (clip or strip chomping, indentation detected), inside a collection at column `parent`: its
 * value, and `end`, the offset after its last content line (the scalar's range ends there; reading goes on
 * from there).
 */
export function literalBlock(t: string, p: number, parent: number): { value: string; end: number } {
  const chomp = t[p + 1] === '-' ? '-' : '';
  let pos = p + 1 + chomp.length;
  if (t[pos] !== '\n' && pos < t.length) throw GIVE_UP; // indicators, comments: left to yaml
  pos++;
  const lines: string[] = [];
  let indent = -1;
  let contentEnd = -1; // offset after the last non-empty content line's newline
  let blankRun = 0;
  for (;;) {
    if (pos >= t.length) break;
    const ls = pos;
    const le = lineEnd(t, ls);
    let q = ls;
    while (t.charCodeAt(q) === 32) q++;
    if (q === le) {
      // An empty line (spaces only).
      if (indent < 0 && q - ls > 0) throw GIVE_UP; // leading blank lines with spaces: left to yaml
      if (indent >= 0 && q - ls > indent) throw GIVE_UP; // spaces kept as content: left to yaml
      blankRun++;
      pos = le + 1;
      continue;
    }
    const ind = q - ls;
    if (indent < 0) {
      if (ind <= parent) throw GIVE_UP; // empty block scalar
      indent = ind;
    }
    if (ind < indent) break;
    for (; blankRun > 0; blankRun--) lines.push('');
    lines.push(t.slice(ls + indent, le));
    pos = le + 1;
    contentEnd = Math.min(le + 1, t.length);
    if (le >= t.length) break;
  }
  if (indent < 0 || contentEnd < 0) throw GIVE_UP;
  const lastHasNewline = contentEnd <= t.length && t[contentEnd - 1] === '\n';
  if (!lastHasNewline) throw GIVE_UP;
  // Reading goes on from the first line after the content (blank lines after it belong to nothing here).
  const body = lines.join('\n');
  const value = chomp === '-' ? body : body + '\n';
  // The next content line decides; the comment rule applies as for other scalars.
  return { value, end: contentEnd };
}
