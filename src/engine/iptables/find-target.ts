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
  const m = /^\[(\d+):(\d+)\]$/.exec(text);
  return m ? { packets: m[1]!, bytes: m[2]! } : null;
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

const TARGET_MARKERS = [' -j ', ' -g ', ' --jump ', ' --goto '];

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
  let open = false;
  for (let i = line.indexOf('"'); i >= 0 && i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c === 92 /* \ */ && open) i++;
    else if (c === 34) open = !open;
  }
  return !open;
}

/** The last `-j NAME`/`-g NAME` outside quotes; undefined when quotes make a text search unsafe. */
function findTargetInText(line: string, specStart: number): TargetRef | null | undefined {
  const q = line.lastIndexOf('"');
  if (q >= 0 && !quotesBalanced(line)) return undefined;
  let best = -1;
  let marker = '';
  for (const m of TARGET_MARKERS) {
    const at = line.lastIndexOf(m);
    if (at > best) {
      best = at;
      marker = m;
    }
  }
  if (best >= specStart - 1 && best > q) {
    let s = best + marker.length;
    while (line.charCodeAt(s) === 32) s++;
    let e = line.indexOf(' ', s);
    if (e < 0) e = line.length;
    if (e === s) return undefined;
    return { kind: marker.includes('g') ? 'goto' : 'jump', name: line.slice(s, e), start: best + 1, end: e };
  }
  if (line.startsWith('-j ', specStart) || line.startsWith('-g ', specStart)) return undefined;
  return q < 0 ? null : undefined;
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
