/**
 * Finding a rule's `-j`/`-g` target while reading, before (or without) compiling the rule: the fast path
 * for the `-A CHAIN spec…` lines of a dump searches the line's text; the general path reads the words.
 */
import { clipWords } from '../diagnostics.ts';
import type { Table } from '../model.ts';
import { IptChain } from './rule-node.ts';
import { type RuleRows, parseCounters } from './rule-store.ts';
import type { TokenBuffer } from './tokenize.ts';

export { parseCounters } from './rule-store.ts';

/**
 * The fast path for the common line `[pkts:bytes] -A CHAIN spec…` (all of an iptables-save dump): finds
 * the chain and the `-j`/`-g` target by searching the line rather than tokenizing it. Returns false when the
 * line needs the general path (another command, tabs, an undeclared chain, a target hidden among quotes).
 */
/** What the fast path keeps between lines. */
export interface FastAppendState {
  /** A `[pkts:bytes]` prefix that is not one, for the general path to report. */
  error: string | null;
  /**
   * The chain of the previous line's rule: an iptables-save dump writes a chain's rules together, so the
   * next line's chain is usually this one, found without a lookup. The reader clears it on any line that
   * is not a fast-path rule (which might add, delete or rename a chain).
   */
  chain: IptChain | null;
  /** The chain of the rule before, when it was another (kube-proxy interleaves a Service's chains). */
  prev: IptChain | null;
}

/** `c` when it is a live chain called text[at, end) of `line`. */
function named(c: IptChain | null, line: string, at: number, end: number): IptChain | null {
  return c !== null && !c.retired && c.name.length === end - at && line.startsWith(c.name, at) ? c : null;
}

export function fastAppend(
  line: string,
  lineStart: number,
  k: number,
  c0: number,
  table: Table,
  rows: RuleRows,
  lineNo: number,
  state: FastAppendState,
): boolean {
  let p = k;
  let countersEnd = 0;
  if (c0 === 91 /* [ */) {
    const close = line.indexOf('] ', p);
    if (close < 0) return false;
    if (!parseCounters(line.slice(p, close + 1))) {
      state.error = line.slice(p, close + 1);
      return false;
    }
    countersEnd = close + 1;
    p = close + 2;
    while (line.charCodeAt(p) === 32) p++;
  }
  if (!line.startsWith('-A ', p) || line.includes('\t')) return false;
  const nameStart = p + 3;
  let nameEnd = line.indexOf(' ', nameStart);
  if (nameEnd < 0) nameEnd = line.length;
  const last = state.chain;
  const prev = state.prev;
  // The previous rule's chain, the one before it, or a chain declared right after either (see
  // `IptChain.declaredNext`) before a lookup among all of the table's chains.
  const chain =
    named(last, line, nameStart, nameEnd) ??
    named(prev, line, nameStart, nameEnd) ??
    named(last && last.declaredNext, line, nameStart, nameEnd) ??
    named(prev && prev.declaredNext, line, nameStart, nameEnd) ??
    table.chains.get(line.slice(nameStart, nameEnd));
  if (!(chain instanceof IptChain)) return false;
  if (chain !== last) {
    state.prev = last;
    state.chain = chain;
  }
  let specStart = nameEnd;
  while (line.charCodeAt(specStart) === 32) specStart++;
  const kind = findTargetInText(line, specStart);
  if (kind < 0) return false;
  const f = found;
  chain.append(rows.add(lineStart, line.length, lineNo, specStart, k, countersEnd, kind, f.start, f.nameStart, f.end));
  return true;
}

/**
 * iptables-restore accepts a quote that is never closed: the word runs to the end of the line
 * (`add_param_to_argv`), so a `-j ACCEPT` after it is part of the comment and the rule has no target
 * (iptables-save then prints the rule back with that comment). Accepted, so a warning; the message says
 * what the user most likely meant.
 */
