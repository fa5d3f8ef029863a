/**
 * The plain-text forms: `ip addr`, `ip route [show table all]`, `ip rule` (iproute2's print functions)
 * and `sysctl -a` lines. Never throws; a line it cannot use is a diagnostic on that line.
 */
import type { Diagnostic } from '../diagnostics.ts';
import { clip } from '../diagnostics.ts';
import { parseAddr } from '../net/addr.ts';
import { ROUTE_TYPES, routeDst, scopeOf } from './ip-json.ts';
import {
  NODE_LIMITS,
  type NodeAddress,
  type NodeFileKind,
  type NodeFileResult,
  type NodeInterface,
  type NodeRoute,
  type NodeRule,
  type RouteType,
  type SysctlValue,
} from './types.ts';

/** The sysctls packetlens reads: forwarding, route_localnet, rp_filter, accept_local, br_netfilter. */
export const SYSCTL_KEYS =
  /^net\.(ipv4\.ip_forward|ipv6\.conf\.[^.\s]+\.forwarding|ipv4\.conf\.[^\s]+\.(route_localnet|rp_filter|accept_local|forwarding)|bridge\.bridge-nf-call-ip6?tables)$/;

function emptyResult(kind: NodeFileKind): NodeFileResult {
  return { kind, format: 'text', interfaces: [], routes: [], rules: [], sysctls: new Map(), diagnostics: [] };
}

function lineDiag(diags: Diagnostic[], line: number, len: number, message: string): void {
  diags.push({
    code: 'bad-value',
    severity: 'warning',
    message,
    range: { start: { line, character: 0 }, end: { line, character: len } },
  });
}

/** Which text form this is, from its first meaningful lines. */
export function textKind(lines: readonly string[]): NodeFileKind | null {
  let sysctl = 0;
  for (const raw of lines.slice(0, 50)) {
    const l = raw.trim();
    if (l === '' || l.startsWith('#')) continue;
    if (/^\d+:\s+\S+?(@\S+)?:\s+</.test(l)) return 'ip-addr';
    if (/^\d+:\s+(not\s+)?(from|to|fwmark|iif|oif|all)\b/.test(l)) return 'ip-rule';
    if (/^net\.[\w.\-/]+\s*=/.test(l)) {
      if (++sysctl >= 1) return 'sysctl';
      continue;
    }
    const words = l.split(/\s+/);
    const first = ROUTE_TYPES.has(words[0]!) ? words[1] : words[0];
    if (
      first &&
      (first === 'default' || routeDst(first, 4) || routeDst(first, 6)) &&
      words.some(w => w === 'dev' || w === 'via')
    )
      return 'ip-route';
    if (first && ROUTE_TYPES.has(words[0]!) && (first === 'default' || routeDst(first, 4) || routeDst(first, 6)))
      return 'ip-route';
  }
  return null;
}

