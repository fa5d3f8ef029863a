/** `-m udp` (`xt_tcpudp.c`): source and destination ports with ranges and `!`. */
import { compilePorts, describePorts, PORT_OPTIONS, portFacts, testPorts, whyPorts, type PortSpec } from './ports.ts';
import { optionAtoms } from './knowledge.ts';
import { defineMatch } from './types.ts';

export const udpMatch = defineMatch<PortSpec>({
  name: 'udp',
  options: PORT_OPTIONS,
  compile: (opts, ctx) => compilePorts('udp', opts, ctx),
  test: (spec, pkt) => testPorts(spec, pkt, 17),
  why: (spec, pkt) => whyPorts(spec, pkt, 17),
  describe: spec => `UDP ${describePorts(spec).join(', ')}`.trim(),
  diffFacts: portFacts,
  lintNature: 'fixed',
  lintAtoms: optionAtoms,
});
