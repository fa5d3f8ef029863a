/**
 * `packetlens` command line: the same engine as the editor, for terminals and CI. Subcommands:
 *   check <rules-file>                 diagnostics, exit 2 on errors
 *   trace <rules-file> --packet "…"    where packets go, with exact probabilities
 * Output contracts (`--json`) are documented in the README and kept stable.
 */
import {
  type NodeConfig,
  type PacketInput,
  describePacketInput,
  packetFromJson,
  parseIpsetSave,
  parseRuleset,
  parsePacketText,
  tracePacket,
  validateRules,
  nodeContextNotes,
  formatDiagnostic,
  ipvsInterceptors,
} from '../engine/api.ts';
import { UsageError, parseArgs, whyNotFlag } from './args.ts';
import { readTextFile } from './io.ts';
import { formatDiagnostics, formatTrace } from './format.ts';
import { type Chunk, jsonTraceChunks } from './json.ts';
import { dumpNodeFromManifests, synthCommand, traceManifests } from './kube.ts';
import { DIFF_OPTIONS, DIFF_USAGE, diffCommand } from './diff.ts';
import { isBundlePath, readBundleFiles, readNodeContextFiles, traceSources } from './node-context.ts';
import { formatLive, kernelWords, liveReport } from './live.ts';

const USAGE = `packetlens — where does this packet go, and which rule sent it there?

Usage:
  packetlens check <rules-file|bundle> [--node-context PATH]…
  packetlens trace <rules-file|bundle> (--packet "<proto> <src>[:<sport>] -> <dst>[:<dport>]" … | --packets <file.jsonl>)
                   [--node-ip <ip>]… [--from auto|outside|local] [--in <iface>] [--json]
  packetlens trace --manifests <files|dirs>… --packet "…" [--node NAME] [--mode iptables|ipvs|nftables] [--json]
  packetlens synth <files|dirs>… [--node NAME] [--mode iptables|ipvs|nftables] [--format FORMAT]
                   (iptables: save|restore; ipvs: save|restore|ipvsadm|ipvsadm-save|ipset; nftables: script|list)
${DIFF_USAGE}

trace options:
  --packet TEXT        a packet, e.g. "tcp 172.18.0.100 -> 172.18.255.200:80" (repeatable); extra fields as
                       key=value: in=eth0 mark=0x4000 state=ESTABLISHED flags=SYN,ACK type=echo-request
  --packets FILE       one JSON object per line: {"protocol":"tcp","src":"1.2.3.4","sport":40000,
                       "dst":"5.6.7.8","dport":80,"from":"auto","in":"eth0"}
  --node-ip IP         a node address (repeatable): addrtype LOCAL, local delivery vs forwarding, and the
                       MASQUERADE source (the first). Without it the node's address is symbolic, node(eth0),
                       unless the dump implies one (nodePortAddresses, SNAT --to-source); write node in a
                       packet for the node itself: "tcp 1.2.3.4 -> node:30080"
  --from MODE          auto (local when the source is a node address), outside, or local
  --in IFACE           incoming interface for outside packets (default: the uplink, eth0)
  --uplink IFACE       interface of the default route (default eth0)
  --iface NAME=CIDR    an interface and its address (repeatable), e.g. --iface docker0=172.17.0.1/16
  --route CIDR=IFACE   a route (repeatable), e.g. --route 10.10.4.0/24=veth1
  --route-localnet     net.ipv4.conf.all.route_localnet=1 (kube-proxy sets it for localhost NodePorts)
  --node-context PATH  the node's own files (repeatable): ip [-j] addr, ip [-j] route [show table all],
                       ip [-j] rule, sysctl -a output, recognised by content; a directory or .tar[.gz]
                       of them. Routes, MASQUERADE source, rp_filter and ip_forward follow them. The
                       rules file may itself be a bundle directory/tarball (iptables-save, nft list
                       ruleset, ipset save, ip -j addr/route, sysctl -a): see README "Node bundles"
  --ipset FILE         'ipset save' output, for -m set
  --affinity NAME      the client has a live entry in recent list NAME (session affinity; repeatable)
  --why-not            show why each evaluated rule did not match (in --json: the "misses" lists)
  --why-not=grouped    the same, consecutive rules missed for one reason as one entry (in --json: "missesGrouped")
  --events             include the full event list of every path in --json
  --json               one JSON object per packet, one per line
  --format WORDS       xtables-monitor or nft-monitor: print the predicted path as xtables-monitor --trace
                       or nft monitor trace would (rule handles print as 0x0: a dump carries none)
  --live CAPTURE       hold a live capture (xtables-monitor --trace, nft monitor trace, kernel TRACE: lines)
                       against the prediction: the same path, or the first rule where they part and why
  --manifests PATH     trace from Kubernetes manifests (files or directories, repeatable) instead of a dump:
                       client → the node that receives the packet → that node's kube-proxy rules → the pod.
                       With a rules file: the manifests' Node objects or kind config say which node the dump
                       is (its name in the file name, --node NAME, or the only node): its addresses, labelled
  --node NAME          with --manifests: the node that receives the packet (default: decided from the
                       manifests, e.g. MetalLB's announcer for a LoadBalancer IP, or the only node).
  --mode MODE          with --manifests: kube-proxy's mode (iptables, ipvs or nftables; default: the mode the
                       manifests configure, KubeProxyConfiguration mode or kind's kubeProxyMode, else iptables)
                       Manifests without Node objects or a kind config predict a default cluster

synth options:
  --node NAME          the node whose kube-proxy rules to write (not needed with one node)
  --format save|restore  iptables-save as on the node (default), or kube-proxy's iptables-restore input
  --nfacct             the kernel has nfacct: add kube-proxy's nfacct counter matches
  --no-random-fully    iptables without --random-fully support

${DIFF_OPTIONS}

Exit status: 0 on success; 2 on unreadable input or (check) when the file has errors.`;