export function parseIpText(text: string, file: string, kind: NodeFileKind): NodeFileResult {
  const res = emptyResult(kind);
  const lines = text.split('\n');
  const n = Math.min(lines.length, NODE_LIMITS.entries);
  let current: { itf: NodeInterface; addrs: NodeAddress[] } | null = null;
  let lastRoute: NodeRoute | null = null;
  for (let i = 0; i < n; i++) {
    const raw = lines[i]!.replace(/\r$/, '');
    if (raw.length > NODE_LIMITS.lineLength) {
      lineDiag(res.diagnostics, i, 0, `line of ${raw.length} characters; skipped`);
      continue;
    }
    const l = raw.trim();
    if (l === '' || l.startsWith('#')) continue;
    const at = { file, line: i + 1 };
    if (kind === 'sysctl') {
      const m = /^([\w.\-/]+)\s*=\s*(.*)$/.exec(l);
      if (!m) {
        lineDiag(res.diagnostics, i, raw.length, `not a 'key = value' line: ${clip(l, 80)}`);
        continue;
      }
      const key = m[1]!.replace(/\//g, '.');
      if (SYSCTL_KEYS.test(key)) res.sysctls.set(key, { value: m[2]!.trim(), from: at } as SysctlValue);
    } else if (kind === 'ip-addr') {
      const head = /^(\d+):\s+([^:\s@]+)(?:@\S+)?:\s+<([^>]*)>/.exec(l);
      if (head) {
        const itf: NodeInterface = {
          index: Number(head[1]),
          name: head[2]!,
          up: head[3]!.split(',').includes('UP'),
          kind: null,
          addrs: [],
          from: at,
        };
        current = { itf, addrs: itf.addrs as NodeAddress[] };
        res.interfaces.push(itf);
        continue;
      }
      const am = /^(inet6?)\s+(\S+)(?:\s+peer\s+(\S+))?(.*)$/.exec(l);
      if (!am) continue; // link/ether, valid_lft, altname, -d details: not addresses
      if (!current) {
        lineDiag(res.diagnostics, i, raw.length, 'an address before any interface line; skipped');
        continue;
      }
      const fam = am[1] === 'inet' ? 4 : 6;
      const [a, p] = am[2]!.split('/');
      const peerPrefix = am[3]?.split('/')[1];
      const addr = parseAddr(a ?? '');
      const prefixlen = Number(p ?? peerPrefix ?? (fam === 4 ? 32 : 128));
      if (
        !addr ||
        addr.v !== fam ||
        !Number.isInteger(prefixlen) ||
        prefixlen < 0 ||
        prefixlen > (fam === 4 ? 32 : 128)
      ) {
        lineDiag(res.diagnostics, i, raw.length, `'${clip(am[2]!, 60)}' is not an IPv${fam} address; skipped`);
        continue;
      }
      const rest = am[4]!.split(/\s+/);
      const scopeAt = rest.indexOf('scope');
      current.addrs.push({
        family: fam,
        local: a!,
        prefixlen,
        scope: scopeOf(scopeAt >= 0 ? rest[scopeAt + 1] : undefined, 'global'),
        secondary: rest.includes('secondary'),
        noprefixroute: rest.includes('noprefixroute'),
        from: at,
      });
    } else if (kind === 'ip-route') {
      if (/^nexthop\b/.test(l)) {
        // Multipath: the first nexthop stands for the route, as in the JSON reader.
        if (lastRoute && !lastRoute.dev) {
          const w = l.split(/\s+/);
          const dev = w[w.indexOf('dev') + 1];
          const via = w.indexOf('via') >= 0 ? w[w.indexOf('via') + 1] : undefined;
          res.routes[res.routes.length - 1] = {
            ...lastRoute,
            dev: dev ?? null,
            gateway: via && parseAddr(via) ? via : null,
          };
          lastRoute = res.routes[res.routes.length - 1]!;
        }
        continue;
      }
      const r = readRouteLine(l, at);
      if (typeof r === 'string') lineDiag(res.diagnostics, i, raw.length, r);
      else {
        res.routes.push(r);
        lastRoute = r;
      }
    } else if (kind === 'ip-rule') {
      const r = readRuleLine(l, at);
      if (typeof r === 'string') lineDiag(res.diagnostics, i, raw.length, r);
      else res.rules.push(r);
    }
  }
  return res;
}

function familyOfWords(words: readonly string[]): 4 | 6 | null {
  for (const w of words) {
    const a = parseAddr(w.split('/')[0] ?? '');
    if (a) return a.v;
  }
  return null;
}

function readRouteLine(l: string, at: { file: string; line: number }): NodeRoute | string {
  const w = l.split(/\s+/);
  let i = 0;
  let type: RouteType = 'unicast';
  if (ROUTE_TYPES.has(w[0]!)) type = w[i++] as RouteType;
  const dstText = w[i++];
  const fam = familyOfWords(w.filter(x => x !== 'default')) ?? 4;
  const dst = dstText ? routeDst(dstText, fam) : null;
  if (!dst) return `route destination '${clip(String(dstText), 60)}' is not a network; skipped`;
  const val = (k: string): string | null => {
    const j = w.indexOf(k, i);
    return j >= 0 ? (w[j + 1] ?? null) : null;
  };
  let via = val('via');
  if (via === 'inet' || via === 'inet6') via = w[w.indexOf('via') + 2] ?? null;
  const metric = Number(val('metric') ?? 0);
  return {
    family: fam,
    table: val('table') ?? 'main',
    type,
    dst,
    dev: val('dev'),
    gateway: via && parseAddr(via) ? via : null,
    prefsrc: val('src'),
    metric: Number.isFinite(metric) ? metric : 0,
    scope: scopeOf(val('scope') ?? undefined, type === 'local' ? 'host' : via ? 'global' : 'link'),
    from: at,
  };
}

function readRuleLine(l: string, at: { file: string; line: number }): NodeRule | string {
  const m = /^(\d+):\s+(.*)$/.exec(l);
  if (!m) return `not an 'ip rule' line: ${clip(l, 80)}`;
  const w = m[2]!.split(/\s+/);
  const val = (k: string): string | null => {
    const j = w.indexOf(k);
    return j >= 0 ? (w[j + 1] ?? null) : null;
  };
  const fam = familyOfWords(w) ?? 4;
  const net = (k: string): string | null => {
    const v = val(k);
    return !v || v === 'all' ? null : routeDst(v, fam);
  };
  const mark = val('fwmark');
  const [mv, mm] = (mark ?? '').split('/');
  const table = val('lookup') ?? val('table');
  const action: NodeRule['action'] = w.includes('blackhole')
    ? 'blackhole'
    : w.includes('unreachable')
      ? 'unreachable'
      : w.includes('prohibit')
        ? 'prohibit'
        : w.includes('goto')
          ? 'goto'
          : w.includes('nop')
            ? 'nop'
            : 'lookup';
  const sup = val('suppress_prefixlength');
  return {
    family: fam,
    priority: Number(m[1]),
    not: w[0] === 'not',
    src: net('from'),
    dst: net('to'),
    fwmark: mark ? Number(mv) >>> 0 : null,
    fwmask: mm ? Number(mm) >>> 0 : 0xffffffff,
    iif: val('iif'),
    oif: val('oif'),
    action,
    table,
    suppressPrefixlen: sup === null ? null : Number(sup),
    from: at,
  };
}
