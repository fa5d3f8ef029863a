/**
 * `-m rpfilter` (`xt_rpfilter.c`): reverse-path check. The route back to the source must leave by the
 * interface the packet came in on (`--loose`: any route). Local sources pass only with `--accept-local`;
 * packets arriving on loopback always pass.
 */
import { defineMatch } from './types.ts';
import type { PacketState } from '../net/packet.ts';
import type { EvalEnv } from './env.ts';
import { formatAddr } from '../net/addr.ts';
import { jointAtom } from './knowledge.ts';

interface RpSpec {
  readonly loose: boolean;
  readonly acceptLocal: boolean;
  readonly invert: boolean;
}

function valid(s: RpSpec, pkt: PacketState, env: EvalEnv): boolean {
  if (pkt.inIface === 'lo' || pkt.inIface === null) return true;
  if (env.node.isLocal(pkt.src)) return s.acceptLocal;
  if (s.loose) return true;
  return env.node.routeOut(pkt.src) === pkt.inIface;
}

export const rpfilterMatch = defineMatch<RpSpec>({
  name: 'rpfilter',
  options: [
    { name: '--loose', args: 0 },
    { name: '--validmark', args: 0 },
    { name: '--accept-local', args: 0 },
    { name: '--invert', args: 0 },
  ],
  compile: opts => ({
    loose: opts.some(o => o.name === '--loose'),
    acceptLocal: opts.some(o => o.name === '--accept-local'),
    invert: opts.some(o => o.name === '--invert'),
  }),
  test: (s, pkt, env) => valid(s, pkt, env) !== s.invert,
  why: (s, pkt, env) =>
    `reverse path of ${formatAddr(pkt.src)} is via ${env.node.routeOut(pkt.src)}, not ${pkt.inIface}${s.invert ? ' (inverted)' : ''}`,
  describe: s => `${s.invert ? 'failing' : 'passing'} the ${s.loose ? 'loose' : 'strict'} reverse-path check`,
  // Reverse-path checks depend on routes, not on a constant of the rule.
  diffFacts: 'opaque',
  lintAtoms: jointAtom,
  lintNature: 'fixed',
});
