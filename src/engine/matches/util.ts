/** Shared option-value parsers for match modules: ports, port ranges, marks, comma lists. */
import type { CompileContext, ParsedOption } from './types.ts';

export interface PortRange {
  readonly from: number;
  readonly to: number;
}

/** Service names iptables resolves through /etc/services for the common cases seen in hand-written rules. */
const SERVICES = new Map<string, number>([
  ['ftp', 21],
  ['ssh', 22],
  ['telnet', 23],
  ['smtp', 25],
  ['domain', 53],
  ['dns', 53],
  ['bootps', 67],
  ['bootpc', 68],
  ['tftp', 69],
  ['http', 80],
  ['www', 80],
  ['kerberos', 88],
  ['pop3', 110],
  ['ntp', 123],
  ['imap', 143],
  ['snmp', 161],
  ['ldap', 389],
  ['https', 443],
  ['smtps', 465],
  ['submission', 587],
  ['ldaps', 636],
  ['imaps', 993],
  ['pop3s', 995],
  ['openvpn', 1194],
  ['mysql', 3306],
  ['postgresql', 5432],
  ['http-alt', 8080],
  ['bgp', 179],
  ['syslog', 514],
  ['isakmp', 500],
  ['ipsec-nat-t', 4500],
  ['diameter', 3868],
]);

export function parsePort(text: string): number | null {
  if (/^\d{1,5}$/.test(text)) {
    const n = Number(text);
    return n <= 65535 ? n : null;
  }
  // A Map: in an object, `--dport constructor` found Object.prototype's and passed as a port.
  return SERVICES.get(text.toLowerCase()) ?? null;
}

/** `80`, `80:90`, `:1024`, `1024:` (iptables fills the open end with 0 / 65535; `libxt_tcp.c`). */
export function parsePortRange(text: string): PortRange | null {
  const colon = text.indexOf(':');
  if (colon < 0) {
    const p = parsePort(text);
    return p === null ? null : { from: p, to: p };
  }
  const a = colon === 0 ? 0 : parsePort(text.slice(0, colon));
  const b = colon === text.length - 1 ? 65535 : parsePort(text.slice(colon + 1));
  if (a === null || b === null) return null;
  // iptables swaps a reversed range rather than refusing it.
  return a <= b ? { from: a, to: b } : { from: b, to: a };
}

export function formatPortRange(r: PortRange): string {
  return r.from === r.to ? String(r.from) : `${r.from}:${r.to}`;
}

export function inPortRange(r: PortRange, port: number): boolean {
  return port >= r.from && port <= r.to;
}

/** `value[/mask]` with hex or decimal numbers, as the mark and connmark modules take them. */
export function parseMarkMask(text: string): { value: number; mask: number } | null {
  const slash = text.indexOf('/');
  const v = parseU32(slash < 0 ? text : text.slice(0, slash));
  const m = slash < 0 ? 0xffffffff : parseU32(text.slice(slash + 1));
  if (v === null || m === null) return null;
  return { value: v, mask: m };
}

export function parseU32(text: string): number | null {
  if (!/^(0x[0-9a-fA-F]{1,8}|\d{1,10})$/.test(text)) return null;
  const n = Number(text);
  return n <= 0xffffffff ? n >>> 0 : null;
}

export function hex(n: number): string {
  return `0x${(n >>> 0).toString(16)}`;
}

export function formatMarkMask(v: { value: number; mask: number }): string {
  return v.mask === 0xffffffff ? hex(v.value) : `${hex(v.value)}/${hex(v.mask)}`;
}

export function firstArg(opt: ParsedOption, ctx: CompileContext): string {
  const a = opt.args[0];
  if (a === undefined) {
    ctx.report(opt, 'missing-argument', `${opt.name} needs a value`);
    return '';
  }
  return a;
}

export function not(negated: boolean): string {
  return negated ? '! ' : '';
}
