/**
 * The sanity sweep: a few ordinary packets and a sample of the destinations the rulesets name, traced in
 * addition to the changed chains' classes. By the argument in relevant.ts none of them can fare
 * differently; if one does, the report shows it like any other class, so a gap in that argument could not
 * go unnoticed.
 */
import type { Ruleset } from '../model.ts';
import type { PacketInput } from '../eval/packet-spec.ts';
import { formatAddr } from '../net/addr.ts';
import { protoName } from '../net/proto.ts';
import type { ClassEnv, PacketClass } from './classes.ts';
import { ruleFacts } from './facts.ts';
import { valueAddr } from './space.ts';

const SAMPLES = 48;

function make(
  env: ClassEnv,
  from: 'outside' | 'local',
  protocol: string,
  src: string,
  dst: string,
  dport: number | null,
): PacketClass {
  const input: Record<string, unknown> = { protocol, src, dst, from };
  if (dport !== null) {
    input.dport = dport;
    input.sport = 40000;
  }
  return {
    input: input as unknown as PacketInput,
    affinity: [],
    origin: 'sweep',
    extent: {
      from,
      protocol,
      src,
      dst,
      sport: dport !== null ? '40000' : null,
      dport: dport !== null ? String(dport) : null,
      in: from === 'outside' ? env.uplink : null,
      mark: from === 'local' ? '0x0' : null,
      ctstate: 'NEW',
      affinity: [],
    },
  };
}

export function sweepClasses(rulesets: readonly Ruleset[], env: ClassEnv): PacketClass[] {
  const v4 = env.family === 4;
  const client = v4 ? '203.0.113.10' : '2001:db8:200::10';
  const far = v4 ? '198.51.100.10' : '2001:db8:100::10';
  const local = env.nodeAddrs.length ? formatAddr(valueAddr(env.family, env.nodeAddrs[0]!)) : client;
  const out: PacketClass[] = [
    make(env, 'outside', 'tcp', client, far, 80),
    make(env, 'outside', 'udp', client, far, 53),
    make(env, 'outside', v4 ? 'icmp' : 'ipv6-icmp', client, far, null),
    make(env, 'local', 'tcp', local, far, 443),
  ];
  for (const n of env.nodeAddrs)
    out.push(make(env, 'outside', 'tcp', client, formatAddr(valueAddr(env.family, n)), 22));
  // Evenly spaced rules of the old ruleset that name one destination: their packets from outside.
  const rs = rulesets[0]!;
  const stride = Math.max(1, Math.ceil(rs.ruleCount / SAMPLES));
  let k = 0;
  for (const table of rs.tables.values()) {
    for (const chain of table.chains.values()) {
      for (const rule of chain.rules) {
        if (k++ % stride !== 0) continue;
        const f = ruleFacts(rule, env.family);
        if (!f.dst || f.dst.negated || f.dst.value.lo !== f.dst.value.hi) continue;
        const proto = f.proto && !f.proto.negated ? f.proto.value : 6;
        const port = f.dports.find(d => !d.negated)?.value[0]?.lo;
        const ports = proto === 6 || proto === 17 || proto === 132;
        out.push(
          make(
            env,
            'outside',
            protoName(proto),
            client,
            formatAddr(valueAddr(env.family, f.dst.value.lo)),
            ports ? Number(port ?? 80n) : null,
          ),
        );
      }
    }
  }
  return out;
}
