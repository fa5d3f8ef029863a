/**
 * `dnat to ADDR[:PORT]`, `dnat ip to …` (inet tables), `snat to …`, address and port ranges, map-valued
 * targets (`dnat to ip daddr map { … }`), `masquerade [to :PORTS] [random|fully-random|persistent]`,
 * `redirect [to :PORT]`: net/netfilter/nft_nat.c, nft_masq.c, nft_redir.c. Each binds the connection's
 * translation and sets the rule's verdict to the result of `nf_nat_setup_info` — NF_ACCEPT — so the rule
 * ends the chain with `accept` (the kernel trace shows it so).
 */
import type { NftExpr, NftNat } from '../ast.ts';
import { type Addr, formatAddr } from '../../net/addr.ts';
import { hasPorts } from '../../net/proto.ts';
import { type Rational, ZERO, add, complement, isZero } from '../../rational.ts';
import { applyDnat, applySnat } from '../../targets/nat.ts';
import { lowerExpr } from '../expr/index.ts';
import { lowerMapLookup } from '../expr/map.ts';
import type { Alt, LExpr, Lookup, LowerCtx, Op } from '../../nft-program/program.ts';
import { literalInterval } from '../sets.ts';
import { type DataType, IPV4, IPV6, SERVICE, type Scalar } from '../../nft-program/types.ts';

function toAddr(v: Scalar, six: boolean): Addr {
  return six ? { v: 6, n: v as bigint } : { v: 4, n: Number(v) };
}

type Dest = { addr: Addr | null; port: number | null; range: boolean };

interface Target {
  /** Address and port (several, each with its probability, for a random map key), or why not. */
  eval(
    pkt: Parameters<LExpr['eval']>[0],
    env: Parameters<LExpr['eval']>[1],
  ): Dest | { choice: { p: Rational; label: string; dest: Dest }[] } | { absent: string } | { unknown: string };
  readonly text: string;
  /** A map-valued target: its lookup and full text, for the diff. */
  readonly lookup?: Lookup;
  readonly key?: string;
}

function constant(e: NftExpr | undefined, t: DataType, ctx: LowerCtx): { lo: Scalar; hi: Scalar } | null | undefined {
  if (!e) return undefined;
  const iv = literalInterval(e, t, ctx);
  return iv ? { lo: iv[0], hi: iv[1] } : null;
}

function target(s: NftNat, six: boolean, ctx: LowerCtx): Target | null {
  const at = six ? IPV6 : IPV4;
  if (s.addr && s.addr.kind === 'map') {
    // `dnat to KEY map { k : addr [. port] }`: the data is the address, or address . port.
    const twoParts = s.port === undefined && mapHasPorts(s.addr);
    const m = lowerMapLookup(s.addr, lowerExpr(s.addr.key, ctx), twoParts ? [at, SERVICE] : [at], ctx);
    if (!m) return null;
    const port = constant(s.port, SERVICE, ctx);
    return {
      text: m.text,
      ...(m.lookup ? { lookup: m.lookup } : {}),
      ...(m.key ? { key: m.key } : {}),
      eval(pkt, env) {
        const o = m.eval(pkt, env);
        if (o.kind === 'absent') return { absent: o.why };
        if (o.kind === 'unknown') return { unknown: `${m.text}: ${o.reason}` };
        const dest = (v: readonly Scalar[]): Dest => ({
          addr: toAddr(v[0]!, six),
          port: v[1] !== undefined ? Number(v[1]) : port ? Number(port.lo) : null,
          range: false,
        });
        if (o.kind === 'choice') return { choice: o.options.map(c => ({ p: c.p, label: c.label, dest: dest(c.v) })) };
        return dest(o.v);
      },
    };
  }
  const a = constant(s.addr, at, ctx);
  const p = constant(s.port, SERVICE, ctx);
  if (a === null || p === null) return null;
  const text = `${a ? (a.lo === a.hi ? at.format(a.lo) : `${at.format(a.lo)}-${at.format(a.hi)}`) : ''}${p ? `:${p.lo === p.hi ? String(p.lo) : `${String(p.lo)}-${String(p.hi)}`}` : ''}`;
  const res = {
    addr: a ? toAddr(a.lo, six) : null,
    port: p ? Number(p.lo) : null,
    range: (a !== undefined && a.lo !== a.hi) || (p !== undefined && p.lo !== p.hi),
  };
  return { text, eval: () => res };
}

function mapHasPorts(e: NftExpr): boolean {
  if (e.kind !== 'map') return false;
  const d = e.data;
  if (d.kind !== 'set') return false;
  const first = d.items[0];
  const data =
    first?.kind === 'mapping'
      ? first.data
      : first?.kind === 'elem' && first.value.kind === 'mapping'
        ? first.value.data
        : null;
  return data?.kind === 'concat';
}

