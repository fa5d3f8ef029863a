/**
 * `--node-context FILE|DIR|TARBALL` and node bundles for the CLI: reads files (a directory's regular files,
 * a .tar or .tar.gz's members), lets the engine recognise each by content (classifyBundleFile) and hands
 * the node's own files to readNodeContext. Decompression lives here, never in the engine.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { readFileSync } from 'node:fs';
import {
  type BundleFileKind,
  type FileDiagnostic,
  type NodeContext,
  type IpvsTable,
  classifyBundleFile,
  formatDiagnostic,
  parseIpvsadmList,
  parseIpvsadmRules,
  readNodeContext,
} from '../engine/api.ts';
import { UsageError } from './args.ts';
import { readTextFile } from './io.ts';

export interface BundleFile {
  readonly file: string;
  readonly text: string;
  readonly kind: BundleFileKind | null;
}

/** Members of a tarball past these are not read (a node bundle is a handful of small files). */
const TAR_MAX_MEMBERS = 1000;
const TAR_MAX_BYTES = 512 * 1024 * 1024;

/** The regular files of a ustar/GNU tar archive (optionally gzip-compressed): name and text. */
export function readTarball(path: string): { file: string; text: string }[] {
  let buf: Buffer;
  try {
    buf = readFileSync(path);
    if (buf[0] === 0x1f && buf[1] === 0x8b) buf = gunzipSync(buf, { maxOutputLength: TAR_MAX_BYTES });
  } catch (e) {
    throw new UsageError(`${path}: cannot read the archive: ${(e as Error).message}`);
  }
  const out: { file: string; text: string }[] = [];
  let longName: string | null = null;
  for (let off = 0; off + 512 <= buf.length && out.length < TAR_MAX_MEMBERS;) {
    const header = buf.subarray(off, off + 512);
    if (header.every(b => b === 0)) break;
    const field = (a: number, n: number) =>
      header
        .subarray(a, a + n)
        .toString('utf8')
        .replace(/\0.*$/s, '');
    const size = parseInt(field(124, 12).trim() || '0', 8);
    const type = String.fromCharCode(header[156] ?? 48);
    const prefix = field(345, 155);
    let name = longName ?? (prefix ? `${prefix}/${field(0, 100)}` : field(0, 100));
    longName = null;
    const body = buf.subarray(off + 512, off + 512 + (Number.isFinite(size) ? size : 0));
    off += 512 + Math.ceil((Number.isFinite(size) ? size : 0) / 512) * 512;
    if (type === 'L') {
      longName = body.toString('utf8').replace(/\0.*$/s, '');
      continue;
    }
    if (type !== '0' && type !== '\0') continue;
    name = name.replace(/^\.\//, '');
    out.push({ file: `${path}:${name}`, text: body.toString('utf8') });
  }
  return out;
}

function isTarball(path: string): boolean {
  return /\.(tar|tar\.gz|tgz)$/i.test(path);
}

/** Every file of a directory (one level, sorted by name) or tarball, or the one file, classified by content. */
export function readBundleFiles(path: string): BundleFile[] {
  let files: { file: string; text: string }[];
  let isDir = false;
  try {
    isDir = statSync(path).isDirectory();
  } catch (e) {
    throw new UsageError(`${path}: cannot read: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }
  if (isDir)
    files = readdirSync(path)
      .sort()
      .map(n => join(path, n))
      .filter(f => statSync(f).isFile())
      .map(f => ({ file: f, text: readTextFile(f) }));
  else if (isTarball(path)) files = readTarball(path);
  else files = [{ file: path, text: readTextFile(path) }];
  return files.map(f => ({ ...f, kind: classifyBundleFile(f.text) }));
}

/** True when a path names a bundle (a directory or a tarball) rather than one rules file. */
export function isBundlePath(path: string): boolean {
  try {
    return statSync(path).isDirectory() || isTarball(path);
  } catch {
    return false;
  }
}

const NODE_KINDS = new Set<BundleFileKind>(['ip-addr', 'ip-route', 'ip-rule', 'sysctl']);

/**
 * The node context of `--node-context` paths plus a bundle's own node files. Diagnostics go to stderr;
 * a path whose files are none of the node's outputs is an error (a typo should not silently do nothing).
 */
export function loadNodeContext(
  paths: readonly string[],
  extra: readonly BundleFile[],
  io: { err(line: string): void },
): NodeContext | null {
  const read = readNodeContextFiles(paths, extra);
  if (!read) return null;
  for (const d of read.diagnostics) io.err(formatDiagnostic(d.file, d));
  return read.context;
}

/** The node context of `--node-context` paths plus a bundle's node files, with the files' diagnostics. */
export function readNodeContextFiles(
  paths: readonly string[],
  extra: readonly BundleFile[] = [],
): { context: NodeContext; diagnostics: FileDiagnostic[] } | null {
  const nodeFiles: BundleFile[] = extra.filter(f => f.kind && NODE_KINDS.has(f.kind));
  for (const p of paths) {
    const files = readBundleFiles(p);
    const mine = files.filter(f => f.kind && NODE_KINDS.has(f.kind));
    if (mine.length === 0)
      throw new UsageError(
        `--node-context ${p}: no \`ip [-j] addr\`, \`ip [-j] route\`, \`ip [-j] rule\` or \`sysctl -a\` output found`,
      );
    nodeFiles.push(...mine);
  }
  if (nodeFiles.length === 0) return null;
  return readNodeContext(nodeFiles.map(f => ({ file: f.file, text: f.text })));
}

export interface TraceSources {
  /** The rules file traced (inside a bundle: the one chosen for the packet's family). */
  readonly file: string;
  readonly text: string;
  readonly ipset: { file: string; text: string } | null;
  readonly context: NodeContext | null;
  /** The bundle's `ipvsadm -Ln` / `-Sn`: IPVS schedules new connections to its virtual services. */
  readonly ipvs: { readonly file: string; readonly table: IpvsTable } | null;
  /** What was chosen from a bundle and what was left, one line each (printed as notes). */
  readonly notes: string[];
}

/**
 * The inputs of `trace FILE|BUNDLE [--node-context …]`: a rules file as before, or a bundle whose rules,
 * ipsets and node files are found by content. In a bundle iptables-save wins over `nft list ruleset` for
 * its family (on an iptables-nft node the nft listing repeats the same rules); the choice is said.
 */
export function traceSources(
  path: string,
  family: 4 | 6,
  nodeContext: readonly string[],
  ipsetPath: string | undefined,
  io: { err(line: string): void },
): TraceSources {
  if (!isBundlePath(path)) {
    return {
      file: path,
      text: readTextFile(path),
      ipset: ipsetPath ? { file: ipsetPath, text: readTextFile(ipsetPath) } : null,
      context: loadNodeContext(nodeContext, [], io),
      ipvs: null,
      notes: [],
    };
  }
  const files = readBundleFiles(path);
  const want = family === 6 ? 'ip6tables-save' : 'iptables-save';
  const rules = files.find(f => f.kind === want && /^-A /m.test(f.text)) ?? files.find(f => f.kind === 'nft');
  if (!rules)
    throw new UsageError(
      `${path}: no ${want} or nft ruleset found in the bundle (files: ${files.map(f => `${f.file} (${f.kind ?? 'not recognised'})`).join(', ')})`,
    );
  const notes = [`bundle ${path}: traced ${rules.file} (${rules.kind})`];
  const others = files.filter(f => f !== rules && (f.kind === 'nft' || f.kind === want));
  if (others.length) notes.push(`not traced: ${others.map(f => `${f.file} (${f.kind})`).join(', ')}`);
  const ipvs = readIpvs(files, io);
  if (ipvs)
    notes.push(
      `IPVS: ${ipvs.file} (${ipvs.table.services.length} virtual service${ipvs.table.services.length === 1 ? '' : 's'}) schedules new connections at LOCAL_IN and LOCAL_OUT`,
    );
  const ipsetFile = ipsetPath
    ? { file: ipsetPath, text: readTextFile(ipsetPath) }
    : (files.find(f => f.kind === 'ipset') ?? null);
  const context = loadNodeContext(nodeContext, files, io);
  if (context) notes.push(`node context: ${context.sources.map(s => `${s.file} (${s.kind})`).join(', ')}`);
  return {
    file: rules.file,
    text: rules.text,
    ipset: ipsetFile ? { file: ipsetFile.file, text: ipsetFile.text } : null,
    context,
    ipvs,
    notes,
  };
}

/**
 * The bundle's IPVS table: `ipvsadm -Ln` (`IP Virtual Server version …` header) or `ipvsadm -Sn` (`-A -t …`
 * lines), its diagnostics printed. More than one file: the first is used, and the others are named.
 */
function readIpvs(
  files: readonly BundleFile[],
  io: { err(line: string): void },
): { file: string; table: IpvsTable } | null {
  const list = files.filter(f => f.kind === 'ipvsadm');
  const first = list[0];
  if (!first) return null;
  if (list.length > 1)
    io.err(
      `note: more than one ipvsadm file in the bundle: using ${first.file}, not ${list
        .slice(1)
        .map(f => f.file)
        .join(', ')}`,
    );
  const r = /^IP Virtual Server version/m.test(first.text)
    ? parseIpvsadmList(first.text)
    : parseIpvsadmRules(first.text);
  for (const d of r.diagnostics) io.err(formatDiagnostic(first.file, d));
  return { file: first.file, table: r.table };
}
