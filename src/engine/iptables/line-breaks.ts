/**
 * A dump whose line breaks were lost — pasted through something that joins lines, `\n` written as two
 * characters, or old Mac `\r` line ends — reaches the parser as one long line holding many commands. The
 * parser's other messages ("unknown table 'filter :INPUT …'") do not say so; this hint does.
 */

const COMMAND =
  /(?:^|[\s])(?:-A|-I|-N|-P|--append|--new-chain|COMMIT|\*(?:filter|nat|mangle|raw|security)|:[A-Za-z][\w-]*\s+(?:ACCEPT|DROP|-)\s+\[\d+:\d+\])(?=\s|$)/g;

/** A message when the line seems to hold several lines' worth of commands; null otherwise. */
export function lostLineBreaks(line: string): string | null {
  const sample = line.length > 1 << 20 ? line.slice(0, 1 << 20) : line;
  const cr = sample.indexOf('\r');
  if (cr >= 0 && cr < sample.length - 1 && /\r(?:-A|:|\*|COMMIT)/.test(sample)) {
    return `this line holds several commands separated by carriage returns (\\r) only: the file's line breaks seem to have been converted to old Mac line ends; iptables-restore needs one command per line ending in \\n`;
  }
  if (/\\n(?:-A|-I|-N|:|\*|COMMIT)/.test(sample)) {
    return `this line holds '\\n' written as two characters between commands: the file's line breaks were escaped (e.g. copied from a JSON string or a log); iptables-restore needs real line breaks`;
  }
  COMMAND.lastIndex = 0;
  let n = 0;
  while (COMMAND.exec(sample) && ++n < 3);
  if (n < 2) return null;
  return `this line holds several commands (iptables-save writes one per line): the file's line breaks seem to have been lost, e.g. when it was pasted or joined; iptables-restore would read it as one command and fail`;
}
