/**
 * Literal values of the nftables text grammar: numbers (decimal and hex, as nft's scanner reads them),
 * prefixes `addr/len`, ranges `low-high`, durations `1h30m` and the NAT address forms `addr:port`,
 * `[v6addr]:port`. Everything else stays a string for the lowering to interpret by type (ast.ts).
 */
import type { Range } from '../diagnostics.ts';
import type { NftExpr } from './ast.ts';

export function spanRange(a: Range, b: Range): Range {
  return { start: a.start, end: b.end };
}

const DEC = /^[0-9]+$/;
const HEX = /^0x[0-9a-fA-F]+$/;

/** A number when the word is one and fits exactly in a double; otherwise undefined. */
export function parseNumber(w: string): number | undefined {
  if (DEC.test(w) || HEX.test(w)) {
    const n = Number(w);
    return Number.isSafeInteger(n) ? n : undefined;
  }
  return undefined;
}

/** Words that may be one side of a range: numbers and addresses (a dot or a colon and hex digits). */
function rangeSide(w: string): boolean {
  return (
    DEC.test(w) || HEX.test(w) || /^[0-9]+(\.[0-9]+){3}$/.test(w) || (/^[0-9a-fA-F:]+$/.test(w) && w.includes(':'))
  );
}

/** One word as a value, prefix or range. */
export function literal(w: string, range: Range): NftExpr {
  const n = parseNumber(w);
  if (n !== undefined) return { kind: 'value', value: n, range };
  const slash = w.indexOf('/');
  if (slash > 0 && DEC.test(w.slice(slash + 1)) && /[.:]/.test(w.slice(0, slash))) {
    return { kind: 'prefix', addr: literal(w.slice(0, slash), range), len: Number(w.slice(slash + 1)), range };
  }
  const dash = rangeDash(w);
  if (dash > 0) {
    return { kind: 'range', low: literal(w.slice(0, dash), range), high: literal(w.slice(dash + 1), range), range };
  }
  return { kind: 'value', value: w, range };
}

/** The position of the `-` that splits a range word, or -1. */
function rangeDash(w: string): number {
  let i = w.indexOf('-');
  while (i > 0) {
    if (rangeSide(w.slice(0, i)) && rangeSide(w.slice(i + 1))) return i;
    i = w.indexOf('-', i + 1);
  }
  return -1;
}

const UNIT_SECONDS: ReadonlyMap<string, number> = new Map(
  Object.entries({ d: 86400, h: 3600, m: 60, s: 1, ms: 0.001 }),
);

/**
 * `1d2h3m4s500ms`, `10800s`, `3h` or a bare number of seconds, in whole seconds as nft's JSON prints them
 * (src/json.c divides the kernel's milliseconds by 1000). NaN when the word is not a duration.
 */
export function parseDuration(w: string): number {
  if (DEC.test(w)) return Number(w);
  const re = /([0-9]+)(ms|d|h|m|s)/gy;
  let total = 0;
  let pos = 0;
  for (let m = re.exec(w); m; m = re.exec(w)) {
    total += Number(m[1]) * (UNIT_SECONDS.get(m[2] ?? '') ?? 0);
    pos = re.lastIndex;
  }
  if (pos !== w.length || pos === 0) return NaN;
  return Math.floor(total + 1e-9);
}

/** `10.0.0.1:80`, `10.0.0.1-10.0.0.9:80-90`, `[fd00::1]:80`, `fd00::1`, `:80` as address and port. */
export function splitAddrPort(w: string, range: Range): { addr?: NftExpr; port?: NftExpr } {
  if (w.startsWith('[')) {
    const close = w.indexOf(']');
    if (close < 0) return { addr: literal(w, range) };
    const addr = literal(w.slice(1, close), range);
    const rest = w.slice(close + 1);
    return rest.startsWith(':') ? { addr, port: literal(rest.slice(1), range) } : { addr };
  }
  if (w.startsWith(':')) return { port: literal(w.slice(1), range) };
  const colons = w.split(':').length - 1;
  if (colons === 1 && w.includes('.')) {
    const i = w.indexOf(':');
    return { addr: literal(w.slice(0, i), range), port: literal(w.slice(i + 1), range) };
  }
  return { addr: literal(w, range) };
}
