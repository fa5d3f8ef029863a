/**
 * The port matches shared by tcp, udp and sctp (`xt_tcpudp.c`, `xt_sctp.c`): `--sport`/`--dport` with
 * ranges and `!`. A non-matching protocol never matches (the kernel only runs these for their protocol).
 */
import type { PacketState } from '../net/packet.ts';
import { protoName } from '../net/proto.ts';
import type { CompileContext, ParsedOption } from './types.ts';
import { type MatchFacts, type Neg, portList } from './knowledge.ts';
import type { Span } from '../net/span.ts';
import { type PortRange, firstArg, formatPortRange, inPortRange, not, parsePortRange } from './util.ts';

export interface PortSpec {
  readonly sport: { negated: boolean; range: PortRange } | null;
  readonly dport: { negated: boolean; range: PortRange } | null;
}

export function compilePorts(proto: string, opts: readonly ParsedOption[], ctx: CompileContext): PortSpec {
  let sport: PortSpec['sport'] = null;
  let dport: PortSpec['dport'] = null;
  for (const o of opts) {
    const isS = o.name === '--sport' || o.name === '--source-port';
    const isD = o.name === '--dport' || o.name === '--destination-port';
    if (!isS && !isD) continue;
    const text = firstArg(o, ctx);
    const range = parsePortRange(text);
    if (!range) {
      ctx.report(o, 'bad-port', `'${text}' is not a ${proto} port or port range (0-65535, a:b)`);
      continue;
    }
    if (isS) sport = { negated: o.negated, range };
    else dport = { negated: o.negated, range };
  }
  return { sport, dport };
}

export function testPorts(spec: PortSpec, pkt: PacketState, protoNum: number): boolean {
  if (pkt.proto !== protoNum) return false;
  if (spec.sport) {
    if (pkt.sport === null) return false;
    if (inPortRange(spec.sport.range, pkt.sport) === spec.sport.negated) return false;
  }
  if (spec.dport) {
    if (pkt.dport === null) return false;
    if (inPortRange(spec.dport.range, pkt.dport) === spec.dport.negated) return false;
  }
  return true;
}

export function whyPorts(spec: PortSpec, pkt: PacketState, protoNum: number): string {
  if (pkt.proto !== protoNum) return `protocol ${protoName(protoNum)} ≠ ${protoName(pkt.proto)}`;
  if (spec.sport && (pkt.sport === null || inPortRange(spec.sport.range, pkt.sport) === spec.sport.negated)) {
    return `${not(spec.sport.negated)}--sport ${formatPortRange(spec.sport.range)} ${spec.sport.negated ? '=' : '≠'} ${pkt.sport ?? 'none'}`;
  }
  if (spec.dport && (pkt.dport === null || inPortRange(spec.dport.range, pkt.dport) === spec.dport.negated)) {
    return `${not(spec.dport.negated)}--dport ${formatPortRange(spec.dport.range)} ${spec.dport.negated ? '=' : '≠'} ${pkt.dport ?? 'none'}`;
  }
  return 'ports differ';
}

export function describePorts(spec: PortSpec): string[] {
  const parts: string[] = [];
  if (spec.sport) parts.push(`source port ${spec.sport.negated ? 'not ' : ''}${formatPortRange(spec.sport.range)}`);
  if (spec.dport)
    parts.push(`destination port ${spec.dport.negated ? 'not ' : ''}${formatPortRange(spec.dport.range)}`);
  return parts;
}

/**
 * The diff's facts of `--sport`/`--dport` (tcp, udp, sctp): every port test as written, in order. A repeated
 * option is one more cut of the port space, not a replacement, so each counts.
 */
export function portFacts(_spec: unknown, options: readonly ParsedOption[]): MatchFacts {
  const dports: Neg<Span[]>[] = [];
  const sports: Neg<Span[]>[] = [];
  for (const o of options) {
    if (o.name === '--dport') dports.push({ negated: o.negated, value: portList(o.args[0] ?? '') });
    else if (o.name === '--sport') sports.push({ negated: o.negated, value: portList(o.args[0] ?? '') });
  }
  return { dports, sports };
}

export const PORT_OPTIONS = [
  { name: '--sport', aliases: ['--source-port'], args: 1, negatable: true },
  { name: '--dport', aliases: ['--destination-port'], args: 1, negatable: true },
] as const;
