/**
 * `trace --json`'s line without why-not, written with each step encoded once. A packet to a Service forks
 * into ten outcomes whose steps are mostly the same objects (those recorded before the fork, and the ones
 * the walker shares between paths when a rule does the same thing: eval/walk.ts `shared`), so the line is
 * the outcomes without their steps, serialised by `JSON.stringify`, with each outcome's steps put back as
 * the UTF-8 bytes of its steps, each step serialised and encoded once per line. The bytes are those of
 * `JSON.stringify(toJsonTrace(…))`: a step is a plain value whose text is the same inside or outside its list.
 */
import type { TraceStep } from '../engine/api.ts';

/** A piece of output: text, or bytes already encoded. */
type Chunk = string | Uint8Array;

/**
 * The line as pieces, given the JSON text of the trace with each outcome's `steps` replaced by `marker`
 * (in outcome order) and each outcome's steps; null when the text does not hold the markers as expected.
 */
export function withSteps(text: string, marker: string, steps: readonly (readonly TraceStep[])[]): Chunk[] | null {
  const parts = text.split(JSON.stringify(marker));
  if (parts.length !== steps.length + 1) return null;
  // Each step as `,{…}`: the first of a list is written without its comma.
  const encoded = new Map<TraceStep, Uint8Array>();
  const bytes = (s: TraceStep): Uint8Array => {
    let b = encoded.get(s);
    if (!b) encoded.set(s, (b = Buffer.from(`,${JSON.stringify(s)}`)));
    return b;
  };
  const out: Chunk[] = [];
  let before = parts[0]!;
  steps.forEach((list, k) => {
    if (list.length === 0) before += '[]';
    else {
      out.push(`${before}[`, bytes(list[0]!).subarray(1));
      for (let i = 1; i < list.length; i++) out.push(bytes(list[i]!));
      before = ']';
    }
    before += parts[k + 1]!;
  });
  out.push(before);
  return out;
}
