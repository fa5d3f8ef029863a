/**
 * `fib saddr type local`, `fib daddr type`, `fib daddr oif`, `fib saddr . iif oif` (reverse-path checks):
 * net/netfilter/nft_fib.c with nft_fib_ipv4.c / nft_fib_ipv6.c — a route lookup on the node's table. The
 * address type comes from the node model (its addresses, broadcast and multicast ranges); `iif` restricts
 * `type local` to addresses on the input interface (`nft_fib4_eval_type` with NFTA_FIB_F_IIF).
 */
import type { NftFib } from '../ast.ts';
import type { EvalEnv } from '../../matches/env.ts';
import type { PacketState } from '../../net/packet.ts';
import type { ExprOut, LExpr, LowerCtx } from '../../nft-program/program.ts';
import { type DataType, FIB_ADDRTYPE } from '../../nft-program/types.ts';

const RTN: Record<string, number> = { UNSPEC: 0, UNICAST: 1, LOCAL: 2, BROADCAST: 3, MULTICAST: 5 };

/** An output interface name; `missing` is no route (index 0). */
const FIB_OIF: DataType = {
  name: 'ifname',
  bits: 0,
  parse: x => (x === 'missing' ? '' : typeof x === 'string' ? x : null),
  format: x => (x === '' ? 'missing' : `"${String(x)}"`),
};

export function lowerFib(e: NftFib, ctx: LowerCtx): LExpr | null {
  const src = e.flags.includes('saddr');
  const iif = e.flags.includes('iif');
  const text = `fib ${e.flags.join(' . ')} ${e.result}`;
  if (e.flags.includes('mark') || (!src && !e.flags.includes('daddr'))) {
    ctx.report('not-modelled', `${text} is not modelled: rules reading it are undecided in traces`, e.range, 'warning');
    return null;
  }
  const addrOf = (p: PacketState) => (src ? p.src : p.dst);
  if (e.result === 'type') {
    return {
      types: [FIB_ADDRTYPE],
      text,
      // Every class is cut at the node's addresses, loopback, multicast and broadcast (diff/refine.ts).
      facts: iif
        ? [{ kind: 'open', why: `${text} depends on the input interface's addresses` }]
        : [{ kind: 'addrtype', which: src ? 'src' : 'dst' }],
      eval: (p: PacketState, env: EvalEnv): ExprOut => {
        const t = env.node.addrType(addrOf(p), iif ? p.inIface : undefined);
        return { kind: 'value', v: [BigInt(RTN[t] ?? 1)] };
      },
    };
  }
  if (e.result === 'oif' || e.result === 'oifname') {
    return {
      types: [FIB_OIF],
      text,
      facts: [{ kind: 'open', why: `${text} is a route lookup the classes are not cut on` }],
      eval: (p: PacketState, env: EvalEnv): ExprOut => {
        const a = addrOf(p);
        if (env.node.isLocal(a)) return { kind: 'value', v: [iif ? (p.inIface ?? '') : 'lo'] };
        const out = env.node.routeOut(a);
        // With iif (reverse-path filtering) the result is the input interface when the route back leaves by it, else none.
        if (iif) return { kind: 'value', v: [out === p.inIface ? out : ''] };
        return { kind: 'value', v: [out] };
      },
    };
  }
  ctx.report('not-modelled', `${text} is not modelled: rules reading it are undecided in traces`, e.range, 'warning');
  return null;
}
