/**
 * Address translation targets of the nat table (`xt_nat.c`, `xt_MASQUERADE.c`, `xt_REDIRECT.c`,
 * `xt_NETMAP.c`). They bind a NAT for the connection and end the nat table's traversal with ACCEPT; later
 * packets of the connection are translated by conntrack without walking the table.
 */
import { type Addr, type Net, decimal, formatAddr, parseAddr, parseNet } from '../net/addr.ts';
import type { EvalEnv } from '../matches/env.ts';
import type { PacketState } from '../net/packet.ts';
import { hasPorts } from '../net/proto.ts';
import type { CompileContext, ParsedOption } from '../matches/types.ts';
import { ACCEPT, defineTarget } from './types.ts';
import { type Write, lastArg, portList } from '../matches/knowledge.ts';
import { addrValue } from '../net/span.ts';

export interface NatRange {
  readonly from: Addr | null;
  readonly to: Addr | null;
  readonly portFrom: number | null;
  readonly portTo: number | null;
  readonly text: string;
}

/** The number written with 1 to 5 decimal digits in text[from, to), or -1. */
const digits = (text: string, from: number, to: number): number => decimal(text, from, to, 5);

/** `[addr[-addr]][:port[-port]]`, IPv6 addresses in brackets when a port follows (`libxt_DNAT.c`). */
export function parseNatRange(text: string): NatRange | null {
  let addrPart = text;
  let portPart: string | null = null;
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    if (close < 0) return null;
    addrPart = text.slice(1, close);
    const rest = text.slice(close + 1);
    if (rest.startsWith(':')) portPart = rest.slice(1);
    else if (rest !== '') return null;
  } else {
    const c = text.indexOf(':');
    if (c >= 0 && text.indexOf(':', c + 1) < 0) {
      // Exactly one colon: addr:port (an IPv6 address without brackets has several).
      addrPart = text.slice(0, c);
      portPart = text.slice(c + 1);
    }
  }
  let from: Addr | null = null;
  let to: Addr | null = null;
  if (addrPart !== '') {
    const dash = addrPart.indexOf('-');
    from = parseAddr(dash < 0 ? addrPart : addrPart.slice(0, dash));
    to = dash < 0 ? from : parseAddr(addrPart.slice(dash + 1));
    if (!from || !to || from.v !== to.v) return null;
  }
  let portFrom: number | null = null;
  let portTo: number | null = null;
  if (portPart !== null) {
    // port[-port], each of 1 to 5 digits.
    const dash = portPart.indexOf('-');
    portFrom = digits(portPart, 0, dash < 0 ? portPart.length : dash);
    portTo = dash < 0 ? portFrom : digits(portPart, dash + 1, portPart.length);
    if (portFrom < 0 || portTo < 0) return null;
    if (portFrom > 65535 || portTo > 65535 || portFrom > portTo) return null;
  }
  if (!from && portFrom === null) return null;
  return { from, to, portFrom, portTo, text };
}

function rangeOpt(
  opts: readonly ParsedOption[],
  name: string,
  ctx: CompileContext,
  required: boolean,
): NatRange | null {
  const o = opts.find(x => x.name === name);
  if (!o) {
    if (required) ctx.report(null, 'missing-argument', `${name} is required`);
    return null;
  }
  const r = parseNatRange(o.args[0] ?? '');
  if (!r)
    ctx.report(o, 'bad-address', `'${o.args[0] ?? ''}' is not a NAT address (addr[-addr][:port[-port]], [v6]:port)`);
  else if (r.from && r.from.v !== ctx.family)
    ctx.report(o, 'bad-address', `'${o.args[0]}' is IPv${r.from.v} in an IPv${ctx.family} ruleset`);
  return r;
}

function note(r: NatRange): string | undefined {
  const multiAddr = r.from && r.to && r.from.n !== r.to.n;
  const multiPort = r.portFrom !== null && r.portFrom !== r.portTo;
  if (!multiAddr && !multiPort) return undefined;
  return `${r.text} is a range: the kernel picks one member per connection by hashing it; the trace shows the first`;
}

function portPart(pkt: PacketState, port: number | null): string {
  return port !== null && hasPorts(pkt.proto) ? `:${port}` : '';
}

function hostPort(a: Addr, port: number | null, pkt: PacketState): string {
  const p = portPart(pkt, port);
  return a.v === 6 && p ? `[${formatAddr(a)}]${p}` : `${formatAddr(a)}${p}`;
}

interface DnatSpec {
  readonly range: NatRange | null;
  readonly random: boolean;
}

/** What a DNAT/SNAT rule writes: the address interval and port range of `--to-destination`/`--to-source`. */
function natWrite(field: 'dst' | 'src', text: string | undefined): Write {
  const r = text ? parseNatRange(text) : null;
  const to = r?.from && r.to ? { lo: addrValue(r.from), hi: addrValue(r.to) } : null;
  const ports = r && r.portFrom !== null && r.portTo !== null ? { lo: BigInt(r.portFrom), hi: BigInt(r.portTo) } : null;
  return { field, to, ports };
}

