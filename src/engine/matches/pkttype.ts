/**
 * `-m pkttype --pkt-type unicast|broadcast|multicast` (`xt_pkttype.c`). The link-layer type is derived from
 * the destination address the way a packet's type follows from it on an Ethernet segment.
 */
import { defineMatch } from './types.ts';
import { firstArg } from './util.ts';
import type { PacketState } from '../net/packet.ts';
import type { EvalEnv } from './env.ts';
import { optionAtoms } from './knowledge.ts';

function typeOf(pkt: PacketState, env: EvalEnv): string {
  const t = env.node.addrType(pkt.dst);
  return t === 'MULTICAST' ? 'multicast' : t === 'BROADCAST' ? 'broadcast' : 'unicast';
}

export const pkttypeMatch = defineMatch<{ negated: boolean; type: string }>({
  name: 'pkttype',
  options: [{ name: '--pkt-type', args: 1, negatable: true }],
  compile(opts, ctx) {
    const o = opts.find(x => x.name === '--pkt-type');
    const type = o ? firstArg(o, ctx).toLowerCase() : '';
    if (!['unicast', 'broadcast', 'multicast', 'host'].includes(type))
      ctx.report(o ?? null, 'bad-argument', `--pkt-type takes unicast, broadcast or multicast, not '${type}'`);
    return { negated: o?.negated ?? false, type: type === 'host' ? 'unicast' : type };
  },
  test: (s, pkt, env) => (typeOf(pkt, env) === s.type) !== s.negated,
  why: (s, pkt, env) => `${s.negated ? '! ' : ''}--pkt-type ${s.type} ${s.negated ? '=' : '≠'} ${typeOf(pkt, env)}`,
  describe: s => `${s.negated ? 'not ' : ''}${s.type} packets`,
  // The link-layer packet type is not a header field the diff models.
  diffFacts: 'opaque',
  lintAtoms: optionAtoms,
  lintNature: 'fixed',
});
