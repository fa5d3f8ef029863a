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
import type { Family } from '../net/addr.ts';
import { TARGETS } from '../targets/registry.ts';

const SPACE = 32;
const QUOTE = 34;
const BACKSLASH = 92;
const DASH = 45;

/** Whether text[at, at + word.length) is `word` followed by a space or the end `end`. */
function isWord(text: string, at: number, end: number, word: string): boolean {
  const e = at + word.length;
  return e <= end && (e === end || text.charCodeAt(e) === SPACE) && text.startsWith(word, at);
}

/**
 * Where the plain word starting at `at` ends (a space or `end`), or -1 when it holds a character the
 * tokenizer treats specially (a quote, a backslash is fine outside quotes but is refused here too, a tab or
 * a carriage return, which separate words), so that the caller falls back to the full validator.
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

/** Whether only spaces follow `at`. */
function restIsEmpty(text: string, at: number, end: number): boolean {
  while (at < end && text.charCodeAt(at) === SPACE) at++;
  return at === end;
}

/** Digits text[from, to) as a number, when there are 1 to `max` of them; else -1. */
function decimal(text: string, from: number, to: number, max: number): number {
  if (to - from < 1 || to - from > max) return -1;
  let n = 0;
  for (let i = from; i < to; i++) {
    const d = text.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
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
    const from = i;
    while (i < end && i - from < 4) {
      const d = text.charCodeAt(i) - 48;
      if (d < 0 || d > 9) break;
      i++;
    }
    const n = decimal(text, from, i, 3);
    if (n < 0 || n > 255) return -1;
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
    return e === at + 1 && text.charCodeAt(at) === 33 /* ! */ ? -1 : e;
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
      while (i < end && text.charCodeAt(i) === SPACE) i++;
      if (i >= end) return !negate;
      const e = plainWordEnd(text, i, end);
      if (e < 0) return false;
      if (e === i + 1 && text.charCodeAt(i) === 33 /* ! */) {
        if (negate) return false;
        negate = true;
        i = e;
        continue;
      }
      // Only the two-character options below.
      if (e !== i + 2 || text.charCodeAt(i) !== DASH) return false;
      const opt = text.charCodeAt(i + 1);
      let v = e;
      while (v < end && text.charCodeAt(v) === SPACE) v++;
      if (v >= end) return false;
      if (opt === 115 /* s */ || opt === 100 /* d */) {
        if (opt === 115 ? src : dst) return false;
        const ve = plainWordEnd(text, v, end);
        if (ve < 0 || !isNet4(text, v, ve)) return false;
        if (opt === 115) src = true;
        else dst = true;
        negate = false;
        i = ve;
        continue;
      }
      if (negate) return false;
      if (opt === 112 /* p */) {
        if (proto) return false;
        if (!isWord(text, v, end, 'tcp') && !isWord(text, v, end, 'udp') && !isWord(text, v, end, 'sctp')) return false;
        proto = true;
        i = plainWordEnd(text, v, end);
        continue;
      }
      if (opt === 109 /* m */) {
        i = this.match(text, v, end);
        if (i < 0) return false;
        continue;
      }
      if (opt === 106 /* j */ || opt === 103 /* g */) return this.target(text, v, end, opt === 103);
      return false;
    }
  }

  /** `-m NAME` and its options, from the module's name at `at`; where they end, or -1. */
  private match(text: string, at: number, end: number): number {
    if (isWord(text, at, end, 'comment')) {
      let i = at + 7;
      while (i < end && text.charCodeAt(i) === SPACE) i++;
      if (!isWord(text, i, end, '--comment')) return -1;
      i += 9;
      while (i < end && text.charCodeAt(i) === SPACE) i++;
      return i < end ? commentEnd(text, i, end) : -1;
    }
    if (isWord(text, at, end, 'tcp') || isWord(text, at, end, 'udp') || isWord(text, at, end, 'sctp')) {
      let i = text.charCodeAt(at) === 115 ? at + 4 : at + 3;
      // Its port options, each once.
      let sport = false;
      let dport = false;
      for (;;) {
        let w = i;
        while (w < end && text.charCodeAt(w) === SPACE) w++;
        const d = isWord(text, w, end, '--dport');
        if (!d && !isWord(text, w, end, '--sport')) return i;
        if (d ? dport : sport) return -1;
        if (d) dport = true;
        else sport = true;
        let v = w + 7;
        while (v < end && text.charCodeAt(v) === SPACE) v++;
        const ve = v < end ? plainWordEnd(text, v, end) : -1;
        if (ve < 0 || !isPort(text, v, ve)) return -1;
        i = ve;
      }
    }
    if (isWord(text, at, end, 'statistic')) {
      let i = at + 9;
      while (i < end && text.charCodeAt(i) === SPACE) i++;
      if (!isWord(text, i, end, '--mode')) return -1;
      i += 6;
      while (i < end && text.charCodeAt(i) === SPACE) i++;
      if (!isWord(text, i, end, 'random')) return -1;
      i += 6;
      while (i < end && text.charCodeAt(i) === SPACE) i++;
      if (!isWord(text, i, end, '--probability')) return -1;
      i += 13;
      while (i < end && text.charCodeAt(i) === SPACE) i++;
      const ve = i < end ? plainWordEnd(text, i, end) : -1;
      return ve > i && isProbability(text, i, ve) ? ve : -1;
    }
    return -1;
  }

  /** `-j NAME` / `-g NAME` from the name at `at`, the rule's last words. */
  private target(text: string, at: number, end: number, goto: boolean): boolean {
    const e = plainWordEnd(text, at, end);
    if (e < 0) return false;
    if (goto) return restIsEmpty(text, e, end);
    let rest = e;
    while (rest < end && text.charCodeAt(rest) === SPACE) rest++;
    if (this.dnat && isWord(text, at, end, 'DNAT')) {
      if (!isWord(text, rest, end, '--to-destination')) return false;
      let v = rest + 16;
      while (v < end && text.charCodeAt(v) === SPACE) v++;
      const ve = v < end ? plainWordEnd(text, v, end) : -1;
      if (ve < 0 || !isNatDestination4(text, v, ve)) return false;
      return restIsEmpty(text, ve, end);
    }
    // Without options a target is compiled (and could complain) only when it is an extension.
    return rest === end && !TARGETS.has(text.slice(at, e));
  }
}
