/**
 * The node's own files as a source of a dump's node context in the editor (issue 19): `ip [-j] addr`,
 * `ip [-j] route`, `ip [-j] rule` and `sysctl -a` outputs lying next to the dump (a node bundle's folder) or
 * named by the `packetlens.node.contextFiles` setting. Which files to read (`nodeFileCandidates`), what the
 * engine worker makes of them (`readNodeFiles`: recognised by content, read once, with the gaps and
 * contradictions said), and the layer they become (`filesLayer`, between the settings and the dump's own
 * hints). Pure: no `vscode`; the glue reads the files through `workspace.fs` (virtual workspaces and the
 * web build too) and the worker holds the parse.
 */
import {
  type NodeContext as EngineNodeContext,
  type IpsetStore,
  type IpvsTable,
  type NodeContextNote,
  type NodeFileKind,
  type Ruleset,
  NodeModel,
  classifyBundleFile,
  formatAddr,
  formatDiagnostic,
  nodeContextNotes,
  parseAddr,
  parseIpsetSave,
  parseIpvsadmList,
  parseIpvsadmRules,
  readNodeContext,
} from '../engine/api.ts';
import type { NodeLayer } from './node-context.ts';

/** One file handed to the worker: its name as the user knows it (a path or URI) and its text. */
export interface NodeFileText {
  readonly file: string;
  readonly text: string;
}

/** Bounds on what is read from a folder: a node bundle is a handful of small files. */
export const NODE_FILE_LIMITS = {
  /** Files looked at in one folder (by name order). */
  files: 64,
  /** A file larger than this is not a node file worth reading in the editor (`ip route` of a big router is a few MB). */
  bytes: 16 * 1024 * 1024,
  /** All files of one folder together. */
  totalBytes: 32 * 1024 * 1024,
} as const;

/** A directory entry as the glue lists it. */
export interface DirEntry {
  readonly name: string;
  readonly isFile: boolean;
  readonly size: number;
}

/**
 * The files of a dump's folder worth reading as node files: regular files other than the dump itself, not
 * hidden, not larger than a node file can be, in name order, within the bounds. Content decides what each
 * one is (the worker); names decide nothing.
 */
export function nodeFileCandidates(entries: readonly DirEntry[], dumpName: string | null): string[] {
  const out: string[] = [];
  let total = 0;
  for (const e of [...entries].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    if (!e.isFile || e.name === dumpName || e.name.startsWith('.') || e.size > NODE_FILE_LIMITS.bytes) continue;
    if (out.length >= NODE_FILE_LIMITS.files || total + e.size > NODE_FILE_LIMITS.totalBytes) break;
    total += e.size;
    out.push(e.name);
  }
  return out;
}

/** A note about the node's files: a contradiction or error (`warning`), or a missing piece (`info`). */
export type NodeFilesNote = NodeContextNote;

/** What the worker says about the files it was given (plain data, for the status item and the tooltip). */
export interface NodeFilesSummary {
  /** The node files among them (and an `ipvsadm` listing), with what each one is. */
  readonly used: readonly { readonly file: string; readonly kind: NodeFileKind | 'ipvsadm' | 'ipset' }[];
  /** Other node outputs found beside them that the editor's traces do not read (ipset save, ipvsadm, other rules). */
  readonly unused: readonly { readonly file: string; readonly kind: string }[];
  /** The node's addresses, primary first (the first global, non-secondary address in ifindex order). */
  readonly addresses: readonly string[];
  /** The interface that owns the primary address. */
  readonly addressIface: string | null;
  /** The file the addresses came from. */
  readonly addressFile: string | null;
  /** The default route's device (IPv4 first), or null when the routes have none. */
  readonly uplink: string | null;
  readonly interfaces: readonly { readonly name: string; readonly addresses: readonly string[] }[];
  readonly routeCount: number;
  readonly ruleCount: number;
  /** `net.ipv4.ip_forward = 1`, … (only the keys packetlens reads). */
  readonly sysctls: readonly string[];
  /** Virtual services of the `ipvsadm` listing (0 without one): IPVS schedules their new connections. */
  readonly ipvsServices: number;
  readonly notes: readonly NodeFilesNote[];
}

const NODE_KINDS: ReadonlySet<string> = new Set<NodeFileKind>(['ip-addr', 'ip-route', 'ip-rule', 'sysctl']);

/** `file:///w/b/ip-addr.json` or `/w/b/ip-addr.json` → `ip-addr.json`. */
export function baseName(file: string): string {
  const m = /([^/\\]+)$/.exec(file);
  return m ? decodeURIComponent(m[1]!) : file;
}

/**
 * Reads the files handed to the worker: each is recognised by content (classifyBundleFile); the node's own
 * outputs become one NodeContext (null when there are none). The summary says what was used, what the node
 * looks like, and what the files leave out or contradict in the dump (`rs`, the parse they go with).
 */