export function applyDnat(pkt: PacketState, addr: Addr | null, port: number | null): void {
  if (addr) pkt.dst = addr;
  if (port !== null && hasPorts(pkt.proto)) pkt.dport = port;
  pkt.ct.dnat = { addr: pkt.dst, port: pkt.dport };
  pkt.ct.dstManipDone = true;
}

export function applySnat(pkt: PacketState, addr: Addr | null, port: number | null): void {
  if (addr) pkt.src = addr;
  if (port !== null && hasPorts(pkt.proto)) pkt.sport = port;
  pkt.ct.snat = { addr: pkt.src, port: pkt.sport };
  pkt.ct.srcManipDone = true;
}

export const dnatTarget = defineTarget<DnatSpec>({
  name: 'DNAT',
  tables: ['nat'],
  hooks: ['PREROUTING', 'OUTPUT'],
  options: [
    { name: '--to-destination', aliases: ['--to'], args: 1 },
    { name: '--random', args: 0 },
    { name: '--persistent', args: 0 },
  ],
  compile: (opts, ctx) => ({
    range: rangeOpt(opts, '--to-destination', ctx, true),
    random: opts.some(o => o.name === '--random'),
  }),
  apply(spec, pkt) {
    const r = spec.range;
    applyDnat(pkt, r?.from ?? null, r?.portFrom ?? null);
    const n = r ? note(r) : undefined;
    return { effect: ACCEPT, text: `DNAT → ${hostPort(pkt.dst, pkt.dport, pkt)}`, ...(n ? { note: n } : {}) };
  },
  describe: spec => `rewrite the destination to ${spec.range?.text ?? '?'} (DNAT)`,
  diffWrites: (_spec, options) => [natWrite('dst', lastArg(options, '--to-destination'))],
  lintEffect: 'terminates',
});

interface SnatSpec {
  readonly range: NatRange | null;
  readonly flags: string;
}

export const snatTarget = defineTarget<SnatSpec>({
  name: 'SNAT',
  tables: ['nat'],
  hooks: ['POSTROUTING', 'INPUT'],
  options: [
    { name: '--to-source', aliases: ['--to'], args: 1 },
    { name: '--random', args: 0 },
    { name: '--random-fully', args: 0 },
    { name: '--persistent', args: 0 },
  ],
  compile: (opts, ctx) => ({
    range: rangeOpt(opts, '--to-source', ctx, true),
    flags: opts
      .filter(o => o.args.length === 0)
      .map(o => o.name)
      .join(' '),
  }),
  apply(spec, pkt) {
    const r = spec.range;
    applySnat(pkt, r?.from ?? null, r?.portFrom ?? null);
    const n = r ? note(r) : undefined;
    return { effect: ACCEPT, text: `SNAT → ${hostPort(pkt.src, r?.portFrom ?? null, pkt)}`, ...(n ? { note: n } : {}) };
  },
  describe: spec => `rewrite the source to ${spec.range?.text ?? '?'} (SNAT)`,
  diffWrites: (_spec, options) => [natWrite('src', lastArg(options, '--to-source'))],
  lintEffect: 'terminates',
});

interface MasqSpec {
  readonly ports: { from: number; to: number } | null;
  readonly randomFully: boolean;
  readonly random: boolean;
}

function portsOpt(opts: readonly ParsedOption[], ctx: CompileContext): { from: number; to: number } | null {
  const o = opts.find(x => x.name === '--to-ports');
  if (!o) return null;
  const m = /^(\d{1,5})(?:[-:](\d{1,5}))?$/.exec(o.args[0] ?? '');
  if (!m || Number(m[1]) > 65535 || Number(m[2] ?? m[1]) > 65535) {
    ctx.report(o, 'bad-port', `'${o.args[0] ?? ''}' is not a port or port range`);
    return null;
  }
  return { from: Number(m[1]), to: Number(m[2] ?? m[1]) };
}

