/** Helpers for the editor-logic tests: parse a dump as the editor does, and apply text edits. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { type DumpIndex, analyzeDump } from '../../src/editor/dump-index.ts';
import type { TextEdit } from '../../src/editor/ranges.ts';
import { ROOT } from '../helpers/fixtures.ts';
import type { SpawnWorker } from '../../src/worker/client.ts';

export function analyze(text: string, file = 'test.rules'): DumpIndex {
  return analyzeDump(text, { file });
}

/** examples/seed-003: kube-proxy v1.31 rules of seed 003's kind worker (see the file's header). */
export function seedText(): string {
  return readFileSync(join(ROOT, 'examples', 'seed-003', 'node-myk8s-worker.rules'), 'utf8');
}

export function lineOf(text: string, needle: string): number {
  const l = text.split('\n').findIndex(x => x.includes(needle));
  if (l < 0) throw new Error(`no line contains ${needle}`);
  return l;
}

/** The character where `word` starts on the line that contains `needle` (plus `offset`). */
export function at(text: string, needle: string, word: string, offset = 1): { line: number; character: number } {
  const line = lineOf(text, needle);
  const c = text.split('\n')[line]!.indexOf(word);
  if (c < 0) throw new Error(`line ${line} has no ${word}`);
  return { line, character: c + offset };
}

/** Applies non-overlapping edits (as an editor would) and returns the new text. */
export function applyEdits(text: string, edits: readonly TextEdit[]): string {
  const starts = [0];
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  const offset = (p: { line: number; character: number }) =>
    p.line >= starts.length ? text.length : starts[p.line]! + p.character;
  const sorted = [...edits].sort((a, b) => offset(b.range.start) - offset(a.range.start));
  let out = text;
  for (const e of sorted) out = out.slice(0, offset(e.range.start)) + e.newText + out.slice(offset(e.range.end));
  return out;
}

export function dump(lines: readonly string[]): string {
  return `${lines.join('\n')}\n`;
}

/** A real worker_threads worker running src/worker/node-main.ts through tsx (what dist/worker.js bundles). */
export const realWorker: SpawnWorker = (onMessage, onExit) => {
  const main = join(__dirname, '..', '..', 'src', 'worker', 'node-main.ts');
  const w = new Worker(`require('tsx/cjs'); require(${JSON.stringify(main)});`, { eval: true });
  let stopped = false;
  w.on('message', onMessage);
  w.on('exit', code => stopped || onExit(`exit ${code}`));
  return {
    post: (m, t) => w.postMessage(m, t as ArrayBuffer[]),
    terminate: () => {
      stopped = true;
      void w.terminate();
    },
  };
};
