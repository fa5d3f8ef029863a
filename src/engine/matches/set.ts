/**
 * `-m set --match-set NAME src|dst[,…]` (`xt_set.c`). Membership comes from an `ipset save` file the
 * caller gives; without one, or for a set the file does not declare, the answer is unknown.
 */
import { ipsetContains } from '../ipset/store.ts';
import { defineMatch, unknown } from './types.ts';
import { jointAtom } from './knowledge.ts';

interface SetSpec {
  readonly negated: boolean;
  readonly name: string;
  readonly dirs: ('src' | 'dst')[];
}

export const setMatch = defineMatch<SetSpec>({
  name: 'set',
  options: [
    { name: '--match-set', aliases: ['--set'], args: 2, negatable: true },
    { name: '--return-nomatch', args: 0 },
    { name: '--update-counters', args: 0, negatable: true },
    { name: '--update-subcounters', args: 0, negatable: true },
    { name: '--packets-eq', args: 1, negatable: true },
    { name: '--packets-lt', args: 1 },
    { name: '--packets-gt', args: 1 },
    { name: '--bytes-eq', args: 1, negatable: true },
    { name: '--bytes-lt', args: 1 },
    { name: '--bytes-gt', args: 1 },
  ],
  compile(opts, ctx) {
    const o = opts.find(x => x.name === '--match-set');
    if (!o || o.args.length < 2) {
      ctx.report(o ?? null, 'missing-argument', '--match-set needs a set name and src/dst flags');
      return { negated: false, name: o?.args[0] ?? '', dirs: ['src'] };
    }
    const dirs: ('src' | 'dst')[] = [];
    for (const d of o.args[1]!.split(',')) {
      if (d === 'src' || d === 'dst') dirs.push(d);
      else ctx.report(o, 'bad-argument', `'${d}' is not src or dst`);
    }
    return { negated: o.negated, name: o.args[0]!, dirs };
  },
  test(spec, pkt, env) {
    if (!env.ipsets) return unknown(`ipset ${spec.name}: no ipset contents given (pass an 'ipset save' file)`);
    const hit = ipsetContains(env.ipsets, spec.name, spec.dirs, pkt);
    if (hit === null) return unknown(`ipset ${spec.name} is not in the given ipset file`);
    return hit !== spec.negated;
  },
  why: spec =>
    `${spec.negated ? '! ' : ''}--match-set ${spec.name} ${spec.dirs.join(',')}: ${spec.negated ? 'in' : 'not in'} the set`,
  describe: spec => `${spec.dirs.join(',')} ${spec.negated ? 'not ' : ''}in ipset ${spec.name}`,
  // Set members are not cut into header fields (yet): rules testing a set leave their classes open.
  diffFacts: 'opaque',
  lintAtoms: jointAtom,
  lintNature: 'stateful',
});
