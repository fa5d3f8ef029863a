/**
 * `packetlens diff <old> <new>`: what changes for packets between two iptables-save dumps (or, with
 * `--node`, between two sets of Kubernetes manifests, through the rules kube-proxy would write on that
 * node). Glue only: reading files, flags, the three output formats and the exit status that makes it a CI
 * gate (0 proven identical, 1 different or not proven the same, 2 unreadable input). The comparison is the engine's `diffRulesets`.
 */
import {
  DEFAULT_MAX_CLASSES,
  type DiffReport,
  type NodeConfig,
  diffManifests,
  diffRulesets,
  formatDiagnostic,
  nodeContextNotes,
  formatDiffMarkdown,
  formatDiffText,
  parseRuleset,
} from '../engine/api.ts';
import { UsageError, parseArgs } from './args.ts';
import { readTextFile } from './io.ts';
import { readManifestFiles } from './manifest-files.ts';
import { loadNodeContext } from './node-context.ts';

interface Io {
  out(line: string): void;
  err(line: string): void;
}

export const DIFF_USAGE = `  packetlens diff <old-rules> <new-rules> [--node-ip <ip>]… [--paths] [--json | --markdown]
  packetlens diff <old-manifests> <new-manifests> --node NAME [--paths] [--json | --markdown]`;

export const DIFF_OPTIONS = `diff options (exit 0: proven same behaviour, 1: packets fare differently or sameness is not proven, 2: unreadable input):
  --node-ip IP         a node address (repeatable; also --uplink, --iface, --route, --route-localnet as for trace)
  --node-context PATH  the node's own files, as for trace (ip [-j] addr/route/rule, sysctl -a; repeatable)
  --paths              also report packets whose matched rules change while their fate does not
  --max-classes N      packet classes traced at most (default ${DEFAULT_MAX_CLASSES}); past it the report is approximate
  --json               the report as one JSON object
  --markdown           the report as a pull-request comment
  --node NAME          compare two manifest sets (files or directories) through NAME's kube-proxy rules`;

const FLAGS = {
  'node-ip': 'strings',
  uplink: 'string',
  iface: 'strings',
  route: 'strings',
  'route-localnet': 'boolean',
  paths: 'boolean',
  'max-classes': 'string',
  json: 'boolean',
  markdown: 'boolean',
  node: 'string',
  'node-context': 'strings',
} as const;

const readDump = readTextFile;

function pairs(list: string[] | undefined, what: string): [string, string][] {
  return (list ?? []).map(kv => {
    const eq = kv.indexOf('=');
    if (eq <= 0) throw new UsageError(`${what} '${kv}' must look like A=B`);
    return [kv.slice(0, eq), kv.slice(eq + 1)];
  });
}

function print(report: DiffReport, flags: { json?: boolean; markdown?: boolean }, io: Io): void {
  if (flags.json) io.out(JSON.stringify(report));
  else
    for (const line of (flags.markdown ? formatDiffMarkdown(report) : formatDiffText(report))
      .replace(/\n$/, '')
      .split('\n'))
      io.out(line);
}

function run(argv: string[], io: Io): number {
  const { positionals, flags } = parseArgs(argv, FLAGS);
  if (positionals.length !== 2)
    throw new UsageError(`diff takes two inputs, the old and the new (${positionals.length} given)`);
  if (flags.json && flags.markdown) throw new UsageError('--json and --markdown exclude each other');
  const [oldPath, newPath] = positionals as [string, string];
  const maxClasses = flags['max-classes'];
  if (maxClasses !== undefined && !/^[1-9]\d{0,8}$/.test(maxClasses))
    throw new UsageError(`--max-classes must be a positive whole number ('${maxClasses}' given)`);
  const options = { paths: flags.paths ?? false, ...(maxClasses ? { maxClasses: Number(maxClasses) } : {}) };
  let result;
  if (flags.node !== undefined) {
    if (flags['node-ip'] || flags.iface || flags.route || flags.uplink || flags['node-context'])
      throw new UsageError(
        'with --node the node context comes from the manifests; --node-ip, --iface, --route, --uplink and --node-context do not apply',
      );
    result = diffManifests(
      { label: oldPath, files: readManifestFiles([oldPath]) },
      { label: newPath, files: readManifestFiles([newPath]) },
      flags.node,
      options,
    );
  } else {
    // Read through the one ruleset reader: iptables-save dumps and nftables rulesets (any of nft's three forms).
    const rulesets = [oldPath, newPath].map(file => parseRuleset(readDump(file), { file, lazy: true }).ruleset);
    // Structural errors make the comparison meaningless; the engine adds the options of changed rules.
    const structural = rulesets.flatMap(rs =>
      rs.diagnostics.filter(d => d.severity === 'error').map(d => formatDiagnostic(rs.file, d)),
    );
    if (structural.length) {
      for (const l of structural) io.err(l);
      throw new UsageError('the inputs have errors; fix them (see packetlens check) before comparing');
    }
    const context = loadNodeContext(flags['node-context'] ?? [], [], io);
    const node: NodeConfig = {
      addresses: flags['node-ip'] ?? [],
      interfaces: pairs(flags.iface, '--iface').map(([name, cidr]) => ({ name, addresses: [cidr] })),
      routes: pairs(flags.route, '--route').map(([dst, iface]) => ({ dst, iface })),
      routeLocalnet: flags['route-localnet'] ?? false,
      ...(flags.uplink ? { uplink: flags.uplink } : {}),
      ...(context ? { context } : {}),
    };
    result = diffRulesets(rulesets[0]!, rulesets[1]!, { ...options, node });
    // What the node's files leave out or contradict in the new rules travels with the report.
    if (result.ok && context) {
      const notes = nodeContextNotes(context, rulesets[1]!).map(n => `node files: ${n.message}`);
      if (notes.length)
        result = { ...result, report: { ...result.report, warnings: [...notes, ...result.report.warnings] } };
    }
  }
  if (!result.ok) throw new UsageError(result.error);
  if (result.errors?.length) {
    for (const l of result.errors) io.err(l);
    throw new UsageError('the inputs have errors; fix them (see packetlens check) before comparing');
  }
  print(result.report, flags, io);
  return result.report.identical ? 0 : 1;
}

/** The `diff` subcommand; returns the exit status. */
export function diffCommand(argv: string[], io: Io): number {
  try {
    return run(argv, io);
  } catch (e) {
    if (e instanceof UsageError) {
      io.err(`packetlens diff: ${e.message}`);
      return 2;
    }
    throw e;
  }
}
