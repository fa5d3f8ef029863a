/**
 * What a caller says about a packet, in text (`tcp 172.18.0.100:40000 -> 172.18.255.200:80 in=eth0`) or as
 * a JSON object (`{"protocol":"tcp","src":…,"dport":80}`), and the initial packet state built from it.
 * Unstated fields take documented defaults: connection state NEW, TCP flags SYN for a new TCP connection
 * (ACK otherwise), ICMP echo-request, source port 40000, mark 0.
 */
import { type Addr, type Family, parseAddr } from '../net/addr.ts';
import { parseTcpFlags } from '../matches/tcp.ts';
import { icmpTypeByName } from '../matches/icmp.ts';
import { parseU32 } from '../matches/util.ts';
import { hasPorts, protoNumber } from '../net/proto.ts';
import type { CtState, PacketState } from '../net/packet.ts';

export interface PacketInput {
  readonly protocol: string;
  readonly src?: string;
  readonly sport?: number;
  readonly dst: string;
  readonly dport?: number;
  /** Where the packet comes from: `outside` (arrives on an interface), `local` (a node process), `auto`. */
  readonly from?: 'auto' | 'outside' | 'local' | 'ext' | 'pod';
  /** Incoming interface for outside packets (default: the node's uplink). */
  readonly in?: string;
  readonly icmpType?: number | string;
  readonly icmpCode?: number;
  readonly tcpFlags?: string;
  readonly mark?: number | string;
  readonly ctstate?: CtState;
  /**
   * The conntrack helper of the master of the packet's connection (`-m helper`): `ftp` for an FTP data
   * connection the ftp helper expected, `none` for a connection no helper expected. Unstated: known only
   * for NEW, INVALID and UNTRACKED packets (no master), unknown for RELATED and ESTABLISHED ones.
   */
  readonly helper?: string;
  readonly length?: number;
  readonly ttl?: number;
  readonly uid?: number;
  readonly gid?: number;
  readonly physIn?: string;
  readonly physOut?: string;
  readonly name?: string;
}

export const DEFAULT_SPORT = 40000;

export type PacketParse = { ok: true; input: PacketInput } | { ok: false; error: string };

function hostPort(text: string): { addr: string; port?: number } | null {
  const br = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  if (br) return br[2] !== undefined ? { addr: br[1]!, port: Number(br[2]) } : { addr: br[1]! };
  const colons = text.split(':').length - 1;
  if (colons === 1) {
    const [a, p] = text.split(':');
    if (!/^\d+$/.test(p ?? '')) return null;
    return { addr: a!, port: Number(p) };
  }
  return { addr: text };
}

/** Parses `<proto> <src>[:<sport>] -> <dst>[:<dport>] [key=value…]`; src may be omitted for local packets. */
export function parsePacketText(text: string): PacketParse {
  const m = /^\s*(\S+)\s+(?:(\S+)\s*->\s*)?(\S+)((?:\s+\S+=\S+)*)\s*$/.exec(text.replace(/→/g, '->'));
  if (!m)
    return {
      ok: false,
      error: `cannot read packet '${text}': expected "<proto> <src>[:<sport>] -> <dst>[:<dport>]", e.g. "tcp 10.0.0.1 -> 10.96.0.10:53"`,
    };
  const [, proto, srcText, dstText, extra] = m;
  const src = srcText ? hostPort(srcText) : null;
  const dst = hostPort(dstText!);
  if ((srcText && !src) || !dst) return { ok: false, error: `cannot read the addresses in '${text}'` };
  const input: Record<string, unknown> = { protocol: proto!.toLowerCase(), dst: dst.addr };
  if (src) {
    input.src = src.addr;
    if (src.port !== undefined) input.sport = src.port;
  }
  if (dst.port !== undefined) input.dport = dst.port;
  for (const kv of (extra ?? '').trim().split(/\s+/).filter(Boolean)) {
    const [k, v] = kv.split('=') as [string, string];
    const key = {
      in: 'in',
      from: 'from',
      mark: 'mark',
      state: 'ctstate',
      ctstate: 'ctstate',
      flags: 'tcpFlags',
      type: 'icmpType',
      code: 'icmpCode',
      length: 'length',
      ttl: 'ttl',
      uid: 'uid',
      gid: 'gid',
      physin: 'physIn',
      physout: 'physOut',
      helper: 'helper',
    }[k.toLowerCase()];
    if (!key)
      return {
        ok: false,
        error: `unknown packet field '${k}' in '${text}' (in, from, mark, state, flags, type, code, length, ttl, uid, gid, physin, physout, helper)`,
      };
    input[key] = ['icmpCode', 'length', 'ttl', 'uid', 'gid'].includes(key)
      ? Number(v)
      : key === 'ctstate'
        ? v.toUpperCase()
        : v;
  }
  return { ok: true, input: input as unknown as PacketInput };
}

