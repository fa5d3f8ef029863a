/** `-m ttl` (`xt_ttl.c`, IPv4) and `-m hl` (`ip6t_hl.c`, IPv6): compare the TTL / hop limit. */
import { defineMatch, unknown } from './types.ts';
import { optionAtoms } from './knowledge.ts';

interface TtlSpec {
  readonly op: 'eq' | 'ne' | 'lt' | 'gt';
  readonly value: number;
}

function make(name: 'ttl' | 'hl', label: string) {
  return defineMatch<TtlSpec>({
    name,
    families: [name === 'ttl' ? 4 : 6],
    options: [
      { name: `--${name}-eq`, aliases: [`--${name}`], args: 1, negatable: true },
      { name: `--${name}-lt`, args: 1 },
      { name: `--${name}-gt`, args: 1 },
    ],
    compile(opts, ctx) {
      const o = opts[0];
      const value = Number(o?.args[0]);
      if (!o || !Number.isInteger(value) || value < 0 || value > 255)
        ctx.report(o ?? null, 'bad-argument', `${name} needs a value 0-255`);
      const kind = o?.name.endsWith('-lt') ? 'lt' : o?.name.endsWith('-gt') ? 'gt' : o?.negated ? 'ne' : 'eq';
      return { op: kind, value };
    },
    test(s, pkt) {
      if (pkt.ttl === null) return unknown(`the packet's ${label} is not given`);
      const t = pkt.ttl;
      return s.op === 'eq' ? t === s.value : s.op === 'ne' ? t !== s.value : s.op === 'lt' ? t < s.value : t > s.value;
    },
    why: (s, pkt) =>
      `${label} ${pkt.ttl} is not ${s.op === 'eq' ? '=' : s.op === 'ne' ? '≠' : s.op === 'lt' ? '<' : '>'} ${s.value}`,
    describe: s => `${label} ${s.op === 'eq' ? '=' : s.op === 'ne' ? '≠' : s.op === 'lt' ? '<' : '>'} ${s.value}`,
    // TTL / hop limit is not a header field the diff models.
    diffFacts: 'opaque',
    lintAtoms: optionAtoms,
    // TTL and HL rules change it.
    lintNature: 'stateful',
  });
}

export const ttlMatch = make('ttl', 'TTL');
export const hlMatch = make('hl', 'hop limit');
