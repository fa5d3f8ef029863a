/**
 * `-m icmp --icmp-type` and `-m icmp6 --icmpv6-type` (`ip_tables.c` icmp_match, `ip6_tables.c`
 * icmp6_match): a type, `type/code`, a name from iptables' table (`libipt_icmp.c`, `libip6t_icmp6.c`) or
 * `any`. The kernel compares `type == t && min_code <= code <= max_code`, inverted by `!`.
 */
import type { PacketState } from '../net/packet.ts';
import type { CompileContext, MatchModule, ParsedOption } from './types.ts';
import { defineMatch, unknown } from './types.ts';
import { firstArg, not } from './util.ts';
import { optionAtoms } from './knowledge.ts';

type Code = [type: number, min: number, max: number];

const ICMP4: Record<string, Code> = {
  any: [255, 0, 255],
  'echo-reply': [0, 0, 255],
  pong: [0, 0, 255],
  'destination-unreachable': [3, 0, 255],
  'network-unreachable': [3, 0, 0],
  'host-unreachable': [3, 1, 1],
  'protocol-unreachable': [3, 2, 2],
  'port-unreachable': [3, 3, 3],
  'fragmentation-needed': [3, 4, 4],
  'source-route-failed': [3, 5, 5],
  'network-unknown': [3, 6, 6],
  'host-unknown': [3, 7, 7],
  'network-prohibited': [3, 9, 9],
  'host-prohibited': [3, 10, 10],
  'TOS-network-unreachable': [3, 11, 11],
  'TOS-host-unreachable': [3, 12, 12],
  'communication-prohibited': [3, 13, 13],
  'host-precedence-violation': [3, 14, 14],
  'precedence-cutoff': [3, 15, 15],
  'source-quench': [4, 0, 255],
  redirect: [5, 0, 255],
  'network-redirect': [5, 0, 0],
  'host-redirect': [5, 1, 1],
  'TOS-network-redirect': [5, 2, 2],
  'TOS-host-redirect': [5, 3, 3],
  'echo-request': [8, 0, 255],
  ping: [8, 0, 255],
  'router-advertisement': [9, 0, 255],
  'router-solicitation': [10, 0, 255],
  'time-exceeded': [11, 0, 255],
  'ttl-exceeded': [11, 0, 255],
  'ttl-zero-during-transit': [11, 0, 0],
  'ttl-zero-during-reassembly': [11, 1, 1],
  'parameter-problem': [12, 0, 255],
  'ip-header-bad': [12, 0, 0],
  'required-option-missing': [12, 1, 1],
  'timestamp-request': [13, 0, 255],
  'timestamp-reply': [14, 0, 255],
  'address-mask-request': [17, 0, 255],
  'address-mask-reply': [18, 0, 255],
};

const ICMP6: Record<string, Code> = {
  'destination-unreachable': [1, 0, 255],
  'no-route': [1, 0, 0],
  'communication-prohibited': [1, 1, 1],
  'beyond-scope': [1, 2, 2],
  'address-unreachable': [1, 3, 3],
  'port-unreachable': [1, 4, 4],
  'failed-policy': [1, 5, 5],
  'reject-route': [1, 6, 6],
  'packet-too-big': [2, 0, 255],
  'time-exceeded': [3, 0, 255],
  'ttl-exceeded': [3, 0, 255],
  'ttl-zero-during-transit': [3, 0, 0],
  'ttl-zero-during-reassembly': [3, 1, 1],
  'parameter-problem': [4, 0, 255],
  'bad-header': [4, 0, 0],
  'unknown-header-type': [4, 1, 1],
  'unknown-option': [4, 2, 2],
  'echo-request': [128, 0, 255],
  ping: [128, 0, 255],
  'echo-reply': [129, 0, 255],
  pong: [129, 0, 255],
  'mld-listener-query': [130, 0, 255],
  'mld-listener-report': [131, 0, 255],
  'mld-listener-done': [132, 0, 255],
  'mld-listener-reduction': [132, 0, 255],
  'router-solicitation': [133, 0, 255],
  'router-advertisement': [134, 0, 255],
  'neighbour-solicitation': [135, 0, 255],
  'neighbor-solicitation': [135, 0, 255],
  'neighbour-advertisement': [136, 0, 255],
  'neighbor-advertisement': [136, 0, 255],
  redirect: [137, 0, 255],
};

export function icmpTypeByName(name: string, v6: boolean): Code | null {
  const table = v6 ? ICMP6 : ICMP4;
  // Own keys only: `constructor` or `__proto__` is no ICMP type ("Unknown ICMP type `constructor'").
  const hit = Object.hasOwn(table, name)
    ? table[name]
    : Object.entries(table).find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1];
  if (hit) return hit;
  const m = /^(\d{1,3})(?:\/(\d{1,3}))?$/.exec(name);
  if (!m) return null;
  const t = Number(m[1]);
  if (t > 255) return null;
  if (m[2] === undefined) return [t, 0, 255];
  const c = Number(m[2]);
  return c > 255 ? null : [t, c, c];
}

interface IcmpSpec {
  readonly negated: boolean;
  readonly code: Code | null;
  readonly text: string;
}

function make(name: string, option: string, proto: number, v6: boolean): MatchModule<unknown> {
  const label = v6 ? 'ICMPv6' : 'ICMP';
  return defineMatch<IcmpSpec>({
    name,
    families: [v6 ? 6 : 4],
    options: [{ name: option, args: 1, negatable: true }],
    compile(opts: readonly ParsedOption[], ctx: CompileContext) {
      const o = opts.find(x => x.name === option);
      if (!o) return { negated: false, code: null, text: '' };
      const text = firstArg(o, ctx);
      const code = icmpTypeByName(text, v6);
      if (!code)
        ctx.report(
          o,
          'bad-argument',
          `'${text}' is not an ${label} type (a name such as echo-request, a number, or type/code)`,
        );
      return { negated: o.negated, code, text };
    },
    test(spec: IcmpSpec, pkt: PacketState) {
      if (pkt.proto !== proto) return false;
      if (!spec.code) return true;
      const [t, min, max] = spec.code;
      if (t === 255) return !spec.negated;
      if (pkt.icmpType === null) return unknown(`the packet's ${label} type is not given`);
      const code = pkt.icmpCode ?? 0;
      return (pkt.icmpType === t && code >= min && code <= max) !== spec.negated;
    },
    why(spec: IcmpSpec, pkt: PacketState) {
      if (pkt.proto !== proto) return `protocol ${name} ≠ ${pkt.proto}`;
      return `${not(spec.negated)}${option} ${spec.text} ${spec.negated ? '=' : '≠'} ${pkt.icmpType}${pkt.icmpCode ? `/${pkt.icmpCode}` : ''}`;
    },
    describe: (spec: IcmpSpec) => `${label}${spec.code ? ` ${spec.negated ? 'not ' : ''}type ${spec.text}` : ''}`,
    // Every type/code named (`any` names none).
    diffFacts: (_spec: IcmpSpec, options: readonly ParsedOption[]) => ({
      icmpTypes: options.flatMap(o => {
        const c = o.name === option ? icmpTypeByName(o.args[0] ?? '', v6) : null;
        return c && c[0] !== 255 ? [[c[0], c[1]] as const] : [];
      }),
    }),
    lintAtoms: optionAtoms,
    lintNature: 'fixed',
  });
}

export const icmpMatch = make('icmp', '--icmp-type', 1, false);
export const icmp6Match = make('icmp6', '--icmpv6-type', 58, true);
