/**
 * Evaluating one rule's criteria against a packet, in the kernel's order: the fixed header checks of
 * `ip_packet_match` (addresses, interfaces, protocol, fragment), then each `-m` module as written.
 */
import { formatAddr, formatNet, netContains } from '../net/addr.ts';
import { ifaceMatches } from '../matches/iface.ts';
import type { MatchResult } from '../matches/types.ts';
import type { Rule } from '../model.ts';
import type { EvalEnv } from '../matches/env.ts';
import { protoName } from '../net/proto.ts';
import type { PacketState } from '../net/packet.ts';

/** Returns null when the header checks pass, else the first failing criterion (or '' when not explaining). */
export function headerMiss(rule: Rule, pkt: PacketState, explain: boolean): string | null {
  const ip = rule.ip;
  if (ip.src && netContains(ip.src.value, pkt.src) === ip.src.negated) {
    return explain
      ? `${ip.src.negated ? '! ' : ''}-s ${formatNet(ip.src.value)} ${ip.src.negated ? '∋' : '∌'} ${formatAddr(pkt.src)}`
      : '';
  }
  if (ip.dst && netContains(ip.dst.value, pkt.dst) === ip.dst.negated) {
    return explain
      ? `${ip.dst.negated ? '! ' : ''}-d ${formatNet(ip.dst.value)} ${ip.dst.negated ? '∋' : '∌'} ${formatAddr(pkt.dst)}`
      : '';
  }
  if (ip.inIface && (pkt.inIface !== null && ifaceMatches(ip.inIface.value.name, pkt.inIface)) === ip.inIface.negated) {
    return explain
      ? `${ip.inIface.negated ? '! ' : ''}-i ${ip.inIface.value.name} ${ip.inIface.negated ? '=' : '≠'} ${pkt.inIface ?? '(none)'}`
      : '';
  }
  if (
    ip.outIface &&
    (pkt.outIface !== null && ifaceMatches(ip.outIface.value.name, pkt.outIface)) === ip.outIface.negated
  ) {
    return explain
      ? `${ip.outIface.negated ? '! ' : ''}-o ${ip.outIface.value.name} ${ip.outIface.negated ? '=' : '≠'} ${pkt.outIface ?? '(none)'}`
      : '';
  }
  if (ip.proto && (pkt.proto === ip.proto.value) === ip.proto.negated) {
    return explain
      ? `${ip.proto.negated ? '! ' : ''}-p ${ip.protoName ?? protoName(ip.proto.value)} ${ip.proto.negated ? '=' : '≠'} ${protoName(pkt.proto)}`
      : '';
  }
  if (ip.fragment && pkt.fragment === ip.fragment.negated) {
    return explain
      ? `${ip.fragment.negated ? '! ' : ''}-f: the packet is ${pkt.fragment ? '' : 'not '}a non-first fragment`
      : '';
  }
  return null;
}

export function testMatch(rule: Rule, k: number, pkt: PacketState, env: EvalEnv): MatchResult {
  const m = rule.matches[k]!;
  return m.module.test(m.spec, pkt, env);
}

export function whyMatch(rule: Rule, k: number, pkt: PacketState, env: EvalEnv): string {
  const m = rule.matches[k]!;
  return m.module.why(m.spec, pkt, env);
}
