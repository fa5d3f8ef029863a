/**
 * `-m multiport` (`xt_multiport.c`): up to 15 ports or ranges; `--ports` matches when either port is in
 * the list. `!` inverts the whole list.
 */
import { hasPorts } from '../net/proto.ts';
import type { Span } from '../net/span.ts';
import { type MatchFacts, type Neg, optionAtoms, portList } from './knowledge.ts';
import { type ParsedOption, defineMatch } from './types.ts';
import { type PortRange, firstArg, formatPortRange, inPortRange, not, parsePortRange } from './util.ts';

interface MultiportSpec {
  readonly which: 'src' | 'dst' | 'either';
  readonly negated: boolean;
  readonly ranges: PortRange[];
}

const NAMES: Record<string, MultiportSpec['which']> = {
  '--sports': 'src',
  '--source-ports': 'src',
  '--dports': 'dst',
  '--destination-ports': 'dst',
  '--ports': 'either',
};

/** Every port list as written; `--ports` cuts both spaces. */
function multiportFacts(_spec: MultiportSpec, options: readonly ParsedOption[]): MatchFacts {
  const dports: Neg<Span[]>[] = [];
  const sports: Neg<Span[]>[] = [];
  for (const o of options) {
    const list = { negated: o.negated, value: portList(o.args[0] ?? '') };
    if (o.name === '--dports' || o.name === '--ports') dports.push(list);
    if (o.name === '--sports' || o.name === '--ports') sports.push(list);
  }
  return { dports, sports };
}

export const multiportMatch = defineMatch<MultiportSpec>({
  name: 'multiport',
  options: [
    { name: '--sports', aliases: ['--source-ports'], args: 1, negatable: true },
    { name: '--dports', aliases: ['--destination-ports'], args: 1, negatable: true },
    { name: '--ports', args: 1, negatable: true },
  ],
  compile(opts, ctx) {
    const o = opts.find(x => NAMES[x.name] !== undefined);
    if (!o) {
      ctx.report(null, 'missing-argument', 'multiport needs --sports, --dports or --ports');
      return { which: 'dst', negated: false, ranges: [] };
    }
    const ranges: PortRange[] = [];
    for (const item of firstArg(o, ctx).split(',')) {
      const r = parsePortRange(item);
      if (!r) ctx.report(o, 'bad-port', `'${item}' is not a port or port range`);
      else ranges.push(r);
    }
    if (ranges.length > 15)
      ctx.report(o, 'bad-argument', `multiport takes at most 15 ports (ranges count double), not ${ranges.length}`);
    return { which: NAMES[o.name]!, negated: o.negated, ranges };
  },
  test(spec, pkt) {
    if (!hasPorts(pkt.proto)) return false;
    const hit = (p: number | null) => p !== null && spec.ranges.some(r => inPortRange(r, p));
    const any =
      spec.which === 'src' ? hit(pkt.sport) : spec.which === 'dst' ? hit(pkt.dport) : hit(pkt.sport) || hit(pkt.dport);
    return any !== spec.negated;
  },
  why(spec, pkt) {
    const list = spec.ranges.map(formatPortRange).join(',');
    const port = spec.which === 'src' ? pkt.sport : pkt.dport;
    if (!hasPorts(pkt.proto)) return `multiport needs a protocol with ports`;
    const opt = spec.which === 'src' ? '--sports' : spec.which === 'dst' ? '--dports' : '--ports';
    return `${not(spec.negated)}${opt} ${list} ${spec.negated ? '∋' : '∌'} ${port}`;
  },
  describe: spec =>
    `${spec.which === 'src' ? 'source' : spec.which === 'dst' ? 'destination' : 'source or destination'} port ${spec.negated ? 'not ' : ''}in ${spec.ranges.map(formatPortRange).join(', ')}`,
  diffFacts: multiportFacts,
  lintNature: 'fixed',
  lintAtoms: optionAtoms,
});
