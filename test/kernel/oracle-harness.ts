/**
 * Compares the engine with the Linux kernel on the fixtures in test/fixtures/kernel/<name>: each folder holds a
 * ruleset, the probes, the options the oracle ran with and what the kernel did (`oracle.json`, made by
 * ../shared/oracle/nforacle.py in private network namespaces). This module turns the oracle's topology
 * into the engine's node model and each kernel result into a comparable record.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { NodeConfig, PacketInput, TraceOutcome } from '../../src/engine/api.ts';
import { FIXTURES } from '../helpers/fixtures.ts';

export interface OracleProbe {
  name: string;
  proto: string;
  src?: string;
  sport?: number;
  dst: string;
  dport?: number;
  from: 'ext' | 'pod' | 'local';
  icmp_type?: number;
  sender_lo_down?: boolean;
}

export interface OracleResult {
  probe: OracleProbe;
  verdict: 'delivered' | 'local' | 'forwarded' | 'rejected' | 'dropped';
  delivered_to: string | null;
  src_seen: string | null;
  snat: boolean;
  dnat: boolean;
  rejects: unknown[];
  send_error: string | null;
  note: string | null;
  probe_rule_hits: { table: string; chain: string; rule: number }[];
}

export interface OracleRun {
  backend: string;
  node_ip: string;
  pods: Record<string, string>;
  options: {
    node_ip: string;
    node_if?: string;
    node_prefix?: number | null;
    pod_gw?: string | null;
    local_ips?: string[];
    setup_cmd?: string | null;
  };
  kernel: string;
  results: OracleResult[];
}

export interface KernelFixture {
  readonly name: string;
  readonly dir: string;
  readonly rules: string;
  readonly run: OracleRun;
}

export function kernelFixtures(): KernelFixture[] {
  const root = join(FIXTURES, 'kernel');
  if (!existsSync(root)) return [];
  return readdirSync(root)
    .filter(d => existsSync(join(root, d, 'oracle.json')) && existsSync(join(root, d, 'rules')))
    .sort()
    .map(name => ({
      name,
      dir: join(root, name),
      rules: readFileSync(join(root, name, 'rules'), 'utf8'),
      run: JSON.parse(readFileSync(join(root, name, 'oracle.json'), 'utf8')) as OracleRun,
    }));
}

/** The oracle's topology (see ../shared/oracle/README.md, "Topology") as the engine's node model. */
export function nodeFor(run: OracleRun): NodeConfig {
  const o = run.options;
  const nodeIf = o.node_if ?? 'eth0';
  const routeLocalnet = /route_localnet=1/.test(o.setup_cmd ?? '');
  return {
    uplink: nodeIf,
    routeLocalnet,
    addresses: [run.node_ip],
    interfaces: [
      { name: nodeIf, addresses: [`${run.node_ip}/${o.node_prefix ?? 32}`] },
      { name: 'lo', addresses: (o.local_ips ?? []).map(ip => `${ip}/32`) },
      ...Object.entries(run.pods).map(([, veth]) => ({ name: veth, addresses: o.pod_gw ? [`${o.pod_gw}/32`] : [] })),
    ],
    routes: Object.entries(run.pods).map(([ip, veth]) => ({ dst: `${ip}/32`, iface: veth })),
  };
}

export function packetFor(run: OracleRun, p: OracleProbe): PacketInput {
  const from = p.from === 'local' ? 'local' : 'outside';
  const inIface = p.from === 'pod' ? run.pods[p.src ?? ''] : (run.options.node_if ?? 'eth0');
  return {
    protocol: p.proto,
    ...(p.src ? { src: p.src } : {}),
    ...(p.sport !== undefined ? { sport: p.sport } : {}),
    dst: p.dst,
    ...(p.dport !== undefined ? { dport: p.dport } : {}),
    from,
    ...(from === 'outside' && inIface ? { in: inIface } : {}),
    ...(p.icmp_type !== undefined ? { icmpType: p.icmp_type } : {}),
    // The oracle sends local probes from a raw socket as root (its README, "Limitations").
    ...(from === 'local' ? { uid: 0, gid: 0 } : {}),
  };
}

/** Whether the kernel run says the packet never reached the node (its sender's own lo took it). */
export function neverReachedNode(r: OracleResult): boolean {
  return r.note !== null && /sender's own lo/.test(r.note);
}

/** Differences between one kernel result and one engine outcome; empty when they agree. */
export function differences(r: OracleResult, o: TraceOutcome): string[] {
  const diffs: string[] = [];
  const local = r.probe.from === 'local';
  const expected =
    r.verdict === 'delivered' || r.verdict === 'forwarded'
      ? local
        ? ['output', 'forwarded']
        : ['forwarded']
      : r.verdict === 'local'
        ? ['local']
        : r.verdict === 'rejected'
          ? ['rejected']
          : ['dropped'];
  if (!expected.includes(o.disposition))
    diffs.push(`disposition: kernel ${r.verdict}, engine ${o.disposition}${o.reason ? ` (${o.reason})` : ''}`);
  if (r.verdict === 'delivered' && r.delivered_to) {
    const [addr, port] = r.delivered_to.split(/:(?=\d+$)/);
    const got = o.packet.dport !== null ? `${o.packet.dst}:${o.packet.dport}` : o.packet.dst;
    const want = port !== undefined && o.packet.dport !== null ? `${addr}:${port}` : addr;
    if (got !== want) diffs.push(`destination: kernel ${r.delivered_to}, engine ${got}`);
  }
  // Locally delivered packets carry the source the node's own socket sees too (after MASQUERADE on lo).
  if (
    (r.verdict === 'delivered' || r.verdict === 'forwarded' || r.verdict === 'local') &&
    r.src_seen &&
    o.packet.src !== r.src_seen
  ) {
    diffs.push(`source seen: kernel ${r.src_seen}, engine ${o.packet.src}`);
  }
  const kh = r.probe_rule_hits.map(h => `${h.table}:${h.chain}#${h.rule}`);
  const eh = o.steps.map(s => `${s.table}:${s.chain}#${s.rule}`);
  if (kh.join(' ') !== eh.join(' '))
    diffs.push(`rule hits:\n      kernel ${kh.join(' ')}\n      engine ${eh.join(' ')}`);
  return diffs;
}