/** `show` prints an address: the node's symbolic stand-in by its label (`node(eth0)`), others by digits. */
function hostPort(a: Addr, port: number | null, proto: number, show: (a: Addr) => string = formatAddr): string {
  const p = port !== null && hasPorts(proto) ? `:${port}` : '';
  return a.v === 6 && p ? `[${show(a)}]${p}` : `${show(a)}${p}`;
}

const RANGE_NOTE = 'is a range: the kernel picks one member per connection; the trace shows the first';

export function lowerNat(s: NftNat, ctx: LowerCtx): Op {
  const six = s.family ? s.family === 'ip6' : ctx.family === 'ip6';
  const flags = s.flags.length ? ` ${s.flags.join(' ')}` : '';
  if (s.type === 'masquerade' || s.type === 'redirect') {
    const p = s.port ? literalInterval(s.port, SERVICE, ctx) : undefined;
    const portText = p ? ` to :${p[0] === p[1] ? String(p[0]) : `${String(p[0])}-${String(p[1])}`}` : '';
    const text = `${s.type}${portText}${flags}`;
    const masq = s.type === 'masquerade';
    return {
      text,
      isMatch: false,
      diff: { tests: [] },
      run(pkt, env): Alt[] {
        const port = p ? Number(p[0]) : null;
        // nf_nat_masquerade_ipv4: the address the outgoing interface would use as source (inet_select_addr);
        // nf_nat_redirect_ipv4: locally generated packets go to loopback, others to the input interface's first
        // address. Without an address the kernel drops the packet (NF_DROP).
        const addr = masq
          ? env.node.sourceFor(pkt.outIface ?? env.node.uplink, pkt.family)
          : env.hook === 'OUTPUT'
            ? pkt.family === 4
              ? { v: 4 as const, n: 0x7f000001 }
              : { v: 6 as const, n: 1n }
            : env.node.sourceFor(pkt.inIface ?? env.node.uplink, pkt.family);
        if (!addr)
          return [
            {
              verdict: {
                kind: 'drop',
                reason: `${text}: the ${masq ? 'outgoing' : 'input'} interface has no address, the kernel drops the packet`,
              },
            },
          ];
        return [
          {
            verdict: { kind: 'accept' },
            apply(q, env2, path) {
              if (masq) {
                applySnat(q, addr, port);
                path.masquerade = true;
                return `masquerade → ${env2.node.show(addr)}${s.flags.includes('fully-random') ? ' (source port randomized)' : ''}`;
              }
              applyDnat(q, addr, port);
              return `redirect → ${hostPort(q.dst, q.dport, q.proto, a => env2.node.show(a))}`;
            },
          },
        ];
      },
    };
  }
  const t = target(s, six, ctx);
  const fam = s.family ? ` ${s.family}` : '';
  const text = `${s.type}${fam} to ${t?.text ?? '?'}${flags}`;
  return {
    text,
    ...(t?.key ? { key: `${s.type}${fam} to ${t.key}${flags}` } : {}),
    isMatch: false,
    ...(t ? { diff: { tests: t.lookup ? [t.lookup] : [] } } : {}),
    run(pkt, env): Alt[] {
      if (!t) return [{ verdict: { kind: 'unknown', reason: `${text}: the address could not be read` } }];
      if ((pkt.family === 6) !== six)
        return [
          {
            verdict: {
              kind: 'unknown',
              reason: `${text}: an IPv${six ? 6 : 4} address for an IPv${pkt.family} packet`,
            },
          },
        ];
      const r = t.eval(pkt, env);
      if ('absent' in r) return [{ miss: `${text}: ${r.absent}` }];
      if ('unknown' in r) return [{ verdict: { kind: 'unknown', reason: r.unknown } }];
      const bind = (d: Dest): Alt => ({
        verdict: { kind: 'accept' },
        ...(d.range ? { note: `${text} ${RANGE_NOTE}` } : {}),
        apply(p) {
          if (s.type === 'dnat') {
            applyDnat(p, d.addr, d.port);
            return `dnat → ${hostPort(p.dst, p.dport, p.proto)}`;
          }
          applySnat(p, d.addr, d.port);
          return `snat → ${hostPort(p.src, d.port, p.proto)}`;
        },
      });
      if (!('choice' in r)) return [bind(r)];
      // A random map key (`dnat to numgen random mod 2 map { … }`): one outcome per element, values without one break the rule.
      const alts: Alt[] = r.choice.map(c => ({ ...bind(c.dest), p: c.p, label: c.label }));
      const rest = complement(r.choice.reduce((a, c) => add(a, c.p), ZERO));
      if (!isZero(rest))
        alts.push({
          p: rest,
          label: `${text}: a value with no element`,
          miss: `${text}: no element for the value drawn`,
        });
      return alts;
    },
  };
}
