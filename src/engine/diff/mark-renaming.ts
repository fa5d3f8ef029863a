/**
 * Two iptables rulesets that are the same up to a renaming of mark bits (issue 18 item 3): kube-proxy's
 * `--iptables-masquerade-bit=15` writes KUBE-MARK-MASQ and KUBE-POSTROUTING with 0x8000 where the default
 * writes 0x4000, every other rule alike. If the new ruleset is the old one with every mark constant (of
 * `-m mark`, `-m connmark`, MARK and CONNMARK, value and mask) put through a permutation σ of bits, then a
 * packet that enters with mark m under the new rules meets, rule by rule, what it meets with mark σ⁻¹(m)
 * under the old: a test `(mark & mask) == value` holds for m under σ(value)/σ(mask) exactly when it holds
 * for σ⁻¹(m) under value/mask, and every MARK/CONNMARK write (`(mark & ~mask) ^ value`, save and restore
 * with masks; xt_mark.c, xt_connmark.c) commutes with σ, so the two walks stay σ apart. Nothing else the
 * trace reads looks at a mark (policy routing by fwmark is excluded below), and a fate holds no mark
 * (docs/diff.md, "What the proof assumes"). So every packet whose marks σ leaves alone — every packet from
 * outside (mark 0, connection mark 0) and every packet the node sends with such a socket mark — fares alike,
 * and only packets the node sends with a mark σ moves need classes. Those are real changes (a socket mark
 * holding the new bit is masqueraded only by the new rules; the kernel agrees, test/diff/worst.test.ts).
 *
 * σ is read off the changed chains' rule pairs (same position, the same rule but for mark constants) as
 * transpositions of single bits, then checked on every constant: the pairs' must map, every other rule's
 * (both rulesets, unchanged chains included) must be fixed by σ. Anything else that reads or writes a mark
 * (an unknown module or target naming one, rpfilter, socket, TPROXY, CT zones from marks) makes it no renaming.
 */
import type { Rule, Ruleset } from '../model.ts';
import type { NodeConfig } from '../eval/node.ts';
import { mentionsBesidesJump, ruleKey } from '../iptables/rule-text.ts';
import { MATCHES } from '../matches/registry.ts';
import type { Box } from './box.ts';
import type { ClassEnv, PacketClass } from './classes.ts';
import { pieceClass } from './refine.ts';
import { tableByName } from './normalize.ts';
import type { ChainChange } from './types.ts';

/** A permutation of mark bits as disjoint transpositions of single bits `[p, q]`. */
export interface MarkRenaming {
  readonly swaps: readonly (readonly [number, number])[];
}

/** At most this many transpositions: the local classes split into 4^k mark pieces. */
const MAX_SWAPS = 3;
/** Options whose arguments are mark constants (their meaning is read from the compiled spec instead). */
const MARK_OPTIONS = new Set([
  '--mark',
  '--set-xmark',
  '--set-mark',
  '--or-mark',
  '--and-mark',
  '--xor-mark',
  '--mask',
  '--nfmask',
  '--ctmask',
]);

export function applyRenaming(r: MarkRenaming, x: number): number {
  let out = x >>> 0;
  for (const [p, q] of r.swaps) if (((out & p) === 0) !== ((out & q) === 0)) out = (out ^ (p | q)) >>> 0;
  return out;
}

/** A rule's words without its mark constants, and those constants from the compiled modules; null: not understood. */
function markParts(rule: Rule): { rest: string; marks: number[] } | null {
  const marks: number[] = [];
  for (const m of rule.matches) {
    const name = m.module.name;
    if (name === 'mark' || name === 'connmark') {
      const s = m.spec as { value: number; mask: number };
      marks.push(s.value, s.mask);
    } else if (name === 'rpfilter' || name === 'socket' || !MATCHES.has(name)) return null;
  }
  const t = rule.target;
  if (t?.kind === 'unknown') return null;
  if (t?.kind === 'target') {
    const name = t.module.name;
    const spec = t.spec as
      | { value: number; mask: number }
      | { kind: 'set'; x: { value: number; mask: number } }
      | { kind: 'save' | 'restore'; nfmask: number; ctmask: number }
      | null;
    if (name === 'MARK' || name === 'CONNMARK') {
      if (!spec) return null;
      if ('value' in spec) marks.push(spec.value, spec.mask);
      else if (spec.kind === 'set') marks.push(spec.x.value, spec.x.mask);
      else marks.push(spec.nfmask, spec.ctmask);
    } else if (t.options.some(o => /mark/i.test([o.name, ...o.args].join(' ')))) return null;
  }
  const words = ruleKey(rule).split(' ');
  const kept: string[] = [];
  for (let i = 0; i < words.length; i++) {
    if (MARK_OPTIONS.has(words[i]!)) i++;
    else kept.push(words[i]!);
  }
  // The target's name stays: `-j MARK` and `-j CONNMARK` differ; `--save-mark` and `--restore-mark` stay.
  return { rest: kept.join(' '), marks };
}

function singleBit(x: number): boolean {
  return x !== 0 && (x & (x - 1)) === 0;
}

/** Transpositions read off the constants a pair of rules differs in; null when they are not single bits. */
function swapsOf(pairs: readonly (readonly [number, number])[]): MarkRenaming | null {
  const swaps: [number, number][] = [];
  const used = new Map<number, number>();
  for (const [a, b] of pairs) {
    const p = (a & ~b) >>> 0;
    const q = (b & ~a) >>> 0;
    if (!p && !q) continue;
    if (!singleBit(p) || !singleBit(q)) continue;
    if (used.get(p) === q && used.get(q) === p) continue;
    if (used.has(p) || used.has(q)) return null;
    used.set(p, q);
    used.set(q, p);
    swaps.push([p, q]);
  }
  return swaps.length && swaps.length <= MAX_SWAPS ? { swaps } : null;
}

