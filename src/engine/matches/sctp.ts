/**
 * `-m sctp` (`xt_sctp.c`): ports and `--chunk-types all|any|only TYPE[,…]`. A new association's packet is
 * one INIT chunk (as the oracle sends), so chunk matches are decided for that single chunk.
 */
import { compilePorts, describePorts, PORT_OPTIONS, portFacts, testPorts, whyPorts, type PortSpec } from './ports.ts';
import { optionAtoms } from './knowledge.ts';
import { defineMatch, unknown } from './types.ts';

const CHUNKS: Record<string, number> = {
  DATA: 0,
  INIT: 1,
  INIT_ACK: 2,
  SACK: 3,
  HEARTBEAT: 4,
  HEARTBEAT_ACK: 5,
  ABORT: 6,
  SHUTDOWN: 7,
  SHUTDOWN_ACK: 8,
  ERROR: 9,
  COOKIE_ECHO: 10,
  COOKIE_ACK: 11,
  ECN_ECNE: 12,
  ECN_CWR: 13,
  SHUTDOWN_COMPLETE: 14,
  I_DATA: 64,
  RE_CONFIG: 130,
  PAD: 132,
  ASCONF: 193,
  ASCONF_ACK: 128,
  FORWARD_TSN: 192,
};

interface SctpSpec extends PortSpec {
  readonly chunks: { negated: boolean; mode: 'all' | 'any' | 'only'; types: number[]; flagged: boolean } | null;
}

export const sctpMatch = defineMatch<SctpSpec>({
  name: 'sctp',
  options: [...PORT_OPTIONS, { name: '--chunk-types', args: 2, negatable: true }],
  compile(opts, ctx) {
    const ports = compilePorts('sctp', opts, ctx);
    let chunks: SctpSpec['chunks'] = null;
    for (const o of opts) {
      if (o.name !== '--chunk-types') continue;
      const mode = o.args[0];
      const types: number[] = [];
      let flagged = false;
      for (const item of (o.args[1] ?? '').split(',')) {
        const [name, flags] = item.split(':');
        const t = CHUNKS[(name ?? '').toUpperCase()];
        if (t === undefined && name?.toUpperCase() !== 'ALL' && name?.toUpperCase() !== 'NONE') {
          ctx.report(o, 'bad-argument', `'${name}' is not an SCTP chunk type`);
        } else if (t !== undefined) types.push(t);
        if (flags) flagged = true;
      }
      if (mode !== 'all' && mode !== 'any' && mode !== 'only')
        ctx.report(o, 'bad-argument', `--chunk-types needs all, any or only, not '${mode}'`);
      else chunks = { negated: o.negated, mode, types, flagged };
    }
    return { sport: ports.sport, dport: ports.dport, chunks };
  },
  test(spec, pkt) {
    if (!testPorts(spec, pkt, 132)) return false;
    if (!spec.chunks) return true;
    if (pkt.sctpChunk === null || spec.chunks.flagged) return unknown('the SCTP chunks of the packet are not known');
    const has = spec.chunks.types.includes(pkt.sctpChunk);
    const hit = spec.chunks.mode === 'all' ? spec.chunks.types.every(t => t === pkt.sctpChunk) : has;
    return hit !== spec.chunks.negated;
  },
  why(spec, pkt) {
    if (!testPorts(spec, pkt, 132)) return whyPorts(spec, pkt, 132);
    return `--chunk-types does not match chunk ${pkt.sctpChunk}`;
  },
  describe: spec =>
    `SCTP ${describePorts(spec).join(', ')}${spec.chunks ? `, chunk types ${spec.chunks.mode}` : ''}`.trim(),
  diffFacts: portFacts,
  lintNature: 'fixed',
  lintAtoms: optionAtoms,
});
