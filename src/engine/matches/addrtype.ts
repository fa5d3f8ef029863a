/**
 * `-m addrtype` (`xt_addrtype.c`): the route type of the source or destination as the node's routing
 * tables see it (LOCAL for the node's own addresses and 127/8, BROADCAST, MULTICAST, UNICAST). With
 * `--limit-iface-in/out` only routes through that interface count.
 */
import { formatAddr } from '../net/addr.ts';
import { defineMatch } from './types.ts';
import { firstArg } from './util.ts';
import type { PacketState } from '../net/packet.ts';
import type { EvalEnv } from './env.ts';
import { jointAtom } from './knowledge.ts';

const TYPES = [
  'UNSPEC',
  'UNICAST',
  'LOCAL',
  'BROADCAST',
  'ANYCAST',
  'MULTICAST',
  'BLACKHOLE',
  'UNREACHABLE',
  'PROHIBIT',
  'THROW',
  'NAT',
  'XRESOLVE',
];

interface AddrtypeSpec {
  readonly src: { negated: boolean; types: string[] } | null;
  readonly dst: { negated: boolean; types: string[] } | null;
  readonly limitIn: boolean;
  readonly limitOut: boolean;
}

function typeOf(which: 'src' | 'dst', spec: AddrtypeSpec, pkt: PacketState, env: EvalEnv): string {
  const iface = spec.limitIn ? pkt.inIface : spec.limitOut ? pkt.outIface : undefined;
  return env.node.addrType(which === 'src' ? pkt.src : pkt.dst, iface);
}

export const addrtypeMatch = defineMatch<AddrtypeSpec>({
  name: 'addrtype',
  options: [
    { name: '--src-type', args: 1, negatable: true },
    { name: '--dst-type', args: 1, negatable: true },
    { name: '--limit-iface-in', args: 0 },
    { name: '--limit-iface-out', args: 0 },
  ],
  compile(opts, ctx) {
    const spec: { src: AddrtypeSpec['src']; dst: AddrtypeSpec['dst']; limitIn: boolean; limitOut: boolean } = {
      src: null,
      dst: null,
      limitIn: false,
      limitOut: false,
    };
    for (const o of opts) {
      if (o.name === '--limit-iface-in') spec.limitIn = true;
      else if (o.name === '--limit-iface-out') spec.limitOut = true;
      else {
        const types = firstArg(o, ctx)
          .split(',')
          .map(t => t.toUpperCase());
        for (const t of types)
          if (!TYPES.includes(t)) ctx.report(o, 'bad-argument', `'${t}' is not an address type (${TYPES.join(', ')})`);
        spec[o.name === '--src-type' ? 'src' : 'dst'] = { negated: o.negated, types };
      }
    }
    return spec;
  },
  test(spec, pkt, env) {
    if (spec.src && spec.src.types.includes(typeOf('src', spec, pkt, env)) === spec.src.negated) return false;
    if (spec.dst && spec.dst.types.includes(typeOf('dst', spec, pkt, env)) === spec.dst.negated) return false;
    return true;
  },
  why(spec, pkt, env) {
    for (const which of ['src', 'dst'] as const) {
      const s = spec[which];
      if (!s) continue;
      const t = typeOf(which, spec, pkt, env);
      if (s.types.includes(t) === s.negated) {
        const addr = formatAddr(which === 'src' ? pkt.src : pkt.dst);
        return `${s.negated ? '! ' : ''}--${which}-type ${s.types.join(',')} ${s.negated ? '=' : '≠'} ${t} (${addr})`;
      }
    }
    return 'address type differs';
  },
  describe: spec =>
    [
      spec.src && `source address ${spec.src.negated ? 'not ' : ''}of type ${spec.src.types.join('/')}`,
      spec.dst && `destination address ${spec.dst.negated ? 'not ' : ''}of type ${spec.dst.types.join('/')}`,
    ]
      .filter(Boolean)
      .join(', ') +
    (spec.limitIn ? ' (on the incoming interface)' : spec.limitOut ? ' (on the outgoing interface)' : ''),
  // Which addresses are the node's is not a constant of the rule: the diff splits on the node's addresses.
  diffFacts: (_spec, options) => {
    const types = options.filter(o => o.name === '--src-type' || o.name === '--dst-type');
    return {
      addrtype: types.length > 0,
      dstLocal: types.some(
        o => o.name === '--dst-type' && !o.negated && (o.args[0] ?? '').toUpperCase().split(',').includes('LOCAL'),
      ),
      tests: types.map(o => (o.name === '--src-type' ? 'src' : 'dst')),
    };
  },
  lintAtoms: jointAtom,
  lintNature: 'fixed',
});
