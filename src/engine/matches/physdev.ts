/**
 * `-m physdev` (`xt_physdev.c`): bridge ports of a bridged packet (br_netfilter). For a packet that did not
 * cross a bridge, every non-inverted port or "is-*" test fails and inverted ones pass, as the kernel's
 * "no nf_bridge info" branch does.
 */
import type { PacketState } from '../net/packet.ts';
import { defineMatch } from './types.ts';
import { ifaceMatches } from './iface.ts';
import { jointAtom } from './knowledge.ts';

type Flag = { negated: boolean } | null;
type Port = { negated: boolean; name: string } | null;

interface PhysSpec {
  readonly in: Port;
  readonly out: Port;
  readonly isIn: Flag;
  readonly isOut: Flag;
  readonly isBridged: Flag;
}

function firstFailure(s: PhysSpec, pkt: PacketState): string | null {
  const bridged = pkt.physIn !== null || pkt.physOut !== null;
  if (s.isBridged && bridged === s.isBridged.negated)
    return `${s.isBridged.negated ? '! ' : ''}--physdev-is-bridged: the packet was ${bridged ? '' : 'not '}bridged`;
  if (s.isIn && (pkt.physIn !== null) === s.isIn.negated)
    return `${s.isIn.negated ? '! ' : ''}--physdev-is-in: ${pkt.physIn ?? 'no bridge port'}`;
  if (s.isOut && (pkt.physOut !== null) === s.isOut.negated)
    return `${s.isOut.negated ? '! ' : ''}--physdev-is-out: ${pkt.physOut ?? 'no bridge port'}`;
  if (s.in) {
    const hit = pkt.physIn !== null && ifaceMatches(s.in.name, pkt.physIn);
    if (hit === s.in.negated && !(pkt.physIn === null && s.in.negated))
      return `${s.in.negated ? '! ' : ''}--physdev-in ${s.in.name} ≠ ${pkt.physIn ?? 'none'}`;
  }
  if (s.out) {
    const hit = pkt.physOut !== null && ifaceMatches(s.out.name, pkt.physOut);
    if (hit === s.out.negated && !(pkt.physOut === null && s.out.negated))
      return `${s.out.negated ? '! ' : ''}--physdev-out ${s.out.name} ≠ ${pkt.physOut ?? 'none'}`;
  }
  return null;
}

export const physdevMatch = defineMatch<PhysSpec>({
  name: 'physdev',
  options: [
    { name: '--physdev-in', args: 1, negatable: true },
    { name: '--physdev-out', args: 1, negatable: true },
    { name: '--physdev-is-in', args: 0, negatable: true },
    { name: '--physdev-is-out', args: 0, negatable: true },
    { name: '--physdev-is-bridged', args: 0, negatable: true },
  ],
  compile(opts) {
    const get = (n: string) => opts.find(o => o.name === n);
    const port = (n: string): Port => {
      const o = get(n);
      return o ? { negated: o.negated, name: o.args[0] ?? '' } : null;
    };
    const flag = (n: string): Flag => {
      const o = get(n);
      return o ? { negated: o.negated } : null;
    };
    return {
      in: port('--physdev-in'),
      out: port('--physdev-out'),
      isIn: flag('--physdev-is-in'),
      isOut: flag('--physdev-is-out'),
      isBridged: flag('--physdev-is-bridged'),
    };
  },
  test: (s, pkt) => firstFailure(s, pkt) === null,
  why: (s, pkt) => firstFailure(s, pkt) ?? 'bridge ports differ',
  describe: s =>
    [
      s.in && `bridge port in ${s.in.negated ? 'not ' : ''}${s.in.name}`,
      s.out && `bridge port out ${s.out.negated ? 'not ' : ''}${s.out.name}`,
      s.isBridged && `${s.isBridged.negated ? 'not ' : ''}bridged`,
    ]
      .filter(Boolean)
      .join(', ') || 'bridge port test',
  // Bridge ports are not a header field the diff models.
  diffFacts: 'opaque',
  lintAtoms: jointAtom,
  lintNature: 'fixed',
});
