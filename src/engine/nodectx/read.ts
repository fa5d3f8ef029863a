/**
 * Node context files recognised by content, never by name: `ip -j …` JSON or `ip …` / `sysctl -a` text.
 * `readNodeFile` reads one; `mergeNodeContext` joins a node's files into one NodeContext.
 */
import type { Diagnostic, FileDiagnostic } from '../diagnostics.ts';
import { parseIpJson, jsonKind } from './ip-json.ts';
import { parseIpText, textKind } from './ip-text.ts';
import { LineIndex } from './text-pos.ts';
import type {
  NodeContext,
  NodeFileKind,
  NodeFileResult,
  NodeInterface,
  NodeRoute,
  NodeRule,
  SysctlValue,
} from './types.ts';

/** Bytes beyond which a node file is refused (`ip -j route show table all` of a big router is a few MB). */
export const NODE_FILE_MAX_BYTES = 64 * 1024 * 1024;

/** What a node file is, by content: the `ip` output or sysctl list it holds, or null. Cheap. */
export function detectNodeFile(text: string): { kind: NodeFileKind; format: 'json' | 'text' } | null {
  const head = text.slice(0, 4096).trimStart();
  if (head.startsWith('[')) {
    // Look at the first entry's keys without parsing a large file twice.
    const kind = /"ifname"\s*:|"addr_info"\s*:/.test(head)
      ? 'ip-addr'
      : /"priority"\s*:/.test(head)
        ? 'ip-rule'
        : /"dst"\s*:/.test(head)
          ? 'ip-route'
          : null;
    return kind ? { kind, format: 'json' } : null;
  }
  const kind = textKind(text.slice(0, 16384).split('\n'));
  return kind ? { kind, format: 'text' } : null;
}

/** Reads one node context file. Never throws: unreadable input is a diagnostic and an empty result. */
export function readNodeFile(text: string, file: string): NodeFileResult {
  const empty = (message: string, range = new LineIndex('').range(0, 0)): NodeFileResult => ({
    kind: null,
    format: 'text',
    interfaces: [],
    routes: [],
    rules: [],
    sysctls: new Map(),
    diagnostics: [{ code: 'unknown-command', severity: 'error', message, range }],
  });
  if (text.length > NODE_FILE_MAX_BYTES)
    return empty(`${text.length} bytes: larger than a node context file can be (${NODE_FILE_MAX_BYTES})`);
  if (text.trimStart().startsWith('[')) {
    let items: unknown;
    try {
      items = JSON.parse(text);
    } catch (e) {
      const m = /position (\d+)/.exec(e instanceof Error ? e.message : '');
      const at = m ? Number(m[1]) : 0;
      const r = empty(
        `not valid JSON: ${e instanceof Error ? e.message : String(e)}`,
        new LineIndex(text).range(at, at),
      );
      return { ...r, diagnostics: r.diagnostics.map(d => ({ ...d, code: 'bad-json' })) };
    }
    if (!Array.isArray(items)) return empty('JSON, but not the array `ip -j` prints');
    // `ip -j` of an empty table prints []: nothing to learn, nothing wrong.
    if (items.length === 0) return { ...empty(''), diagnostics: [], format: 'json' };
    const kind = jsonKind(items);
    if (!kind) return empty('JSON, but not `ip -j addr`, `ip -j route` or `ip -j rule` output');
    return parseIpJson(text, file, items, kind);
  }
  const det = detectNodeFile(text);
  if (!det)
    return empty(
      'not a node context file: expected `ip [-j] addr`, `ip [-j] route`, `ip [-j] rule` or `sysctl -a` output',
    );
  return parseIpText(text, file, det.kind);
}

/**
 * Joins a node's files: interfaces by name (a later file's addresses replace an earlier one's), routes and
 * rules of every file (duplicates dropped: `ip route` and `ip route show table all` together), sysctls by key.
 */
export function mergeNodeContext(files: readonly { file: string; result: NodeFileResult }[]): {
  context: NodeContext;
  diagnostics: FileDiagnostic[];
} {
  const interfaces = new Map<string, NodeInterface>();
  const routes: NodeRoute[] = [];
  const seenRoutes = new Set<string>();
  const rules: NodeRule[] = [];
  const seenRules = new Set<string>();
  const sysctls = new Map<string, SysctlValue>();
  const sources: { file: string; kind: NodeFileKind; format: 'json' | 'text' }[] = [];
  const diagnostics: FileDiagnostic[] = [];
  for (const { file, result } of files) {
    for (const d of result.diagnostics as Diagnostic[]) diagnostics.push({ ...d, file });
    if (result.kind) sources.push({ file, kind: result.kind, format: result.format });
    for (const itf of result.interfaces) interfaces.set(itf.name, itf);
    for (const r of result.routes) {
      const key = `${r.family} ${r.table} ${r.type} ${r.dst} ${r.dev} ${r.gateway} ${r.metric}`;
      if (seenRoutes.has(key)) continue;
      seenRoutes.add(key);
      routes.push(r);
    }
    for (const r of result.rules) {
      const key = `${r.family} ${r.priority} ${r.not} ${r.src} ${r.dst} ${r.fwmark}/${r.fwmask} ${r.iif} ${r.oif} ${r.action} ${r.table}`;
      if (seenRules.has(key)) continue;
      seenRules.add(key);
      rules.push(r);
    }
    for (const [k, v] of result.sysctls) sysctls.set(k, v);
  }
  const list = [...interfaces.values()].sort((a, b) => (a.index ?? 1e9) - (b.index ?? 1e9));
  return { context: { interfaces: list, routes, rules, sysctls, sources }, diagnostics };
}

/** One call for callers with files in hand: read each, merge. */
export function readNodeContext(files: readonly { file: string; text: string }[]): {
  context: NodeContext;
  diagnostics: FileDiagnostic[];
} {
  return mergeNodeContext(files.map(f => ({ file: f.file, result: readNodeFile(f.text, f.file) })));
}