/** Validates a JSON probe object (one line of `--packets`). */
export function packetFromJson(obj: unknown): PacketParse {
  if (typeof obj !== 'object' || obj === null) return { ok: false, error: 'a packet must be a JSON object' };
  const o = obj as Record<string, unknown>;
  const protocol = (o.protocol ?? o.proto) as unknown;
  if (typeof protocol !== 'string') return { ok: false, error: `packet needs "protocol" (tcp, udp, icmp, sctp, …)` };
  if (typeof o.dst !== 'string') return { ok: false, error: `packet needs "dst"` };
  for (const k of ['sport', 'dport', 'icmpCode', 'length', 'ttl', 'uid', 'gid']) {
    if (o[k] !== undefined && typeof o[k] !== 'number')
      return { ok: false, error: `packet field "${k}" must be a number` };
  }
  if (o.helper !== undefined && typeof o.helper !== 'string')
    return { ok: false, error: 'packet field "helper" must be a string (a helper name or "none")' };
  const input: Record<string, unknown> = { ...o, protocol: protocol.toLowerCase() };
  if (o.icmp_type !== undefined && o.icmpType === undefined) input.icmpType = o.icmp_type;
  return { ok: true, input: input as unknown as PacketInput };
}

/**
 * Conntrack's view of a packet nobody said more about: ICMP queries start connections, but an unsolicited
 * ICMP reply or error has no connection to belong to and is INVALID (nf_conntrack_proto_icmp.c,
 * `icmp_new` / `icmp_error`); everything else is NEW.
 */
function defaultState(proto: number, icmpType: number | string | undefined): CtState {
  if (proto !== 1 && proto !== 58) return 'NEW';
  const t = icmpType ?? (proto === 1 ? 8 : 128);
  const num = typeof t === 'number' ? t : (icmpTypeByName(t, proto === 58)?.[0] ?? -1);
  const queries = proto === 1 ? [8, 13, 15, 17] : [128, 130, 131, 132, 133, 134, 135, 136, 137, 143];
  return queries.includes(num) ? 'NEW' : 'INVALID';
}

/**
 * The helper of the connection's master. Only an expected connection has a master, and its packets are
 * RELATED (the first) or ESTABLISHED (nf_conntrack_core.c `init_conntrack` sets `ct->master` from the
 * expectation and the packet is IP_CT_RELATED); a NEW packet's connection has none, an INVALID or UNTRACKED
 * packet no connection at all.
 */
function helperMaster(state: CtState, stated: string | undefined): string | null | { ok: false; error: string } {
  const none = stated === undefined || stated === '' || stated.toLowerCase() === 'none';
  if (state === 'NEW' || state === 'INVALID' || state === 'UNTRACKED') {
    if (!none)
      return {
        ok: false,
        error: `helper=${stated}: only a RELATED or ESTABLISHED packet belongs to a connection a helper expected (a ${state} packet's connection has no master)`,
      };
    return '';
  }
  return stated === undefined ? null : none ? '' : stated;
}

export type BuiltPacket = { ok: true; pkt: PacketState; from: 'outside' | 'local' } | { ok: false; error: string };

/** `node` or `node(eth0)`: the node's own address, whatever it is (the symbolic one when none is known). */
const NODE_WORD = /^node(?:\([^)]*\))?$/i;

