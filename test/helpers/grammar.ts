/** A TextMate grammar file of syntaxes/, read for the grammar tests (checked with JavaScript regular expressions). */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './fixtures.ts';

export interface Pattern {
  match?: string;
  begin?: string;
  end?: string;
  name?: string;
  captures?: Record<string, { name: string }>;
  patterns?: Pattern[];
  include?: string;
}

export interface Grammar {
  scopeName: string;
  patterns: Pattern[];
  repository: Record<string, Pattern>;
}

export function loadGrammar(file: string): Grammar {
  return JSON.parse(readFileSync(join(ROOT, 'syntaxes', file), 'utf8')) as Grammar;
}
