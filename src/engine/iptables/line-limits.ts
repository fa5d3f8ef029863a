/**
 * iptables-restore's own limits on one line (iptables/xshared.c, `add_param_to_argv` and `add_argv`,
 * checked with iptables-legacy-restore and iptables-nft-restore 1.8.9): a word of 1024 characters or
 * more fails with "Parameter too long!", and a line of more than 251 words (252 plus argv[0], `-t` and
 * the table name reach the 255-slot argv) with "Parser cannot handle more arguments". The parser refuses
 * such a line the same way, before tokenizing it, which also keeps a 20 MB line from costing memory.
 */

export const MAX_WORDS = 251;
export const MAX_WORD_LENGTH = 1023;

/** The tool's refusal for this line, or null. Only lines of 500 characters or more can exceed a limit. */
export function argvLimit(line: string): string | null {
  if (line.length < 500) return null;
  let words = 0;
  let longest = 0;
  let i = 0;
  const n = line.length;
  while (i < n) {
    while (i < n && (line.charCodeAt(i) === 32 || line.charCodeAt(i) === 9)) i++;
    if (i >= n) break;
    words++;
    let len = 0;
    let quoted = false;
    for (; i < n; i++) {
      const c = line.charCodeAt(i);
      if (c === 34) quoted = !quoted;
      else if (c === 92 && quoted && i + 1 < n) {
        i++;
        len++;
      } else if (!quoted && (c === 32 || c === 9)) break;
      else len++;
    }
    if (len > longest) longest = len;
  }
  if (longest > MAX_WORD_LENGTH) {
    return `iptables-restore refuses this line: "Parameter too long!" (a word may have at most ${MAX_WORD_LENGTH} characters; the longest here has ${longest}); the line is not read`;
  }
  if (words > MAX_WORDS) {
    return `iptables-restore refuses this line: "Parser cannot handle more arguments" (at most ${MAX_WORDS} words a line; this one has ${words}); the line is not read`;
  }
  return null;
}