interface Io {
  out(line: string): void;
  /** One line given in pieces (text, or UTF-8 bytes); without it the pieces are joined and given to `out`. */
  outChunks?(chunks: readonly Chunk[]): void;
  err(line: string): void;
}

const UTF8 = new TextDecoder();

const readInput = readTextFile;

/** Up to this many rules, `trace` validates every rule's options (about a second per 100k rules). */
const FULL_CHECK_MAX_RULES = 100_000;

function check(argv: string[], io: Io): number {
  const { positionals, flags } = parseArgs(argv, { 'node-context': 'strings' });
  let file = positionals[0];
  if (!file || positionals.length > 1) throw new UsageError('check takes one rules file');
  // A bundle: its rules file (as trace chooses it) and its node files are checked together.
  const bundle = isBundlePath(file) ? traceSources(file, 4, [], undefined, { err: () => {} }) : null;
  const nodeRead = readNodeContextFiles(flags['node-context'] ?? [], bundle ? readBundleFiles(file) : []);
  if (bundle) file = bundle.file;
  // The format is recognised by content: iptables-save, or nftables text, JSON or script (parse-ruleset.ts).
  // iptables rules are compiled one at a time and forgotten again, so a 100 MB dump is checked in bounded memory.
  const {
    format,
    ruleset: rs,
    diagnostics,
  } = parseRuleset(bundle ? bundle.text : readInput(file), {
    file,
    lazy: true,
  });
  if (format === 'iptables-save') validateRules(rs, { release: true });
  for (const line of formatDiagnostics(file, diagnostics)) io.out(line);
  const errors = diagnostics.filter(d => d.severity === 'error').length;
  const warnings = diagnostics.filter(d => d.severity === 'warning').length;
  let chains = 0;
  for (const t of rs.tables.values()) chains += t.chains.size;
  const kind = format === 'iptables-save' ? `IPv${rs.family}` : `nftables, ${format}`;
  // The node's files: their own diagnostics, then what they leave out or contradict in the rules.
  let nodeErrors = 0;
  if (nodeRead) {
    for (const d of nodeRead.diagnostics) io.out(formatDiagnostic(d.file, d));
    nodeErrors = nodeRead.diagnostics.filter(d => d.severity === 'error').length;
    for (const n of nodeContextNotes(nodeRead.context, rs)) io.out(`${n.severity}: node files: ${n.message}`);
    io.out(
      `node context: ${nodeRead.context.sources.map(s => `${s.file} (${s.kind})`).join(', ')}; ${nodeErrors} error${nodeErrors === 1 ? '' : 's'}`,
    );
  }
  io.out(
    `${file}: ${rs.tables.size} table${rs.tables.size === 1 ? '' : 's'}, ${chains} chains, ${rs.ruleCount} rules (${kind}); ${errors} error${errors === 1 ? '' : 's'}, ${warnings} warning${warnings === 1 ? '' : 's'}`,
  );
  return errors + nodeErrors > 0 ? 2 : 0;
}

