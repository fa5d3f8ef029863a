/**
 * `-m tcp` (`xt_tcpudp.c`, iptables-extensions(8) "tcp"): ports, `--tcp-flags mask comp`, `--syn`
 * (= `--tcp-flags SYN,RST,ACK,FIN SYN`), `--tcp-option`. A packet with no TCP flags given is a SYN when
 * its connection is NEW and an ACK otherwise (see eval/packet-spec.ts).
 */
import { compilePorts, describePorts, PORT_OPTIONS, portFacts, testPorts, whyPorts, type PortSpec } from './ports.ts';
import { optionAtoms } from './knowledge.ts';
import { defineMatch, unknown } from './types.ts';
import { firstArg, not } from './util.ts';

const FLAG_BITS: Record<string, number> = {
  FIN: 1,
  SYN: 2,
  RST: 4,
  PSH: 8,
  ACK: 16,
  URG: 32,
  ECE: 64,
  CWR: 128,
  ALL: 255,
  NONE: 0,
};

export function parseTcpFlags(text: string): number | null {
  let bits = 0;
  for (const name of text.split(',')) {
    const b = FLAG_BITS[name.toUpperCase()];
    if (b === undefined) return null;
    bits |= b;
  }
  return bits;
}

export function formatTcpFlags(bits: number): string {
  if (bits === 0) return 'NONE';
  if (bits === 255) return 'ALL';
  return Object.entries(FLAG_BITS)
    .filter(([n, b]) => n !== 'ALL' && n !== 'NONE' && (bits & b) !== 0)
    .map(([n]) => n)
    .join(',');
}

interface TcpSpec extends PortSpec {
  readonly flags: { negated: boolean; mask: number; comp: number } | null;
  readonly option: { negated: boolean; kind: number } | null;
}

export const tcpMatch = defineMatch<TcpSpec>({
  name: 'tcp',
  options: [
    ...PORT_OPTIONS,
    { name: '--tcp-flags', args: 2, negatable: true },
    { name: '--syn', args: 0, negatable: true },
    { name: '--tcp-option', args: 1, negatable: true },
  ],
  compile(opts, ctx) {
    const ports = compilePorts('tcp', opts, ctx);
    let flags: TcpSpec['flags'] = null;
    let option: TcpSpec['option'] = null;
    for (const o of opts) {
      if (o.name === '--syn') flags = { negated: o.negated, mask: 2 | 4 | 16 | 1, comp: 2 };
      else if (o.name === '--tcp-flags') {
        const mask = parseTcpFlags(o.args[0] ?? '');
        const comp = parseTcpFlags(o.args[1] ?? '');
        if (mask === null || comp === null)
          ctx.report(
            o,
            'bad-argument',
            `'--tcp-flags ${o.args.join(' ')}' needs two flag lists (SYN,ACK,FIN,RST,URG,PSH,ECE,CWR,ALL,NONE)`,
          );
        else flags = { negated: o.negated, mask, comp };
      } else if (o.name === '--tcp-option') {
        const kind = Number(firstArg(o, ctx));
        if (!Number.isInteger(kind) || kind < 0 || kind > 255)
          ctx.report(o, 'bad-argument', `'--tcp-option' takes an option number 0-255`);
        else option = { negated: o.negated, kind };
      }
    }
    // Not `{ ...ports, flags, option }`: V8 (Node 20) takes a slow path for that spread, 2 µs a rule.
    return { sport: ports.sport, dport: ports.dport, flags, option };
  },
  test(spec, pkt) {
    if (!testPorts(spec, pkt, 6)) return false;
    if (spec.flags) {
      if (pkt.tcpFlags === null) return unknown('the packet has no TCP flags given');
      if (((pkt.tcpFlags & spec.flags.mask) === spec.flags.comp) === spec.flags.negated) return false;
    }
    if (spec.option) return unknown(`TCP option ${spec.option.kind} presence is not part of the packet description`);
    return true;
  },
  why(spec, pkt) {
    if (!testPorts(spec, pkt, 6)) return whyPorts(spec, pkt, 6);
    const f = spec.flags!;
    return `${not(f.negated)}--tcp-flags ${formatTcpFlags(f.mask)} ${formatTcpFlags(f.comp)} ≠ ${formatTcpFlags((pkt.tcpFlags ?? 0) & f.mask)}`;
  },
  describe(spec) {
    const parts = describePorts(spec);
    if (spec.flags)
      parts.push(
        `${spec.flags.negated ? 'not ' : ''}TCP flags ${formatTcpFlags(spec.flags.comp)} of ${formatTcpFlags(spec.flags.mask)}`,
      );
    return `TCP${parts.length ? ` ${parts.join(', ')}` : ''}`;
  },
  // Flags and options are not cut into classes: the diff evaluates every rule on a class's packets.
  diffFacts: portFacts,
  lintNature: 'fixed',
  lintAtoms: optionAtoms,
});
