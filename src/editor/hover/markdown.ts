/**
 * Markdown helpers for hovers. Text from a dump (comments, names, options) is untrusted: it is escaped so
 * it renders as the characters written, never as links, images, HTML or formatting.
 */
const SPECIAL = /[\\`*_{}[\]()#+\-.!|<>~&"']/g;

export function escapeMarkdown(text: string): string {
  return text.replace(SPECIAL, c => `\\${c}`).replace(/\r?\n/g, ' ');
}

/** A code span that can hold backticks (CommonMark: a longer fence than any run inside). */
export function code(text: string): string {
  const clean = text.replace(/\r?\n/g, ' ');
  let fence = '`';
  while (clean.includes(fence)) fence += '`';
  const pad = clean.startsWith('`') || clean.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${clean}${pad}${fence}`;
}

/** A table cell: escaped, and pipes cannot break the row. */
export function cell(text: string): string {
  return escapeMarkdown(text);
}
