/**
 * `packetlens check`'s fast pass (issue 18): proves, from a rule's characters alone, that the full
 * validator (`checkRowDiagnostics`: tokenizer, option parser, match and target compilation) would find
 * nothing to say about it. It knows only the few word shapes kube-proxy writes on nearly every rule of a
 * large dump —
 *
 *   [!] -s|-d A.B.C.D[/N]   -p tcp|udp|sctp   -m comment --comment WORD
 *   -m tcp|udp|sctp [--dport N] [--sport N]   -m statistic --mode random --probability P
 *   -j NAME (no options; NAME no target extension)   -g NAME   -j DNAT --to-destination A.B.C.D[:PORT]
 *
 * and accepts a rule only when every word is one of them, with a value the full validator accepts. Anything
 * else (another option or spelling, a tab, an escape, a value it is unsure of, IPv6) is "not proven", and
 * the caller runs the full validator, so the diagnostics are the same either way; the proof only saves
 * making the words into strings, option records and compiled specs. test/engine/row-proof.test.ts holds it
 * against the full validator on generated and mutated rules.
 */
import { type Family, decimal } from '../net/addr.ts';
import { TARGETS } from '../targets/registry.ts';

const SPACE = 32;
const QUOTE = 34;
const BACKSLASH = 92;
const DASH = 45;
const BANG = 33;

/** The longest name of a target extension: a longer `-j NAME` is no extension, without a string made of it. */
const MAX_TARGET_NAME = Math.max(...Array.from(TARGETS.keys(), n => n.length));

/** Where the spaces from `at` end. */
function skip(text: string, at: number, end: number): number {
  while (at < end && text.charCodeAt(at) === SPACE) at++;
  return at;
}

/** Whether text[at, e) is `word`. */
function is(text: string, at: number, e: number, word: string): boolean {
  const n = word.length;
  if (e - at !== n) return false;
  for (let k = 0; k < n; k++) if (text.charCodeAt(at + k) !== word.charCodeAt(k)) return false;
  return true;
}

/** Where the word after the spaces from `at` ends, when it is `word` (followed by a space or `end`); else -1. */
function next(text: string, at: number, end: number, word: string): number {
  const s = skip(text, at, end);
  const e = s + word.length;
  if (e > end || (e < end && text.charCodeAt(e) !== SPACE)) return -1;
  for (let k = 0; k < word.length; k++) if (text.charCodeAt(s + k) !== word.charCodeAt(k)) return -1;
  return e;
}

/**
 * Where the plain word starting at `at` ends (a space or `end`), or -1 when it holds a character the
 * tokenizer treats specially: a quote, a backslash (refused here too), a tab or a carriage return (which
 * separate words), so that the caller falls back to the full validator.
 */
function plainWordEnd(text: string, at: number, end: number): number {
  let i = at;
  for (; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === SPACE) break;
    if (c === QUOTE || c === BACKSLASH || c < SPACE) return -1;
  }
  return i;
}

/**
 * Where a dotted IPv4 address starting at `at` ends (before `end` or the first character that is neither a
 * digit nor a dot), when it is four parts of 1-3 digits, each at most 255 (what `parseIPv4Number` accepts);
 * else -1.
 */
function ipv4End(text: string, at: number, end: number): number {
  let i = at;
  for (let part = 0; part < 4; part++) {
    if (part > 0) {
      if (i >= end || text.charCodeAt(i) !== 46 /* . */) return -1;
      i++;
    }
    let n = 0;
    const from = i;
    for (; i < end && i - from < 4; i++) {
      const d = text.charCodeAt(i) - 48;
      if (d < 0 || d > 9) break;
      n = n * 10 + d;
    }
    if (i === from || i - from > 3 || n > 255) return -1;
  }
  return i;
}

/** `A.B.C.D` or `A.B.C.D/N` (N of 1-2 digits, at most 32) filling text[at, e): `-s`/`-d` in an IPv4 dump. */
function isNet4(text: string, at: number, e: number): boolean {
  const a = ipv4End(text, at, e);
  if (a === e) return true;
  if (a < 0 || text.charCodeAt(a) !== 47 /* / */) return false;
  const prefix = decimal(text, a + 1, e, 2);
  return prefix >= 0 && prefix <= 32;
}

/** `A.B.C.D` or `A.B.C.D:PORT` filling text[at, e): DNAT's `--to-destination` (`parseNatRange`). */
function isNatDestination4(text: string, at: number, e: number): boolean {
  const a = ipv4End(text, at, e);
  if (a === e) return true;
  if (a < 0 || text.charCodeAt(a) !== 58 /* : */) return false;
  const port = decimal(text, a + 1, e, 5);
  return port >= 0 && port <= 65535;
}

/** A port of 1-5 digits up to 65535 filling text[at, e) (`parsePort`'s number form). */
function isPort(text: string, at: number, e: number): boolean {
  const n = decimal(text, at, e, 5);
  return n >= 0 && n <= 65535;
}

/** `0`, `1`, `0.ddd…` or `1.000…` filling text[at, e): a `--probability` `Number()` reads as 0 to 1. */
function isProbability(text: string, at: number, e: number): boolean {
  const c = text.charCodeAt(at) - 48;
  if (c !== 0 && c !== 1) return false;
  if (e === at + 1) return true;
  if (text.charCodeAt(at + 1) !== 46 || e === at + 2) return false;
  for (let i = at + 2; i < e; i++) {
    const d = text.charCodeAt(i) - 48;
    if (d < 0 || d > 9 || (c === 1 && d !== 0)) return false;
  }
  return true;
}