export function readNodeFiles(
  files: readonly NodeFileText[],
  rs: Ruleset | null,
): {
  context: EngineNodeContext | null;
  ipvs: IpvsTable | null;
  ipsets: IpsetStore | null;
  summary: NodeFilesSummary | null;
} {
  const mine: NodeFileText[] = [];
  const unused: { file: string; kind: string }[] = [];
  let ipvsFile: NodeFileText | null = null;
  let ipsetFile: NodeFileText | null = null;
  for (const f of files) {
    const kind = classifyBundleFile(f.text);
    if (kind && NODE_KINDS.has(kind)) mine.push(f);
    else if (kind === 'ipvsadm' && !ipvsFile) ipvsFile = f;
    else if (kind === 'ipset' && !ipsetFile) ipsetFile = f;
    else if (kind) unused.push({ file: f.file, kind });
  }
  // The IPVS table beside a kube-proxy IPVS-mode dump: IPVS schedules new connections to its services.
  const ipvsRead = ipvsFile
    ? /^IP Virtual Server version/m.test(ipvsFile.text)
      ? parseIpvsadmList(ipvsFile.text)
      : parseIpvsadmRules(ipvsFile.text)
    : null;
  const ipvs = ipvsRead?.table ?? null;
  // The `ipset save` beside the dump: `-m set` matches read it (kube-proxy's IPVS mode lives on ipsets).
  const ipsets = ipsetFile ? parseIpsetSave(ipsetFile.text, ipsetFile.file) : null;
  if (mine.length === 0 && !ipvs && !ipsets) return { context: null, ipvs: null, ipsets: null, summary: null };
  const ipvsUsed = [
    ...(ipvsFile ? [{ file: ipvsFile.file, kind: 'ipvsadm' as const }] : []),
    ...(ipsetFile ? [{ file: ipsetFile.file, kind: 'ipset' as const }] : []),
  ];
  const firstProblem = [
    ...(ipvsRead?.diagnostics ?? []).map(d => formatDiagnostic(baseName(ipvsFile!.file), d)),
    ...(ipsets?.diagnostics ?? [])
      .filter(d => d.severity === 'error')
      .map(d => formatDiagnostic(baseName(ipsetFile!.file), d)),
  ][0];
  const ipvsNotes: NodeFilesNote[] = firstProblem ? [{ severity: 'warning', message: firstProblem }] : [];
  if (mine.length === 0)
    return {
      context: null,
      ipvs,
      ipsets,
      summary: {
        used: ipvsUsed,
        unused,
        addresses: [],
        addressIface: null,
        addressFile: null,
        uplink: null,
        interfaces: [],
        routeCount: 0,
        ruleCount: 0,
        sysctls: [],
        ipvsServices: ipvs?.services.length ?? 0,
        notes: ipvsNotes,
      },
    };
  const { context, diagnostics } = readNodeContext(mine);
  const model = new NodeModel({ context });
  const addresses = model.knownAddresses().map(formatAddr);
  const primary = addresses[0] ?? null;
  const owner = primary ? (context.interfaces.find(i => i.addrs.some(a => a.local === primary)) ?? null) : null;
  const addrSource = owner ? owner.from.file : null;
  let uplink: string | null = null;
  for (const probe of ['8.8.8.8', '2001:db8::1']) {
    const r = model.route(parseAddr(probe)!);
    if (r?.dev && r.prefix === 0 && r.type === 'unicast') {
      uplink = r.dev;
      break;
    }
  }
  const notes: NodeFilesNote[] = [...nodeContextNotes(context, rs, diagnostics), ...ipvsNotes];
  for (const d of diagnostics.filter(x => x.severity === 'error').slice(1, 3))
    notes.push({ severity: 'warning', message: formatDiagnostic(baseName(d.file), d) });
  return {
    context,
    ipvs,
    ipsets,
    summary: {
      used: [...context.sources.map(s => ({ file: s.file, kind: s.kind })), ...ipvsUsed],
      unused,
      addresses,
      addressIface: owner?.name ?? null,
      addressFile: addrSource,
      uplink,
      interfaces: context.interfaces
        .filter(i => i.addrs.length > 0)
        .map(i => ({ name: i.name, addresses: i.addrs.map(a => `${a.local}/${a.prefixlen}`) })),
      routeCount: context.routes.length,
      ruleCount: context.rules.length,
      sysctls: [...context.sysctls].map(([k, v]) => `${k} = ${v.value}`),
      ipvsServices: ipvs?.services.length ?? 0,
      notes,
    },
  };
}

/**
 * The layer of the node's files: their addresses (the engine reads them from the files themselves, with
 * their interfaces, so they are not handed over as typed addresses), the default route's device as the
 * uplink, and the files, which travel with each trace to the worker. `where` says where they were found
 * (`beside the dump`, `packetlens.node.contextFiles`).
 */
export function filesLayer(summary: NodeFilesSummary, files: readonly NodeFileText[], where: string): NodeLayer {
  const from = summary.addressFile ?? summary.used[0]?.file ?? '';
  return {
    kind: 'files',
    origin: `from ${baseName(from)}`,
    where,
    ...(summary.addresses.length ? { addresses: summary.addresses } : {}),
    ...(summary.uplink ? { uplink: summary.uplink } : {}),
    nodeFiles: files,
    filesSummary: summary,
  };
}
