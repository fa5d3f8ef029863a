/**
 * A rule's words as its front end read them, for the few readers that need the words rather than the
 * compiled checks: the one display text of a rule (diff reports), its identity without counters and
 * comments (which chains changed), and cheap prefilters over a 300k-rule dump that must not compile every
 * rule (an exact `-d`, whether a word occurs). Only the front ends read rule text; everything else asks here.
 * iptables rules answer from their line as written; nftables rules from their statements as nft prints
 * them (each lowered operation's `text`).
 */
import { type Net, parseNet } from '../net/addr.ts';
import type { Rule } from '../model.ts';
import type { ParsedOption } from '../matches/types.ts';
import { IptRule } from './rule-node.ts';
import { tokenizeLine } from './tokenize.ts';

/**
 * nft statements as nft prints them, one space apart; without counters, the identity: each statement whole
 * (an anonymous map's elements, which the display abbreviates, nft-program/program.ts `Op.key`).
 */
function nftText(rule: Rule, withCounters: boolean): string {
  const ops = rule.nft?.ops ?? [];
  return ops
    .filter(o => withCounters || !o.text.startsWith('counter'))
    .map(o => (withCounters ? o.text : (o.key ?? o.text)))
    .join(' ');
}

/** The rule as people read it: the iptables specification after `-A CHAIN` as written, or nft's statements. */
export function ruleText(rule: Rule): string {
  if (rule instanceof IptRule || !rule.nft) return rule.raw.slice(rule.specStart).trim();
  return nftText(rule, true);
}

const keys = new WeakMap<Rule, string>();

/**
 * The rule's words without packet/byte counters (`[p:b]`, `-c p b`) and comments (`-m comment --comment …`),
 * one space apart (quoted words JSON-quoted): neither changes what a rule matches or does (`xt_comment.c`
 * always matches). Two rules with the same key behave the same; option order still counts.
 */
export function ruleKey(rule: Rule): string {
  const hit = keys.get(rule);
  if (hit !== undefined) return hit;
  const out = rule instanceof IptRule || !rule.nft ? iptablesKey(rule.raw.slice(rule.specStart)) : nftText(rule, false);
  keys.set(rule, out);
  return out;
}

