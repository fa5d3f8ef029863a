/**
 * What iptables-restore makes of a file's bytes before it reads commands, checked against
 * iptables-legacy-restore and iptables-nft-restore 1.8.9 (test/fixtures/kernel/restore-refusals):
 *   - binary data and UTF-16 text: "line 1 failed";
 *   - a UTF-8 byte-order mark: the first line is `\uFEFF*filter`, "line 1 failed";
 *   - Windows line ends: `*filter\r` names no table ("unable to initialize table 'filter\r'");
 *   - a NUL byte: C strings end there, so the tool reads the line only up to it.
 * The parser reports each once, with what to do about it, and reads on as if the file were clean, so the
 * rest of the file still gets its diagnostics.
 */

export type TextKind = 'text' | 'binary' | 'utf16';

/** Binary, UTF-16 (NULs in every other position) or text (possibly with a few stray NULs). */
export function classifyText(text: string): TextKind {
  const n = Math.min(text.length, 65536);
  let control = 0;
  let nul = 0;
  let nulOdd = 0;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0) {
      nul++;
      if (i & 1) nulOdd++;
    } else if ((c < 32 && c !== 9 && c !== 10 && c !== 13) || c === 0xfffd) control++;
  }
  if (n === 0) return 'text';
  // ASCII text in UTF-16 has a NUL beside every character, all on the same parity.
  if (nul > n * 0.3 && (nulOdd > nul * 0.9 || nulOdd < nul * 0.1)) return 'utf16';
  if (nul > n * 0.01 || control / n > 0.1) return 'binary';
  return 'text';
}

/** Binary input: mostly control characters or NULs in the first 64 KiB (stray NULs in text are not). */
export function looksBinary(text: string): boolean {
  return classifyText(text) !== 'text';
}

export const BOM = 0xfeff;