export function unterminatedQuoteMessage(line: string, at: number): string {
  const rest = line.slice(at + 1);
  const m = /(?:^|\s)(-j|-g|--jump|--goto)\s+(\S+)/.exec(rest);
  const what = /--comment\s+$/.test(line.slice(0, at))
    ? 'the rest of the line is the comment'
    : 'iptables-restore reads the rest of the line as this one word';
  if (m)
    return `unterminated quote: ${what}, so \`${m[1]} ${clipWords(m[2]!)}\` is not the target and this rule has none (iptables-restore accepts the line so); close the quote before ${m[1]}`;
  return `unterminated quote: iptables-restore reads the rest of the line as one word`;
}

/** Whether every double quote of the line is closed (backslash escapes one inside quotes, as the tokenizer reads them). */
function quotesBalanced(line: string): boolean {
  const first = line.indexOf('"');
  if (first < 0) return true;
  if (line.indexOf('\\', first) < 0) {
    // No escapes (kube-proxy's comments): balanced when the quotes are even in number.
    let count = 0;
    for (let i = first; i >= 0; i = line.indexOf('"', i + 1)) count++;
    return (count & 1) === 0;
  }
  let open = false;
  for (let i = first; i >= 0 && i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c === 92 /* \ */ && open) i++;
    else if (c === 34) open = !open;
  }
  return !open;
}

/** Where `findTargetInText` found the target (one record, reused: the reader calls it for every rule). */
const found = { start: 0, nameStart: 0, end: 0 };

/**
 * The last `-j NAME`/`-g NAME` (or `--jump`/`--goto`) outside quotes: 1 for a jump, 2 for a goto (its range
 * in `found`), 0 when the rule has none, -1 when quotes make a text search unsafe. One backward scan from
 * the end of the line: the last marker wins, and a quote after it (or no marker in the rule's words)
 * sends the line to the tokenizer.
 */
function findTargetInText(line: string, specStart: number): number {
  const lower = specStart - 1;
  let best = -1;
  let markerLength = 0;
  let goto = false;
  for (let i = line.length - 1; i >= lower; i--) {
    const c = line.charCodeAt(i);
    if (c === 34 /* " */) break;
    if (c !== 32 || line.charCodeAt(i + 1) !== 45 /* - */) continue;
    const c2 = line.charCodeAt(i + 2);
    if ((c2 === 106 /* j */ || c2 === 103) /* g */ && line.charCodeAt(i + 3) === 32) {
      best = i;
      markerLength = 4;
      goto = c2 === 103;
      break;
    }
    if (c2 === 45 && (line.startsWith(' --jump ', i) || line.startsWith(' --goto ', i))) {
      best = i;
      markerLength = 8;
      goto = line.charCodeAt(i + 3) === 103;
      break;
    }
  }
  if (best < 0) {
    // No marker after the last quote: a quote anywhere, or a `-j` the search cannot see, needs the words.
    if (line.lastIndexOf('"') >= 0) return -1;
    return line.startsWith('-j ', specStart) || line.startsWith('-g ', specStart) ? -1 : 0;
  }
  if (line.lastIndexOf('"', best) >= 0 && !quotesBalanced(line)) return -1;
  let s = best + markerLength;
  while (line.charCodeAt(s) === 32) s++;
  let e = line.indexOf(' ', s);
  if (e < 0) e = line.length;
  if (e === s) return -1;
  found.start = best + 1;
  found.nameStart = s;
  found.end = e;
  return goto ? 2 : 1;
}

/** The word index of the last `-j`/`-g` (`--jump`/`--goto`) from word `from` on that has a name after it, or -1. */
export function findTargetInTokens(tok: TokenBuffer, from: number): number {
  let found = -1;
  for (let i = from; i < tok.count - 1; i++) {
    const w = tok.text[i];
    if (tok.quoted[i] === 0 && (w === '-j' || w === '--jump' || w === '-g' || w === '--goto')) found = i;
  }
  return found;
}
