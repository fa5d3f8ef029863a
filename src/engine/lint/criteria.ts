/**
 * A rule's criteria as a set of literal *atoms*, read from its words: each header check (`-s`, `-d`, `-p`,
 * `-i`, `-o`, `-f`, with `!`) and each option of a match module. Rules are ANDs of their criteria, so a
 * rule whose atoms are a subset of a later rule's atoms matches every packet the later one matches — the
 * literal case of shadowing. Words are assigned to modules as the rule parser does (rule.ts: an option
 * belongs to the latest module that knows it, else to the implicit module of `-p`; a repeated option or
 * header check keeps its last value). Reading words instead of compiled rules keeps linting a 300k-rule
 * dump cheap.
 */
import { TokenBuffer } from '../iptables/tokenize.ts';
import { findMatch } from '../matches/registry.ts';
import type { OptionSpec } from '../matches/types.ts';
import type { Rule } from '../model.ts';
import type { TargetName } from './refs.ts';

export interface RuleCriteria {
  /** Sorted, without duplicates. */
  readonly atoms: readonly string[];
  /** Canonical names of the match modules the rule loads (explicitly or through `-p`). */
  readonly modules: ReadonlySet<string>;
}

/**
 * Modules whose options are independent conditions (each one is an atom of its own). In the others an
 * option can qualify another (`recent --rcheck --seconds`, `addrtype --dst-type --limit-iface-in`), so
 * the module's options together form one atom.
 */
const PER_OPTION = new Set([
  'tcp',
  'udp',
  'sctp',
  'icmp',
  'icmp6',
  'multiport',
  'conntrack',
  'state',
  'mark',
  'connmark',
  'iprange',
  'pkttype',
  'length',
  'ttl',
  'hl',
  'owner',
]);

const HEADER: Record<string, string> = {
  '-s': 's',
  '--source': 's',
  '--src': 's',
  '-d': 'd',
  '--destination': 'd',
  '--dst': 'd',
  '-p': 'p',
  '--protocol': 'p',
  '-i': 'i',
  '--in-interface': 'i',
  '-o': 'o',
  '--out-interface': 'o',
};

const IMPLICIT: Record<string, string> = {
  tcp: 'tcp',
  '6': 'tcp',
  udp: 'udp',
  '17': 'udp',
  sctp: 'sctp',
  '132': 'sctp',
  icmp: 'icmp',
  '1': 'icmp',
  icmpv6: 'icmp6',
  'ipv6-icmp': 'icmp6',
  '58': 'icmp6',
};

interface Slot {
  readonly name: string;
  readonly known: boolean;
  readonly options: Map<string, OptionSpec>;
  /** Option name → its atom text, in the order written; a repeated option replaces its value. */
  readonly words: Map<string, string>;
}

const optionMaps = new Map<string, Map<string, OptionSpec>>();

function slotFor(name: string): Slot {
  const mod = findMatch(name);
  const key = mod?.name ?? name;
  let options = optionMaps.get(key);
  if (!options) {
    options = new Map();
    for (const o of mod?.options ?? []) {
      options.set(o.name, o);
      for (const a of o.aliases ?? []) options.set(a, o);
    }
    optionMaps.set(key, options);
  }
  return { name: key, known: mod !== undefined, options, words: new Map() };
}

function normalizeAddress(value: string, family: 4 | 6): string {
  return value.includes('/') ? value : `${value}/${family === 4 ? 32 : 128}`;
}

const tok = new TokenBuffer();

/** The atoms of a rule's criteria; the target and its options are not criteria. */
export function ruleCriteria(
  rule: Rule,
  target: TargetName | null,
  family: 4 | 6,
  targetTakesOptions: boolean,
): RuleCriteria {
  tok.fillFrom(rule.raw, rule.specStart);
  const header = new Map<string, string>();
  const slots: Slot[] = [];
  const stray: string[] = [];
  let implicit: Slot | null = null;
  let proto = '';
  let negate = false;
  const n = tok.count;
  const isOption = (k: number) => tok.quoted[k] === 0 && tok.text[k]!.length > 1 && tok.text[k]!.charCodeAt(0) === 45;
  for (let i = 0; i < n; i++) {
    const start = tok.start[i]!;
    if (target && start >= target.start && start < target.end) continue;
    if (target && start >= target.end && targetTakesOptions) break;
    const w = tok.text[i]!;
    if (w === '!' && tok.quoted[i] === 0) {
      negate = true;
      continue;
    }
    const neg = negate ? '!' : '';
    negate = false;
    const h = HEADER[w];
    if (h !== undefined && i + 1 < n) {
      let value = tok.text[++i]!;
      if (h === 'p') {
        value = value.toLowerCase();
        proto = neg ? '' : value;
        if (value === 'all' || value === '0') {
          header.delete('p');
          continue;
        }
      }
      if (h === 's' || h === 'd') value = normalizeAddress(value, family);
      header.set(h, `${neg}${h} ${value}`);
      continue;
    }
    if (w === '-f' || w === '--fragment') {
      header.set('f', `${neg}f`);
      continue;
    }
    if ((w === '-m' || w === '--match') && i + 1 < n) {
      slots.push(slotFor(tok.text[++i]!));
      continue;
    }
    if ((w === '-c' || w === '--set-counters') && i + 2 < n) {
      i += 2;
      continue;
    }
    if (w === '-4' || w === '-6' || w === '--ipv4' || w === '--ipv6') continue;
    if (isOption(i)) {
      const args: string[] = [];
      while (i + 1 < n && tok.text[i + 1] !== '!' && !isOption(i + 1)) {
        if (target && tok.start[i + 1]! >= target.start) break;
        args.push(tok.text[++i]!);
      }
      let slot: Slot | undefined;
      for (let k = slots.length - 1; k >= 0 && !slot; k--) if (slots[k]!.options.has(w)) slot = slots[k];
      if (!slot && IMPLICIT[proto]) {
        implicit ??= slotFor(IMPLICIT[proto]!);
        if (implicit.options.has(w)) slot = implicit;
      }
      const last = slots[slots.length - 1];
      if (!slot && last && !last.known) slot = last;
      if (!slot) {
        stray.push(`?${neg}${w} ${args.join(' ')}`);
        continue;
      }
      const name = slot.options.get(w)?.name ?? w;
      slot.words.set(name, `${neg}${name}${args.length ? ` ${args.join(' ')}` : ''}`);
      continue;
    }
    // A stray word: keep it so that two rules only compare equal when they are written alike.
    stray.push(`?${neg}${w}`);
  }
  const atoms = new Set<string>([...header.values(), ...stray]);
  const modules = new Set<string>();
  if (implicit) modules.add(implicit.name);
  for (const s of implicit ? [...slots, implicit] : slots) {
    modules.add(s.name);
    // A module without options (`-p tcp -m tcp`, `-m comment` alone) adds no condition of its own.
    if (s.name === 'comment' || s.words.size === 0) continue;
    if (PER_OPTION.has(s.name)) for (const word of s.words.values()) atoms.add(`${s.name}:${word}`);
    else atoms.add(`${s.name}:${[...s.words.values()].join(' ')}`);
  }
  return { atoms: [...atoms].sort(), modules };
}