function iptablesKey(spec: string): string {
  if (!/["'\\]|comment|(^|\s)(-c|--set-counters)\s/.test(spec)) return spec.trim().split(/\s+/).join(' ');
  const words = tokenizeLine(spec).tokens;
  const kept: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (!w.quoted && (w.text === '-m' || w.text === '--match') && words[i + 1]?.text === 'comment') {
      i++;
      continue;
    }
    if (!w.quoted && w.text === '--comment') {
      i++;
      continue;
    }
    if (!w.quoted && (w.text === '-c' || w.text === '--set-counters')) {
      i += 2;
      continue;
    }
    kept.push(/[\s"'\\]/.test(w.text) || w.text === '' ? JSON.stringify(w.text) : w.text);
  }
  return kept.join(' ');
}

/** Whether two rules are written alike (the common case of an untouched rule costs one string comparison). */
export function sameWords(x: Rule, y: Rule): boolean {
  if (x instanceof IptRule && y instanceof IptRule)
    return x.raw === y.raw || x.raw.slice(x.specStart) === y.raw.slice(y.specStart);
  // nft rules: the identity (`ruleKey`), since the display text abbreviates anonymous maps.
  return ruleKey(x) === ruleKey(y);
}

/**
 * The `-d` network of an iptables rule read from its words without compiling it: null when it has none;
 * undefined when a search cannot tell (a negated `-d`, `--destination`, quotes before it, nftables rules):
 * then compile the rule and read `rule.ip.dst`.
 */
export function writtenDst(rule: Rule): Net | null | undefined {
  if (!(rule instanceof IptRule)) return undefined;
  const raw = rule.raw;
  const at = raw.indexOf(' -d ', rule.specStart - 1);
  if (at < 0) return raw.includes(' --destination ') || raw.includes('"') ? undefined : null;
  if (raw.startsWith(' !', at - 2)) return undefined;
  // ` -d ` inside a quoted comment does not count: an odd number of unescaped quotes before it means so.
  let quotes = 0;
  for (let q = raw.indexOf('"', rule.specStart); q >= 0 && q < at; q = raw.indexOf('"', q + 1))
    if (raw[q - 1] !== '\\') quotes++;
  if (quotes % 2 === 1) return undefined;
  const end = raw.indexOf(' ', at + 4);
  return parseNet(raw.slice(at + 4, end < 0 ? raw.length : end)) ?? undefined;
}

/**
 * Whether `word` occurs in the rule's words (case-insensitive when asked): a prefilter that spares
 * compiling rules that cannot be of interest. A true answer proves nothing; read the compiled rule.
 */
export function ruleMentions(rule: Rule, word: string, ignoreCase = false): boolean {
  const text = rule instanceof IptRule || !rule.nft ? rule.raw : nftText(rule, true);
  return ignoreCase ? caseless(word).test(text) : text.includes(word);
}

/**
 * A case-insensitive search for `word`, one RegExp per word: lowering each rule's text instead made a
 * copy of every line (320k copies when the first trace of a kube-proxy dump asks which mark bits are read).
 */
const CASELESS = new Map<string, RegExp>();
function caseless(word: string): RegExp {
  let re = CASELESS.get(word);
  if (!re) {
    re = new RegExp(word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'i');
    if (CASELESS.size < 64) CASELESS.set(word, re);
  }
  return re;
}

/**
 * `ruleMentions` (case-insensitive) leaving out the name of a chain the rule jumps or goes to: kube-proxy's
 * `-j KUBE-MARK-MASQ` mentions no mark. As a prefilter, a true answer proves nothing.
 */
export function mentionsBesidesJump(rule: Rule, word: string, isChain: (name: string) => boolean): boolean {
  if (!ruleMentions(rule, word, true)) return false;
  const to = rule instanceof IptRule ? rule.targetRef : null;
  if (!to || !isChain(to.name)) return true;
  const raw = rule.raw;
  // Offsets that do not hold the name (never expected) keep the whole text.
  if (!raw.slice(to.start, to.end).includes(to.name)) return true;
  const re = caseless(word);
  return re.test(raw.slice(0, to.start)) || re.test(raw.slice(to.end));
}

/** Where the rule's chain name stands on its line (`-A NAME`), or -1 when the line does not name it. */
export function chainNameStart(rule: Rule, name: string): number {
  if (!(rule instanceof IptRule)) return -1;
  const raw = rule.raw;
  for (let s = raw.indexOf(name); s >= 0; s = raw.indexOf(name, s + 1)) {
    const after = raw.charCodeAt(s + name.length);
    if (s > 0 && raw[s - 1] === ' ' && (Number.isNaN(after) || after === 32)) return s;
  }
  return -1;
}

/**
 * The first option the front end read under one of `names` (canonical names, e.g. `--dport`,
 * `--to-destination`), among the rule's match modules and then its target; null when it has none.
 */
export function optionOf(rule: Rule, ...names: string[]): ParsedOption | null {
  for (const m of rule.matches) for (const o of m.options) if (names.includes(o.name)) return o;
  const t = rule.target;
  const opts = t?.kind === 'target' || t?.kind === 'unknown' ? t.options : [];
  for (const o of opts) if (names.includes(o.name)) return o;
  return null;
}

/**
 * The rule's words as written after `-A CHAIN` (nft rules: `ruleKey`): equal words are the same rule. The
 * diff pairs the rules of a chain's two versions by them before normalizing the rest (`ruleKey` costs a
 * tokenization; a reordered 10k-rule chain is mostly rules written alike).
 */
export function ruleWords(rule: Rule): string {
  return rule instanceof IptRule ? rule.raw.slice(rule.specStart) : ruleKey(rule);
}

/**
 * The argument of a target's option when it is the target's only option, read from the words without
 * compiling the rule (`-j DNAT --to-destination 10.0.0.1:8080` → `10.0.0.1:8080`); undefined when the words
 * after the target say anything else (then compile and ask the target module).
 */
export function soleTargetOption(rule: Rule, name: string): string | undefined {
  if (!(rule instanceof IptRule) || !rule.targetRef) return undefined;
  const m = /^\s+(\S+)\s+(\S+)\s*$/.exec(rule.raw.slice(rule.targetRef.end));
  return m && m[1] === name ? m[2] : undefined;
}