const TRACE_FLAGS = {
  packet: 'strings',
  packets: 'string',
  'node-ip': 'strings',
  from: 'string',
  in: 'string',
  uplink: 'string',
  iface: 'strings',
  route: 'strings',
  'route-localnet': 'boolean',
  ipset: 'string',
  affinity: 'strings',
  'why-not': 'switch',
  events: 'boolean',
  json: 'boolean',
  manifests: 'strings',
  node: 'string',
  mode: 'string',
  'node-context': 'strings',
  format: 'string',
  live: 'string',
} as const;

function keyValues(list: string[] | undefined, what: string): [string, string][] {
  return (list ?? []).map(kv => {
    const eq = kv.indexOf('=');
    if (eq <= 0) throw new UsageError(`${what} '${kv}' must look like A=B`);
    return [kv.slice(0, eq), kv.slice(eq + 1)];
  });
}

function trace(argv: string[], io: Io): number {
  const { positionals, flags } = parseArgs(argv, TRACE_FLAGS);
  let file = positionals[0];
  const manifests = flags.manifests ?? [];
  if (manifests.length === 0 && (!file || positionals.length > 1))
    throw new UsageError('trace takes one rules file (or --manifests PATH…)');
  if (manifests.length > 0 && positionals.length > 1) throw new UsageError('trace takes one rules file');
  if (!flags.packet && !flags.packets)
    throw new UsageError('trace needs --packet "<proto> <src> -> <dst>:<port>" or --packets FILE');
  const from = flags.from ?? 'auto';
  if (!['auto', 'outside', 'local'].includes(from))
    throw new UsageError(`--from takes auto, outside or local, not '${from}'`);
  const inputs: { input: PacketInput; where: string }[] = [];
  for (const text of flags.packet ?? []) {
    const r = parsePacketText(text);
    if (!r.ok) throw new UsageError(`--packet: ${r.error}`);
    inputs.push({
      input: {
        ...r.input,
        from: r.input.from ?? (from as PacketInput['from']),
        ...(flags.in && !r.input.in ? { in: flags.in } : {}),
      },
      where: `--packet "${text}"`,
    });
  }
  if (flags.packets) {
    const lines = readInput(flags.packets).split('\n');
    lines.forEach((line, i) => {
      if (line.trim() === '') return;
      let obj: unknown;
      try {
        obj = JSON.parse(line);
      } catch (e) {
        throw new UsageError(`${flags.packets}:${i + 1}: not JSON: ${(e as Error).message}`);
      }
      const r = packetFromJson(obj);
      if (!r.ok) throw new UsageError(`${flags.packets}:${i + 1}: ${r.error}`);
      inputs.push({
        input: {
          ...r.input,
          from: r.input.from ?? (from as PacketInput['from']),
          ...(flags.in && !r.input.in ? { in: flags.in } : {}),
        },
        where: `${flags.packets}:${i + 1}`,
      });
    });
  }
  // Rules are compiled on demand: a trace touches a few dozen rules of a large dump (`check` validates all).
  if (manifests.length > 0 && !file) return traceManifests(manifests, inputs, flags, io);
  if (!file) throw new UsageError('trace needs a rules file');
  // A bundle (directory or tarball) brings its rules, ipsets and node files; --node-context adds node files.
  const family = inputs.some(i => (i.input.dst ?? '').includes(':') || (i.input.src ?? '').includes(':')) ? 6 : 4;
  const sources = traceSources(positionals[0]!, family, flags['node-context'] ?? [], flags.ipset, io);
  file = sources.file;
  const { format, ruleset: rs, diagnostics } = parseRuleset(sources.text, { file, lazy: true });
  // Rule options are checked too when that is cheap, so "this file has N errors" counts every one.
  if (format === 'iptables-save' && rs.ruleCount <= FULL_CHECK_MAX_RULES) validateRules(rs, { release: true });
  const errors = diagnostics.filter(d => d.severity === 'error');
  if (rs.tables.size === 0 && errors.length) {
    for (const line of formatDiagnostics(file, errors)) io.err(line);
    throw new UsageError(`${file}: no rules could be read`);
  }
  const ifaces = keyValues(flags.iface, '--iface');
  // A dump with the manifests of its cluster: the manifests say which node it is (unless --node-ip does).
  const fromManifests =
    manifests.length > 0 && !flags['node-ip'] ? dumpNodeFromManifests(manifests, file, flags.node, io) : [];
  const node: NodeConfig = {
    ...(fromManifests.length ? { inferred: fromManifests } : {}),
    addresses: flags['node-ip'] ?? [],
    interfaces: ifaces.map(([name, cidr]) => ({ name, addresses: [cidr] })),
    routes: keyValues(flags.route, '--route').map(([dst, iface]) => ({ dst, iface })),
    routeLocalnet: flags['route-localnet'] ?? false,
    ...(flags.uplink ? { uplink: flags.uplink } : {}),
    ...(sources.context ? { context: sources.context } : {}),
  };
  const ipsets = sources.ipset ? parseIpsetSave(sources.ipset.text, sources.ipset.file) : null;
  if (ipsets) for (const line of formatDiagnostics(sources.ipset!.file, ipsets.diagnostics)) io.err(line);
  if (!flags.json) for (const n of sources.notes) io.err(`note: ${n}`);
  const whyNot = whyNotFlag(flags['why-not']);
  // A bundle's ipvsadm listing: IPVS takes new connections to its virtual services (src/engine/ipvs/).
  const interceptors = sources.ipvs ? ipvsInterceptors(sources.ipvs.table) : [];
  // What the node's files leave out or contradict in the dump travels with every trace (node-check.ts).
  const contextNotes = sources.context
    ? nodeContextNotes(sources.context, rs).map(n => `node files: ${n.message}`)
    : [];
  let first = true;
  for (const { input, where } of inputs) {
    const traced = tracePacket(rs, input, {
      node,
      ipsets,
      recent: flags.affinity ?? [],
      // The grouped why-not is the whole record too; a live capture is aligned with every miss (align.ts).
      explain: whyNot === 'grouped' && !flags.live ? 'grouped' : !!whyNot || !flags.json || !!flags.live,
      // The events (each path's full narrative) are printed by --events and read by --format and --live.
      events: !!(flags.events || flags.format || flags.live),
      ...(interceptors.length ? { interceptors } : {}),
    });
    if (!traced.ok) throw new UsageError(`${where}: ${traced.error}`);
    const r = contextNotes.length
      ? { ...traced, trace: { ...traced.trace, warnings: [...contextNotes, ...traced.trace.warnings] } }
      : traced;
    // The prediction in the kernel's words, or held against a live capture (live.ts).
    if (flags.format) {
      for (const l of kernelWords(r.trace, flags.format, sources.text)) io.out(l);
      continue;
    }
    const live = flags.live
      ? liveReport(
          r.trace,
          rs,
          sources.text,
          flags.live,
          readInput(flags.live),
          r.trace.node?.symbolic !== undefined && r.trace.node?.symbolic !== null,
        )
      : null;
    if (flags.json) {
      const chunks = jsonTraceChunks(
        r.trace,
        input,
        { misses: whyNot, events: flags.events ?? false },
        live ? { live } : undefined,
      );
      if (io.outChunks) io.outChunks(chunks);
      else io.out(chunks.map(c => (typeof c === 'string' ? c : UTF8.decode(c))).join(''));
    } else {
      if (!first) io.out('');
      io.out(
        formatTrace(
          r.trace,
          describePacketInput({ ...input, sport: r.trace.packet.sport ?? undefined } as PacketInput),
          { whyNot, maxMissesPerChain: 3 },
        ),
      );
    }
    if (live && !flags.json) for (const l of formatLive(live, flags.live!)) io.out(l);
    first = false;
  }
  return 0;
}

export function run(argv: string[], io: Io): number {
  const [cmd, ...rest] = argv;
  try {
    switch (cmd) {
      case 'check':
        return check(rest, io);
      case 'trace':
        return trace(rest, io);
      case 'diff':
        return diffCommand(rest, io);
      case 'synth':
        return synthCommand(rest, io);
      case undefined:
      case '-h':
      case '--help':
      case 'help':
        io.out(USAGE);
        return cmd === undefined ? 2 : 0;
      default:
        throw new UsageError(`unknown command '${cmd}' (check, trace, synth, diff)`);
    }
  } catch (e) {
    if (e instanceof UsageError) {
      io.err(`packetlens: ${e.message}`);
      return 2;
    }
    throw e;
  }
}
