/**
 * Small matches whose answer follows from what files can tell: `nfacct` (`xt_nfacct.c`, counts and always
 * matches), `socket` (`xt_socket.c`, needs the node's live sockets: unknown), `policy` (`xt_policy.c`, IPsec;
 * a trace models no IPsec), `helper` (`xt_helper.c`, the helper of the connection's master, as the packet
 * states it: `PacketState.ct.masterHelper`).
 */
import { defineMatch, unknown } from './types.ts';
import { NO_FACTS, jointAtom } from './knowledge.ts';

export const nfacctMatch = defineMatch<{ name: string }>({
  name: 'nfacct',
  options: [{ name: '--nfacct-name', args: 1 }],
  compile: opts => ({ name: opts[0]?.args[0] ?? '' }),
  test: () => true,
  why: () => 'never fails',
  describe: s => `count in accounting object ${s.name}`,
  // Accounting always matches.
  diffFacts: () => NO_FACTS,
  lintAtoms: jointAtom,
  lintNature: 'stateful',
});

export const socketMatch = defineMatch<{ text: string }>({
  name: 'socket',
  options: [
    { name: '--transparent', args: 0 },
    { name: '--nowildcard', args: 0 },
    { name: '--restore-skmark', args: 0 },
  ],
  compile: opts => ({ text: opts.map(o => o.name).join(' ') }),
  test: () => unknown("whether a local socket matches the packet depends on the node's live sockets"),
  why: () => 'no matching local socket',
  describe: s => `a local socket exists for the packet ${s.text}`.trim(),
  // Socket lookups are not cut into header fields.
  diffFacts: 'opaque',
  lintAtoms: jointAtom,
  lintNature: 'stateful',
});

export const policyMatch = defineMatch<{ pol: string; dir: string }>({
  name: 'policy',
  options: [
    { name: '--dir', args: 1 },
    { name: '--pol', args: 1 },
    { name: '--strict', args: 0 },
    { name: '--reqid', args: 1, negatable: true },
    { name: '--spi', args: 1, negatable: true },
    { name: '--proto', args: 1, negatable: true },
    { name: '--mode', args: 1, negatable: true },
    { name: '--tunnel-src', args: 1, negatable: true },
    { name: '--tunnel-dst', args: 1, negatable: true },
    { name: '--next', args: 0 },
  ],
  compile: opts => ({
    pol: opts.find(o => o.name === '--pol')?.args[0] ?? 'none',
    dir: opts.find(o => o.name === '--dir')?.args[0] ?? 'in',
  }),
  test: s => ({ kind: 'assume', value: s.pol === 'none', note: 'assumed the packet was not IPsec-processed' }),
  why: s => `--pol ${s.pol}: the packet was not IPsec-processed`,
  describe: s => `IPsec policy ${s.pol} (${s.dir})`,
  // IPsec policies are not cut into header fields.
  diffFacts: 'opaque',
  lintAtoms: jointAtom,
  lintNature: 'stateful',
});

export const helperMatch = defineMatch<{ negated: boolean; name: string }>({
  name: 'helper',
  options: [{ name: '--helper', args: 1, negatable: true }],
  compile: opts => ({ negated: opts[0]?.negated ?? false, name: opts[0]?.args[0] ?? '' }),
  // helper_mt: no connection, no master or a master without a helper → no match (`ret = info->invert`); an
  // empty --helper matches any helper; else `strncmp(helper->name, info->name, strlen(helper->name))`.
  test: (s, pkt) => {
    const h = pkt.ct.masterHelper;
    if (h === null)
      return unknown(
        `whether this ${pkt.ct.state} packet's connection was expected by a conntrack helper (and which) is kernel state the rules do not show: give helper=NAME or helper=none in the packet`,
      );
    return (h !== '' && (s.name === '' || s.name.startsWith(h))) !== s.negated;
  },
  why: (s, pkt) =>
    s.negated
      ? `the connection's master has conntrack helper ${pkt.ct.masterHelper}`
      : pkt.ct.masterHelper
        ? `the connection's master has conntrack helper ${pkt.ct.masterHelper}, not ${s.name}`
        : `the connection was not expected by a conntrack helper (no master)`,
  describe: s => `${s.negated ? 'not ' : ''}handled by conntrack helper ${s.name}`,
  // Helpers are not cut into header fields.
  diffFacts: 'opaque',
  lintAtoms: jointAtom,
  lintNature: 'stateful',
});
