/**
 * Finding a rule's `-j`/`-g` target while reading, before (or without) compiling the rule: the fast path
 * for the `-A CHAIN spec…` lines of a dump searches the line's text; the general path reads the words.
 */
import { clipWords } from '../diagnostics.ts';
import type { Family } from '../net/addr.ts';
import type { Counters, Table } from '../model.ts';
import { IptRule, type TargetRef } from './rule-node.ts';
import type { TokenBuffer } from './tokenize.ts';

/** `[packets:bytes]` as iptables-save -c writes it, or null. */
export function parseCounters(text: string): Counters | null {
  // `^\[(\d+):(\d+)\]$` by hand: a dump has one per chain and, with -c, one per rule.
  const n = text.length;
  if (n < 5 || text.charCodeAt(0) !== 91 /* [ */ || text.charCodeAt(n - 1) !== 93 /* ] */) return null;
  const colon = text.indexOf(':');
  if (colon < 2 || colon > n - 3) return null;
  for (let i = 1; i < n - 1; i++) {
    const c = text.charCodeAt(i);
    if (i !== colon && (c < 48 || c > 57)) return null;
  }
  return { packets: text.slice(1, colon), bytes: text.slice(colon + 1, n - 1) };
}

/**
 * The fast path for the common line `[pkts:bytes] -A CHAIN spec…` (all of an iptables-save dump): finds
 * the chain and the `-j`/`-g` target by searching the line rather than tokenizing it. Returns false when the
 * line needs the general path (another command, tabs, an undeclared chain, a target hidden among quotes).
 */
export function fastAppend(
  line: string,
  k: number,
  c0: number,
  table: Table,
  lineNo: number,
  family: Family,
  counterSink: { error: string | null },
): boolean {
  let p = k;
  let counters: Counters | null = null;
  if (c0 === 91 /* [ */) {
    const close = line.indexOf('] ', p);
    if (close < 0) return false;
    counters = parseCounters(line.slice(p, close + 1));
    if (!counters) {
      counterSink.error = line.slice(p, close + 1);
      return false;
    }
    p = close + 2;
    while (line.charCodeAt(p) === 32) p++;
  }
  if (!line.startsWith('-A ', p) || line.includes('\t')) return false;
  const nameStart = p + 3;
  let nameEnd = line.indexOf(' ', nameStart);
  if (nameEnd < 0) nameEnd = line.length;
  const chain = table.chains.get(line.slice(nameStart, nameEnd));
  if (!chain) return false;
  let specStart = nameEnd;
  while (line.charCodeAt(specStart) === 32) specStart++;
  const target = findTargetInText(line, specStart);
  if (target === undefined) return false;
  chain.rules.push(new IptRule(table, chain.name, lineNo, line, counters, specStart, k, target, family));
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

/**
 * The last `-j NAME`/`-g NAME` (or `--jump`/`--goto`) outside quotes; undefined when quotes make a text
 * search unsafe. One backward scan from the end of the line: the last marker wins, and a quote after it
 * (or no marker in the rule's words) sends the line to the tokenizer.
 */
function findTargetInText(line: string, specStart: number): TargetRef | null | undefined {
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
    if (line.lastIndexOf('"') >= 0) return undefined;
    return line.startsWith('-j ', specStart) || line.startsWith('-g ', specStart) ? undefined : null;
  }
  if (line.lastIndexOf('"', best) >= 0 && !quotesBalanced(line)) return undefined;
  let s = best + markerLength;
  while (line.charCodeAt(s) === 32) s++;
  let e = line.indexOf(' ', s);
  if (e < 0) e = line.length;
  if (e === s) return undefined;
  return { kind: goto ? 'goto' : 'jump', name: line.slice(s, e), start: best + 1, end: e };
}

export function findTargetInTokens(tok: TokenBuffer, from: number): TargetRef | null {
  let found: TargetRef | null = null;
  for (let i = from; i < tok.count - 1; i++) {
    const w = tok.text[i];
    if (tok.quoted[i] === 0 && (w === '-j' || w === '--jump' || w === '-g' || w === '--goto')) {
      found = {
        kind: w === '-g' || w === '--goto' ? 'goto' : 'jump',
        name: tok.text[i + 1]!,
        start: tok.start[i]!,
        end: tok.end[i + 1]!,
      };
    }
  }
  return found;
}
