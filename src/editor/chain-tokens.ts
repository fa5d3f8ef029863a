/**
 * Where chain names stand on a line of iptables-save / iptables-restore text: the `:NAME` of a declaration,
 * the chain argument of `-A/-I/-R/-D/-N/-X/-F/-P/-Z/-E`, and the target of `-j`/`-g`. Found from the words
 * alone, so it also works on lines the parser rejected and inside files that no longer parse.
 */
export type ChainTokenRole = 'declaration' | 'command' | 'target';

export interface ChainToken {
  readonly name: string;
  readonly start: number;
  readonly end: number;
  readonly role: ChainTokenRole;
  /** For a `-j`/`-g` target: where the option word starts (the target hover covers `-j NAME`). */
  readonly optionStart?: number;
}

export interface Word {
  readonly text: string;
  readonly start: number;
  readonly end: number;
  readonly quoted: boolean;
}

const COMMANDS = new Set([
  '-A',
  '--append',
  '-I',
  '--insert',
  '-R',
  '--replace',
  '-D',
  '--delete',
  '-N',
  '--new-chain',
  '-X',
  '--delete-chain',
  '-F',
  '--flush',
  '-P',
  '--policy',
  '-Z',
  '--zero',
  '-E',
  '--rename-chain',
]);
const TARGET_OPTIONS = new Set(['-j', '--jump', '-g', '--goto']);

/** Splits a line into words as iptables-restore does, keeping each word's span (quotes included). */
export function wordsOf(line: string): Word[] {
  const words: Word[] = [];
  const n = line.length;
  let i = 0;
  while (i < n) {
    while (i < n && (line[i] === ' ' || line[i] === '\t' || line[i] === '\r')) i++;
    if (i >= n) break;
    const start = i;
    let text = '';
    let quoted = false;
    let inQuote = false;
    while (i < n) {
      const c = line[i]!;
      if (inQuote) {
        if (c === '\\' && i + 1 < n && '"\\\''.includes(line[i + 1]!)) {
          text += line[i + 1];
          i += 2;
          continue;
        }
        if (c === '"') inQuote = false;
        else text += c;
        i++;
        continue;
      }
      if (c === ' ' || c === '\t' || c === '\r') break;
      if (c === '"') {
        inQuote = true;
        quoted = true;
      } else text += c;
      i++;
    }
    words.push({ text, start, end: i, quoted });
  }
  return words;
}

export function chainTokensOnLine(line: string): ChainToken[] {
  const out: ChainToken[] = [];
  const trimmed = line.trimStart();
  if (trimmed.startsWith('#') || trimmed.startsWith('*') || trimmed === '') return out;
  const words = wordsOf(line);
  if (words.length === 0) return out;
  const first = words[0]!;
  if (first.text.startsWith(':')) {
    if (first.text.length > 1)
      out.push({ name: first.text.slice(1), start: first.start + 1, end: first.end, role: 'declaration' });
    return out;
  }
  let k = first.text.startsWith('[') ? 1 : 0;
  const cmd = words[k];
  if (cmd && COMMANDS.has(cmd.text)) {
    const name = words[k + 1];
    if (name && !name.text.startsWith('-')) {
      out.push({ name: name.text, start: name.start, end: name.end, role: 'command' });
      const renamed = words[k + 2];
      if ((cmd.text === '-E' || cmd.text === '--rename-chain') && renamed)
        out.push({ name: renamed.text, start: renamed.start, end: renamed.end, role: 'command' });
    }
    k += 2;
  }
  for (let i = k; i < words.length - 1; i++) {
    const w = words[i]!;
    if (!w.quoted && TARGET_OPTIONS.has(w.text)) {
      const t = words[i + 1]!;
      out.push({ name: t.text, start: t.start, end: t.end, role: 'target', optionStart: w.start });
      i++;
    }
  }
  return out;
}

/** The chain token under a character position, if any (the end position counts, as editors do). */
export function chainTokenAt(line: string, character: number): ChainToken | null {
  for (const t of chainTokensOnLine(line)) if (character >= t.start && character <= t.end) return t;
  return null;
}

/** The word under a character position. */
export function wordAt(line: string, character: number): Word | null {
  for (const w of wordsOf(line)) if (character >= w.start && character <= w.end) return w;
  return null;
}