export function buildPacket(
  input: PacketInput,
  family: Family | null,
  nodeAddr: (f: Family) => Addr | null,
  isLocal: (a: Addr) => boolean,
): BuiltPacket {
  const proto = protoNumber(input.protocol === 'icmpv6' ? 'ipv6-icmp' : input.protocol);
  if (proto === null) return { ok: false, error: `'${input.protocol}' is not a protocol` };
  // The family of a packet written with `node` comes from its other address, else the ruleset's.
  const other = [input.src, input.dst].map(t => (t && !NODE_WORD.test(t) ? parseAddr(t) : null)).find(a => a) ?? null;
  const fam: Family = other?.v ?? family ?? 4;
  const read = (t: string): Addr | null => (NODE_WORD.test(t) ? nodeAddr(fam) : parseAddr(t));
  const dst = read(input.dst);
  if (!dst) return { ok: false, error: `'${input.dst}' is not an IP address` };
  if (family !== null && dst.v !== family)
    return { ok: false, error: `${input.dst} is IPv${dst.v} but the ruleset is IPv${family}` };
  let src: Addr | null = input.src ? read(input.src) : null;
  if (input.src && !src) return { ok: false, error: `'${input.src}' is not an IP address` };
  if (src && src.v !== dst.v)
    return { ok: false, error: `source ${input.src} and destination ${input.dst} are of different families` };
  const fromRaw = input.from ?? 'auto';
  let from: 'outside' | 'local';
  if (fromRaw === 'local') from = 'local';
  else if (fromRaw === 'outside' || fromRaw === 'ext' || fromRaw === 'pod') from = 'outside';
  else from = !src || isLocal(src) ? 'local' : 'outside';
  if (!src) {
    src = nodeAddr(dst.v);
    if (!src)
      return {
        ok: false,
        error: `the packet has no source address and the node has no IPv${dst.v} address (give --node-ip or a source)`,
      };
  }
  const ctstate: CtState = input.ctstate ?? defaultState(proto, input.icmpType);
  if (!['NEW', 'ESTABLISHED', 'RELATED', 'INVALID', 'UNTRACKED'].includes(ctstate))
    return {
      ok: false,
      error: `'${ctstate}' is not a connection state (NEW, ESTABLISHED, RELATED, INVALID, UNTRACKED)`,
    };
  const masterHelper = helperMaster(ctstate, input.helper);
  if (typeof masterHelper === 'object' && masterHelper !== null) return masterHelper;
  const ports = hasPorts(proto);
  const sport = ports ? (input.sport ?? DEFAULT_SPORT) : null;
  const dport = ports ? (input.dport ?? null) : null;
  if (ports && dport === null)
    return { ok: false, error: `a ${input.protocol} packet needs a destination port (dst:port)` };
  for (const [k, v] of [
    ['sport', sport],
    ['dport', dport],
  ] as const) {
    if (v !== null && (!Number.isInteger(v) || v < 0 || v > 65535))
      return { ok: false, error: `${k} ${v} is not a port (0-65535)` };
  }
  let tcpFlags: number | null = null;
  if (proto === 6) {
    tcpFlags = input.tcpFlags ? parseTcpFlags(input.tcpFlags) : ctstate === 'NEW' ? 2 : 16;
    if (tcpFlags === null) return { ok: false, error: `'${input.tcpFlags}' is not a TCP flag list (SYN,ACK,…)` };
  }
  let icmpType: number | null = null;
  let icmpCode: number | null = null;
  if (proto === 1 || proto === 58) {
    const t = input.icmpType ?? (proto === 1 ? 8 : 128);
    const code = typeof t === 'number' ? ([t, 0, 0] as const) : icmpTypeByName(t, proto === 58);
    if (!code) return { ok: false, error: `'${t}' is not an ICMP type` };
    icmpType = code[0];
    icmpCode = input.icmpCode ?? code[1];
  }
  let mark = 0;
  if (input.mark !== undefined) {
    const m = typeof input.mark === 'number' ? input.mark >>> 0 : parseU32(input.mark);
    if (m === null) return { ok: false, error: `'${input.mark}' is not a mark` };
    mark = m;
  }
  const established = ctstate === 'ESTABLISHED' || ctstate === 'RELATED';
  const pkt: PacketState = {
    family: dst.v,
    proto,
    src,
    dst,
    sport,
    dport,
    tcpFlags,
    icmpType,
    icmpCode,
    length: input.length ?? null,
    ttl: input.ttl ?? null,
    fragment: false,
    inIface: null,
    outIface: null,
    physIn: input.physIn ?? null,
    physOut: input.physOut ?? null,
    mark,
    ct: {
      state: ctstate,
      origSrc: src,
      origDst: dst,
      origSport: sport,
      origDport: dport,
      dnat: null,
      snat: null,
      status: new Set(established ? ['SEEN_REPLY', 'ASSURED', 'CONFIRMED'] : []),
      mark: 0,
      masterHelper,
      dstManipDone: ctstate !== 'NEW',
      srcManipDone: ctstate !== 'NEW',
    },
    uid: input.uid ?? null,
    gid: input.gid ?? null,
    sctpChunk: proto === 132 ? (ctstate === 'NEW' ? 1 : 0) : null,
  };
  return { ok: true, pkt, from };
}

export function describePacketInput(i: PacketInput): string {
  const host = (a: string | undefined, p: number | undefined) =>
    a === undefined ? '' : a.includes(':') && p !== undefined ? `[${a}]:${p}` : p !== undefined ? `${a}:${p}` : a;
  return `${i.protocol} ${i.src ? `${host(i.src, i.sport)} -> ` : ''}${host(i.dst, i.dport)}`;
}
