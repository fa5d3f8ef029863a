/**
 * `ip -j addr` / `ip -j -d addr`, `ip -j route` / `ip -j -6 route` / `ip -j route show table all` and
 * `ip -j rule` (iproute2's JSON output: ipaddress.c, iproute.c, iprule.c). Never throws; every entry it
 * cannot use is a diagnostic on that entry's text.
 */
import { type Diagnostic, clip } from '../diagnostics.ts';
import { parseAddr } from '../net/addr.ts';
import {
  NODE_LIMITS,
  type NodeAddress,
  type NodeFileKind,
  type NodeFileResult,
  type NodeInterface,
  type NodeRoute,
  type NodeRule,
  type RouteType,
  type Scope,
  type SourceRef,
} from './types.ts';
import { LineIndex, topLevelElements } from './text-pos.ts';

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

const SCOPES = new Set<string>(['global', 'site', 'link', 'host', 'nowhere']);
export function scopeOf(v: unknown, fallback: Scope): Scope {
  if (typeof v === 'string' && SCOPES.has(v)) return v as Scope;
  if (v === 'universe') return 'global';
  if (typeof v === 'number')
    return v >= 255 ? 'nowhere' : v >= 254 ? 'host' : v >= 253 ? 'link' : v >= 200 ? 'site' : 'global';
  return fallback;
}

/** The route types iproute2 prints (rtnl_rtntype_n2a), shared by the JSON and the text reader. */
export const ROUTE_TYPES: ReadonlySet<string> = new Set<string>([
  'unicast',
  'local',
  'broadcast',
  'anycast',
  'multicast',
  'blackhole',
  'unreachable',
  'prohibit',
  'throw',
  'nat',
]);

/** Which `ip -j` output a parsed array is, by the keys of its entries. */
export function jsonKind(items: readonly unknown[]): NodeFileKind | null {
  for (const it of items.slice(0, 20)) {
    if (!isObj(it)) return null;
    if ('ifname' in it || 'addr_info' in it) return 'ip-addr';
    if ('priority' in it && ('table' in it || 'src' in it || 'action' in it || 'nop' in it)) return 'ip-rule';
    if ('dst' in it) return 'ip-route';
  }
  return null;
}

/** `default`, `10.0.0.0/8` or a host address, as a CIDR of `family` (null when it is none of these). */
export function routeDst(dst: string, family: 4 | 6): string | null {
  if (dst === 'default' || dst === 'all') return family === 4 ? '0.0.0.0/0' : '::/0';
  const [a, p] = dst.split('/');
  const addr = parseAddr(a ?? '');
  if (!addr) return null;
  const max = addr.v === 4 ? 32 : 128;
  const prefix = p === undefined ? max : Number(p);
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > max || (p !== undefined && !/^\d+$/.test(p))) return null;
  return `${a}/${prefix}`;
}

function familyOfEntry(o: Obj): 4 | 6 | null {
  for (const k of ['dst', 'gateway', 'prefsrc', 'src', 'via']) {
    const v = o[k];
    const s = typeof v === 'string' ? v : isObj(v) ? str(v['host']) : null;
    if (!s || s === 'default' || s === 'all') continue;
    const a = parseAddr(s.split('/')[0] ?? '');
    if (a) return a.v;
  }
  return null;
}

export function parseIpJson(text: string, file: string, items: readonly unknown[], kind: NodeFileKind): NodeFileResult {
  const diagnostics: Diagnostic[] = [];
  const lines = new LineIndex(text);
  const spans = topLevelElements(text);
  const result: NodeFileResult = {
    kind,
    format: 'json',
    interfaces: [],
    routes: [],
    rules: [],
    sysctls: new Map(),
    diagnostics,
  };
  // A file of one family: entries without an address of their own (default dev X, "from all") take it.
  let fileFamily: 4 | 6 = 4;
  for (const it of items) {
    const f = isObj(it) ? familyOfEntry(it) : null;
    if (f) {
      fileFamily = f;
      break;
    }
  }
  const n = Math.min(items.length, NODE_LIMITS.entries);
  if (items.length > n)
    diagnostics.push({
      code: 'input-too-large',
      severity: 'warning',
      message: `${items.length} entries; only the first ${n} are read`,
      range: lines.range(0, 0),
    });
  for (let i = 0; i < n; i++) {
    const it = items[i];
    const span = spans[i] ?? [0, 0];
    const range = lines.range(span[0], span[1]);
    const at: SourceRef = { file, line: range.start.line + 1 };
    const bad = (message: string): void => {
      diagnostics.push({ code: 'bad-value', severity: 'warning', message, range });
    };
    if (!isObj(it)) {
      bad(`entry ${i + 1} is not an object; skipped`);
      continue;
    }
    if (kind === 'ip-addr') readInterface(it, at, bad, result.interfaces);
    else if (kind === 'ip-route') readRoute(it, at, familyOfEntry(it) ?? fileFamily, bad, result.routes);
    else if (kind === 'ip-rule') readRule(it, at, familyOfEntry(it) ?? fileFamily, bad, result.rules);
  }
  return result;
}