export const masqueradeTarget = defineTarget<MasqSpec>({
  name: 'MASQUERADE',
  tables: ['nat'],
  hooks: ['POSTROUTING'],
  options: [
    { name: '--to-ports', args: 1 },
    { name: '--random', args: 0 },
    { name: '--random-fully', args: 0 },
  ],
  compile: (opts, ctx) => ({
    ports: portsOpt(opts, ctx),
    randomFully: opts.some(o => o.name === '--random-fully'),
    random: opts.some(o => o.name === '--random'),
  }),
  apply(spec, pkt, env: EvalEnv) {
    // MASQUERADE takes the address the outgoing interface would use (`inet_select_addr`).
    // Without node configuration the node still has an address, only not a known one: the symbolic
    // stand-in (node.ts), so a missing setting never reads as the kernel's "cannot masquerade" drop.
    const src = env.node.masqueradeSource(pkt.outIface ?? env.node.uplink, pkt.family, pkt);
    if (!src)
      return {
        effect: { kind: 'drop' },
        text: 'MASQUERADE failed: the outgoing interface has no address',
        note: 'the kernel drops a packet it cannot masquerade',
      };
    applySnat(pkt, src, spec.ports?.from ?? null);
    const portNote = spec.randomFully ? ' (source port randomized, --random-fully)' : '';
    const symbolic = env.node.isSymbolicAddr(src);
    return {
      effect: ACCEPT,
      text: `MASQUERADE → ${env.node.show(src)}${portNote}`,
      ...(symbolic
        ? {
            note: `masqueraded to the node's address on ${env.node.uplink}, which no setting gives (pass --node-ip or set packetlens.node.addresses to see it)`,
          }
        : {}),
    };
  },
  describe: spec =>
    `rewrite the source to the outgoing interface's address (MASQUERADE${spec.randomFully ? ', random source port' : ''})`,
  // The address is the outgoing interface's, known only on the path.
  diffWrites: () => [{ field: 'src', to: null, ports: null }],
  lintEffect: 'terminates',
});

export const redirectTarget = defineTarget<{ ports: { from: number; to: number } | null }>({
  name: 'REDIRECT',
  tables: ['nat'],
  hooks: ['PREROUTING', 'OUTPUT'],
  options: [
    { name: '--to-ports', args: 1 },
    { name: '--random', args: 0 },
  ],
  compile: (opts, ctx) => ({ ports: portsOpt(opts, ctx) }),
  apply(spec, pkt, env) {
    // Locally generated packets go to loopback; received ones to the first address of the incoming interface.
    const addr =
      env.hook === 'OUTPUT'
        ? pkt.family === 4
          ? { v: 4 as const, n: 0x7f000001 }
          : { v: 6 as const, n: 1n }
        : env.node.sourceFor(pkt.inIface ?? env.node.uplink, pkt.family);
    if (!addr) return { effect: { kind: 'drop' }, text: 'REDIRECT failed: the incoming interface has no address' };
    applyDnat(pkt, addr, spec.ports?.from ?? null);
    const shown = env.node.isSymbolicAddr(pkt.dst)
      ? `${env.node.show(pkt.dst)}${portPart(pkt, pkt.dport)}`
      : hostPort(pkt.dst, pkt.dport, pkt);
    return { effect: ACCEPT, text: `REDIRECT → ${shown}` };
  },
  describe: spec => `redirect to this node${spec.ports ? ` port ${spec.ports.from}` : ''} (REDIRECT)`,
  diffWrites: (_spec, options) => {
    const p = lastArg(options, '--to-ports');
    return [{ field: 'dst', to: null, ports: p ? (portList(p)[0] ?? null) : null }];
  },
  lintEffect: 'terminates',
});

export const netmapTarget = defineTarget<{ net: Net | null; text: string }>({
  name: 'NETMAP',
  tables: ['nat'],
  options: [{ name: '--to', args: 1 }],
  compile(opts, ctx) {
    const o = opts.find(x => x.name === '--to');
    const net = o ? parseNet(o.args[0] ?? '') : null;
    if (!net) ctx.report(o ?? null, 'bad-address', `NETMAP needs --to address/mask`);
    return { net, text: o?.args[0] ?? '' };
  },
  apply(spec, pkt, env) {
    if (!spec.net) return { effect: ACCEPT, text: 'NETMAP (no mapping)' };
    const dst = env.hook === 'PREROUTING' || env.hook === 'OUTPUT';
    const a = dst ? pkt.dst : pkt.src;
    let mapped: Addr;
    if (spec.net.v === 4 && a.v === 4) mapped = { v: 4, n: ((a.n & ~spec.net.mask) | spec.net.n) >>> 0 };
    else if (spec.net.v === 6 && a.v === 6) mapped = { v: 6, n: (a.n & ~spec.net.mask) | spec.net.n };
    else return { effect: ACCEPT, text: 'NETMAP (family mismatch)' };
    if (dst) applyDnat(pkt, mapped, null);
    else applySnat(pkt, mapped, null);
    return { effect: ACCEPT, text: `NETMAP → ${formatAddr(mapped)}` };
  },
  describe: spec => `map addresses into ${spec.text} (NETMAP)`,
  // NETMAP maps the destination in PREROUTING/OUTPUT and the source in POSTROUTING/INPUT; a user chain may be
  // reached from either, so both count.
  diffWrites: () => [
    { field: 'dst', to: null, ports: null },
    { field: 'src', to: null, ports: null },
  ],
  lintEffect: 'terminates',
});
