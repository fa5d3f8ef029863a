/**
 * A plain-language reading of a rule: its header checks (`-s -d -p -i -o -f`, with `!`), each match module's
 * own `describe`, and what its target does.
 */
import { type IpMatch, type Net, type Rule, type TargetInstance, formatNet } from '../../engine/api.ts';

/** `10.10.1.11` for a host, `in 10.0.0.0/8` for a network. */
function netText(net: Net): string {
  const host = net.prefix === (net.v === 4 ? 32 : 128);
  return host ? formatNet(net).replace(/\/\d+$/, '') : `in ${formatNet(net)}`;
}

export function describeHeader(ip: IpMatch): string[] {
  const out: string[] = [];
  if (ip.src) out.push(`source ${ip.src.negated ? 'not ' : ''}${netText(ip.src.value)}`);
  if (ip.dst) out.push(`destination ${ip.dst.negated ? 'not ' : ''}${netText(ip.dst.value)}`);
  if (ip.proto)
    out.push(`protocol ${ip.proto.negated ? 'not ' : ''}${(ip.protoName ?? String(ip.proto.value)).toUpperCase()}`);
  const iface = (dir: string, v: NonNullable<IpMatch['inIface']>) => {
    const name = v.value.wildcard ? `any interface starting with ${v.value.name.slice(0, -1)}` : v.value.name;
    return `${dir} ${v.negated ? 'not ' : ''}${name}`;
  };
  if (ip.inIface) out.push(iface('arriving on', ip.inIface));
  if (ip.outIface) out.push(iface('leaving by', ip.outIface));
  if (ip.fragment)
    out.push(ip.fragment.negated ? 'not a non-first fragment' : 'a non-first fragment (no ports to match)');
  return out;
}

/** The rule's criteria in words; the comment is left out (it is shown on its own). */
export function describeCriteria(rule: Rule): string[] {
  const out = describeHeader(rule.ip);
  for (const m of rule.matches) {
    if (m.module.name === 'comment') continue;
    out.push(m.module.describe(m.spec));
  }
  return out;
}

export const VERDICT_TEXT: Record<string, string> = {
  ACCEPT: 'accept: the packet leaves this table and goes on to the next table or hook',
  DROP: 'drop the packet silently',
  RETURN: 'return to the chain that jumped here (in a built-in chain: apply its policy)',
  QUEUE: 'hand the packet to a userspace program (QUEUE), which decides',
};

export function describeTarget(target: TargetInstance | null): string {
  if (!target) return 'no target: the rule only counts packets, which go on to the next rule';
  switch (target.kind) {
    case 'verdict':
      return VERDICT_TEXT[target.verdict] ?? target.verdict;
    case 'jump':
      return `jump to chain ${target.chain}; if it returns, go on with the next rule here`;
    case 'goto':
      return `go to chain ${target.chain}; when it returns, continue in the chain that called this one, not here`;
    case 'target':
      return target.module.describe(target.spec);
    case 'unknown':
      return `target ${target.name} is not modelled: a trace that reaches this rule ends as unknown`;
  }
}
