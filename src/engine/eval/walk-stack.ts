/**
 * The walker's bookkeeping (walk.ts): the chain stack of one path (frames with their position, candidate
 * list and the jump/goto edges that led to them), and the queue of forked paths waiting to run, most probable
 * first, with what decides whether two of them stand at the same point of the walk.
 */
import type { Chain, Rule } from '../model.ts';
import { candidates, chainIndex, packetKey } from './chain-index.ts';
import type { Path } from './path.ts';

/** The jump/goto edges that led to a frame, newest first: `rule` (in the previous chain) entered `chain`. */
export interface Via {
  readonly chain: Chain;
  readonly rule: Rule | null;
  readonly parent: Via | null;
}

export interface Frame {
  readonly chain: Chain;
  /** Next rule position (0-based) in the chain, or in `cand` when indexed. */
  pos: number;
  cand: number[] | null;
  key: string | number | null;
  /** The chain position (0-based) after the last rule `nextRule` returned: where the rules skipped by the index begin. */
  next: number;
  readonly via: Via;
}

export interface Item {
  path: Path;
  stack: Frame[];
  readonly seq: number;
  readonly weight: number;
  dead: boolean;
}

/**
 * A frame at the start of `chain`, with a long chain's candidate list. When misses are explained, only a
 * destination index is used: the walker explains the rules it skips from the index (walk.ts `skipped`).
 */
export function newFrame(chain: Chain, path: Path, explain: boolean, via: Via): Frame {
  const index = chainIndex(chain);
  if (index && (!explain || index.kind === 'dst')) {
    const key = packetKey(index, path.pkt);
    return { chain, pos: 0, cand: candidates(index, key), key, next: 0, via };
  }
  return { chain, pos: 0, cand: null, key: null, next: 0, via };
}

export function cloneStack(stack: Frame[]): Frame[] {
  return stack.map(f => ({ ...f }));
}

/** The next rule of the frame and advances it; null at the end of the chain. */
export function nextRule(f: Frame, path: Path): Rule | null {
  if (f.cand) {
    // The packet's key can change only through a target that ends the table, but stay safe: re-key if so.
    const index = chainIndex(f.chain)!;
    const key = packetKey(index, path.pkt);
    if (key !== f.key) {
      const last = f.pos > 0 ? f.cand[f.pos - 1]! : -1;
      f.cand = candidates(index, key);
      f.key = key;
      f.pos = f.cand.findIndex(i => i > last);
      if (f.pos < 0) f.pos = f.cand.length;
    }
    if (f.pos >= f.cand.length) return null;
    const i = f.cand[f.pos++]!;
    f.next = i + 1;
    return f.chain.rules[i]!;
  }
  if (f.pos >= f.chain.rules.length) return null;
  f.next = f.pos + 1;
  return f.chain.rules[f.pos++]!;
}

/** A max-heap of waiting paths: most probable first, then first forked (deterministic). */
export class Queue {
  private readonly heap: Item[] = [];
  get size(): number {
    return this.heap.length;
  }
  private before(a: Item, b: Item): boolean {
    return a.weight > b.weight || (a.weight === b.weight && a.seq < b.seq);
  }
  push(it: Item): void {
    const h = this.heap;
    h.push(it);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.before(h[i]!, h[p]!)) break;
      [h[i], h[p]] = [h[p]!, h[i]!];
      i = p;
    }
  }
  pop(): Item | undefined {
    const h = this.heap;
    const top = h[0];
    const last = h.pop();
    if (h.length && last) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && this.before(h[l]!, h[m]!)) m = l;
        if (r < h.length && this.before(h[r]!, h[m]!)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
    return top;
  }
}

export function samePoint(a: Frame[], b: Frame[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = a.length - 1; i >= 0; i--) {
    const x = a[i]!;
    const y = b[i]!;
    if (x.chain !== y.chain || x.pos !== y.pos || x.key !== y.key || x.via !== y.via) return false;
  }
  return true;
}