function readInterface(o: Obj, at: SourceRef, bad: (m: string) => void, out: NodeInterface[]): void {
  const name = str(o['ifname']);
  if (!name) return bad('an interface without "ifname"; skipped');
  const flags = Array.isArray(o['flags']) ? (o['flags'] as unknown[]) : [];
  const linkinfo = isObj(o['linkinfo']) ? o['linkinfo'] : null;
  const addrs: NodeAddress[] = [];
  for (const a of Array.isArray(o['addr_info']) ? (o['addr_info'] as unknown[]) : []) {
    if (!isObj(a)) continue;
    const fam = a['family'] === 'inet' ? 4 : a['family'] === 'inet6' ? 6 : null;
    const local = str(a['local']);
    const prefixlen = num(a['prefixlen']);
    if (!fam) continue; // link-layer and other families are not addresses packets use
    const addr = local ? parseAddr(local) : null;
    if (!addr || addr.v !== fam || prefixlen === null || prefixlen < 0 || prefixlen > (fam === 4 ? 32 : 128)) {
      bad(`${name}: address '${clip(String(local), 60)}/${String(prefixlen)}' is not an IPv${fam} address; skipped`);
      continue;
    }
    addrs.push({
      family: fam,
      local,
      prefixlen,
      scope: scopeOf(a['scope'], 'global'),
      secondary: a['secondary'] === true,
      noprefixroute: a['noprefixroute'] === true,
      from: at,
    } as NodeAddress);
  }
  out.push({
    index: num(o['ifindex']),
    name,
    up: flags.includes('UP'),
    kind: linkinfo ? str(linkinfo['info_kind']) : null,
    addrs,
    from: at,
  });
}

function readRoute(o: Obj, at: SourceRef, family: 4 | 6, bad: (m: string) => void, out: NodeRoute[]): void {
  const dstText = str(o['dst']);
  const dst = dstText ? routeDst(dstText, family) : null;
  if (!dstText || !dst) return bad(`route destination '${clip(String(dstText), 60)}' is not a network; skipped`);
  const typeText = str(o['type']) ?? 'unicast';
  if (!ROUTE_TYPES.has(typeText)) return bad(`route type '${clip(typeText, 40)}' is not one packetlens knows; skipped`);
  // Multipath: the first nexthop stands for the route (the kernel hashes flows over them; said in the trace).
  const hops = Array.isArray(o['nexthops']) ? (o['nexthops'] as unknown[]).filter(isObj) : [];
  const hop = hops[0] ?? o;
  const gw = str(hop['gateway']) ?? (isObj(hop['via']) ? str(hop['via']['host']) : null);
  const type = typeText as RouteType;
  out.push({
    family,
    table: o['table'] === undefined ? 'main' : String(o['table']),
    type,
    dst,
    dev: str(hop['dev']),
    gateway: gw && parseAddr(gw) ? gw : null,
    prefsrc: str(o['prefsrc']),
    metric: num(o['metric']) ?? 0,
    scope: scopeOf(o['scope'], type === 'local' ? 'host' : gw ? 'global' : 'link'),
    from: at,
  });
}

function parseMark(v: unknown): number | null {
  if (typeof v === 'number') return v >>> 0;
  if (typeof v !== 'string') return null;
  const n = Number(v);
  return Number.isFinite(n) ? n >>> 0 : null;
}

function readRule(o: Obj, at: SourceRef, family: 4 | 6, bad: (m: string) => void, out: NodeRule[]): void {
  const priority = num(o['priority']);
  if (priority === null) return bad('a rule without "priority"; skipped');
  const net = (key: string, lenKey: string): string | null => {
    const s = str(o[key]);
    if (!s || s === 'all') return null;
    const len = num(o[lenKey]);
    return routeDst(len === null ? s : `${s}/${len}`, family);
  };
  const actionText = str(o['action']);
  const action: NodeRule['action'] =
    'nop' in o
      ? 'nop'
      : 'goto' in o
        ? 'goto'
        : actionText === 'blackhole' || actionText === 'unreachable' || actionText === 'prohibit'
          ? actionText
          : 'lookup';
  const fwmark = parseMark(o['fwmark']);
  out.push({
    family,
    priority,
    not: o['not'] === true || o['not'] === null,
    src: net('src', 'srclen'),
    dst: net('dst', 'dstlen'),
    fwmark,
    fwmask: parseMark(o['fwmask']) ?? 0xffffffff,
    iif: str(o['iif']),
    oif: str(o['oif']),
    action,
    table: o['table'] !== undefined ? String(o['table']) : null,
    suppressPrefixlen: num(o['suppress_prefixlen']),
    from: at,
  });
}
