/**
 * `REJECT` (`ipt_REJECT.c`, `ip6t_REJECT.c`): drop and answer with an ICMP error or a TCP reset. The
 * default answer is icmp-port-unreachable (icmp6-port-unreachable for IPv6).
 */
import type { CompileContext, ParsedOption } from '../matches/types.ts';
import { defineTarget } from './types.ts';
import { WRITES_NOTHING } from '../matches/knowledge.ts';

const V4 = [
  'icmp-net-unreachable',
  'icmp-host-unreachable',
  'icmp-port-unreachable',
  'icmp-proto-unreachable',
  'icmp-net-prohibited',
  'icmp-host-prohibited',
  'icmp-admin-prohibited',
  'tcp-reset',
];
const V6 = [
  'icmp6-no-route',
  'no-route',
  'icmp6-adm-prohibited',
  'adm-prohibited',
  'icmp6-addr-unreachable',
  'addr-unreach',
  'icmp6-port-unreachable',
  'port-unreach',
  'icmp6-policy-fail',
  'policy-fail',
  'icmp6-reject-route',
  'reject-route',
  'tcp-reset',
];
const ALIASES: Record<string, string> = {
  'net-unreach': 'icmp-net-unreachable',
  'host-unreach': 'icmp-host-unreachable',
  'port-unreach': 'icmp-port-unreachable',
  'proto-unreach': 'icmp-proto-unreachable',
  'net-prohib': 'icmp-net-prohibited',
  'host-prohib': 'icmp-host-prohibited',
  'admin-prohib': 'icmp-admin-prohibited',
};

export const rejectTarget = defineTarget<{ with: string }>({
  name: 'REJECT',
  hooks: ['INPUT', 'FORWARD', 'OUTPUT'],
  options: [{ name: '--reject-with', args: 1 }],
  compile(opts: readonly ParsedOption[], ctx: CompileContext) {
    const o = opts.find(x => x.name === '--reject-with');
    const def = ctx.family === 6 ? 'icmp6-port-unreachable' : 'icmp-port-unreachable';
    if (!o) return { with: def };
    const raw = o.args[0] ?? '';
    const name = ctx.family === 4 && Object.hasOwn(ALIASES, raw) ? ALIASES[raw]! : raw;
    if (!(ctx.family === 6 ? V6 : V4).includes(name))
      ctx.report(
        o,
        'bad-argument',
        `'${raw}' is not a REJECT answer for IPv${ctx.family} (${(ctx.family === 6 ? V6 : V4).join(', ')})`,
      );
    if (name === 'tcp-reset' && ctx.proto !== 6)
      ctx.report(o, 'bad-argument', `--reject-with tcp-reset needs '-p tcp' (iptables refuses the rule)`);
    return { with: name };
  },
  apply: spec => ({ effect: { kind: 'reject', with: spec.with }, text: `REJECT (${spec.with})` }),
  describe: spec => `drop and answer with ${spec.with}`,
  diffWrites: WRITES_NOTHING,
  lintEffect: 'terminates',
});