/**
 * The comment's word starting at `at`: a plain word (not a lone `!`, which would leave `--comment` without
 * its value), or one fully in double quotes without escapes. Returns where it ends, or -1.
 */
function commentEnd(text: string, at: number, end: number): number {
  if (text.charCodeAt(at) !== QUOTE) {
    const e = plainWordEnd(text, at, end);
    return e === at + 1 && text.charCodeAt(at) === BANG ? -1 : e;
  }
  for (let i = at + 1; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === BACKSLASH) return -1;
    if (c === QUOTE) return i + 1 === end || text.charCodeAt(i + 1) === SPACE ? i + 1 : -1;
  }
  return -1; // unterminated
}

/** Proves rules of one table valid; `proves` answers for one row. */
export class RowProver {
  /** `-j DNAT --to-destination …` compiles as the DNAT target only when no chain of the table is called DNAT. */
  private readonly dnat: boolean;

  constructor(
    chains: ReadonlyMap<string, unknown>,
    private readonly family: Family,
  ) {
    this.dnat = !chains.has('DNAT') && TARGETS.has('DNAT');
  }

  /**
   * Whether the rule whose line is text[lineStart, lineStart + lineLength), its specification starting at
   * character `specStart` of the line, certainly has no diagnostics of its options. False means "not
   * proven", never "invalid".
   */
  proves(text: string, lineStart: number, lineLength: number, specStart: number): boolean {
    if (this.family !== 4) return false;
    const end = lineStart + lineLength;
    let i = lineStart + specStart;
    let negate = false;
    let src = false;
    let dst = false;
    let proto = false;
    for (;;) {
      i = skip(text, i, end);
      if (i >= end) return !negate;
      const c0 = text.charCodeAt(i);
      if (c0 === BANG && (i + 1 === end || text.charCodeAt(i + 1) === SPACE)) {
        if (negate) return false;
        negate = true;
        i++;
        continue;
      }
      // Only the two-character options below, each with a plain value word.
      if (c0 !== DASH || i + 2 > end || (i + 2 < end && text.charCodeAt(i + 2) !== SPACE)) return false;
      const opt = text.charCodeAt(i + 1);
      const v = skip(text, i + 2, end);
      const e = v < end ? plainWordEnd(text, v, end) : -1;
      if (e < 0) return false;
      if (opt === 115 /* s */ || opt === 100 /* d */) {
        if ((opt === 115 ? src : dst) || !isNet4(text, v, e)) return false;
        if (opt === 115) src = true;
        else dst = true;
        negate = false;
      } else if (negate) return false;
      else if (opt === 112 /* p */) {
        if (proto || !(is(text, v, e, 'tcp') || is(text, v, e, 'udp') || is(text, v, e, 'sctp'))) return false;
        proto = true;
      } else if (opt === 109 /* m */) {
        const m = this.match(text, v, e, end);
        if (m < 0) return false;
        i = m;
        continue;
      } else if (opt === 106 /* j */ || opt === 103 /* g */) return this.target(text, v, e, end, opt === 103);
      else return false;
      i = e;
    }
  }

  /** `-m NAME` (the name text[at, e)) and its options: where they end, or -1. */
  private match(text: string, at: number, e: number, end: number): number {
    const n = e - at;
    if (n === 7 && is(text, at, e, 'comment')) {
      const o = next(text, e, end, '--comment');
      if (o < 0) return -1;
      const s = skip(text, o, end);
      return s < end ? commentEnd(text, s, end) : -1;
    }
    if ((n === 3 && (is(text, at, e, 'tcp') || is(text, at, e, 'udp'))) || (n === 4 && is(text, at, e, 'sctp'))) {
      // Its port options, each once.
      let i = e;
      let sport = false;
      let dport = false;
      for (;;) {
        let o = next(text, i, end, '--dport');
        const d = o >= 0;
        if (!d) {
          o = next(text, i, end, '--sport');
          if (o < 0) return i;
        }
        if (d ? dport : sport) return -1;
        if (d) dport = true;
        else sport = true;
        const s = skip(text, o, end);
        const ve = s < end ? plainWordEnd(text, s, end) : -1;
        if (ve < 0 || !isPort(text, s, ve)) return -1;
        i = ve;
      }
    }
    if (n === 9 && is(text, at, e, 'statistic')) {
      let o = next(text, e, end, '--mode');
      if (o >= 0) o = next(text, o, end, 'random');
      if (o >= 0) o = next(text, o, end, '--probability');
      if (o < 0) return -1;
      const s = skip(text, o, end);
      const ve = s < end ? plainWordEnd(text, s, end) : -1;
      return ve > s && isProbability(text, s, ve) ? ve : -1;
    }
    return -1;
  }

  /** `-j NAME` / `-g NAME` (the name text[at, e)), the rule's last words. */
  private target(text: string, at: number, e: number, end: number, goto: boolean): boolean {
    if (goto) return skip(text, e, end) === end;
    if (this.dnat && is(text, at, e, 'DNAT')) {
      const o = next(text, e, end, '--to-destination');
      if (o < 0) return false;
      const s = skip(text, o, end);
      const ve = s < end ? plainWordEnd(text, s, end) : -1;
      return ve >= 0 && isNatDestination4(text, s, ve) && skip(text, ve, end) === end;
    }
    // Without options a target is compiled (and could complain) only when it is an extension.
    return skip(text, e, end) === end && (e - at > MAX_TARGET_NAME || !TARGETS.has(text.slice(at, e)));
  }
}