/**
 * σ such that the new ruleset is the old one with its mark constants renamed by σ, or null. Only for
 * iptables dumps, without `--paths` (rule texts differ on the renamed paths) and without policy routing by
 * fwmark (routing would read the mark).
 */
export function markRenaming(
  oldRs: Ruleset,
  newRs: Ruleset,
  changes: readonly ChainChange[],
  node: NodeConfig | undefined,
  paths: boolean,
): MarkRenaming | null {
  if (paths || !changes.length || oldRs.format === 'nft' || newRs.format === 'nft') return null;
  if ((node?.context?.rules ?? []).some(r => r.fwmark !== null)) return null;
  const pairs: [number, number][] = [];
  // The rules of pairs that differ: their constants are checked as pairs (σ(old) = new), not as fixed.
  const renamed = new Set<Rule>();
  for (const c of changes) {
    if (c.change !== 'rules') return null;
    const a = tableByName(oldRs, c.table)?.chains.get(c.chain);
    const b = tableByName(newRs, c.table)?.chains.get(c.chain);
    if (!a || !b || a.policy !== b.policy || a.rules.length !== b.rules.length) return null;
    for (let i = 0; i < a.rules.length; i++) {
      const x = a.rules[i]!;
      const y = b.rules[i]!;
      if (ruleKey(x) === ruleKey(y)) continue;
      renamed.add(x).add(y);
      const px = markParts(x);
      const py = markParts(y);
      if (!px || !py || px.rest !== py.rest || px.marks.length !== py.marks.length) return null;
      px.marks.forEach((v, k) => pairs.push([v, py.marks[k]!]));
    }
  }
  const sigma = swapsOf(pairs);
  if (!sigma || pairs.some(([a, b]) => applyRenaming(sigma, a) !== b >>> 0)) return null;
  // Every other rule that names a mark (both sides, renamed pairs' equal twins included) must keep it.
  for (const rs of [oldRs, newRs]) {
    for (const table of rs.tables.values()) {
      for (const chain of table.chains.values()) {
        for (const rule of chain.rules) {
          if (renamed.has(rule) || !mentionsBesidesJump(rule, 'mark', n => table.chains.has(n))) continue;
          const p = markParts(rule);
          if (!p || p.marks.some(v => applyRenaming(sigma, v) !== v >>> 0)) return null;
        }
      }
    }
  }
  return sigma;
}

/** The mark bits σ moves. */
function movedBits(sigma: MarkRenaming): number[] {
  return sigma.swaps.flatMap(([p, q]) => [p, q]);
}

/**
 * The part of a class σ does not leave alone, one of each mirrored pair: nothing for a class from outside
 * (mark 0); for a class of packets the node sends, its pieces whose moved bits are pinned to a pattern σ
 * changes and that is the smaller of the pair (each moved bit b a
 * mark test `b/b` of its own, on which every mark of the piece agrees with its representative, as refine.ts
 * reads the `-m mark` tests a class was cut at). A class whose earlier mark tests
 * disagree with a pinned piece is kept whole (traced as before).
 */
export function movedPart(env: ClassEnv, c: PacketClass, sigma: MarkRenaming): PacketClass[] {
  const box = c.box;
  if (!box) return [c];
  if (box.from === 'outside') return [];
  const bits = movedBits(sigma);
  const all = bits.reduce((a, b) => (a | b) >>> 0, 0);
  const rep = Number(c.input.mark ?? 0) >>> 0;
  const out: PacketClass[] = [];
  for (let pattern = 0; pattern < 1 << bits.length; pattern++) {
    let mark = (rep & ~all) >>> 0;
    bits.forEach((b, k) => {
      if (pattern & (1 << k)) mark = (mark | b) >>> 0;
    });
    // σ is a product of disjoint swaps, so it pairs each moved pattern with another: the smaller one is
    // traced and stands for both (`mirrorClass`).
    if (applyRenaming(sigma, mark) <= mark) continue;
    const agrees = box.marks.every(([v, m]) => ((mark & m) >>> 0 === v) === ((rep & m) >>> 0 === v));
    if (!agrees) return [c];
    const marks = [...box.marks, ...bits.map(b => [b, b] as const)];
    const piece = pieceClass(env, c, { box: { ...box, marks } satisfies Box, mark });
    if (piece) out.push(piece);
  }
  return out;
}

/**
 * The class σ pairs with a traced one: the same box, its representative's mark renamed. It fares under the
 * old rules as the traced class under the new ones and the other way round (the equivariance above, with
 * σ an involution), so its comparison is the traced one with the two sides' walks exchanged, and it is
 * closed exactly when the traced class is. Null for a class whose mark σ leaves alone.
 */
export function mirrorClass(env: ClassEnv, c: PacketClass, sigma: MarkRenaming): PacketClass | null {
  const box = c.box;
  if (!box || box.from !== 'local') return null;
  // Only a class that pins every moved bit (movedPart's pieces and what they split into): one that does
  // not holds both members of a pair itself.
  if (!movedBits(sigma).every(b => box.marks.some(([v, m]) => v === b && m === b))) return null;
  const mark = Number(c.input.mark ?? 0) >>> 0;
  const other = applyRenaming(sigma, mark);
  if (other === mark) return null;
  // The renamed tests: a packet agrees with the mirror's representative on σ(test) exactly when its
  // renamed twin agrees with the traced representative on the test, so the mirror's box is σ(box).
  const marks = box.marks.map(([v, m]) => [applyRenaming(sigma, v), applyRenaming(sigma, m)] as const);
  return pieceClass(env, c, { box: { ...box, marks }, mark: other });
}
