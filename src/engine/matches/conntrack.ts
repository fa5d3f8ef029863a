/**
 * `-m conntrack` (`xt_conntrack.c`) and `-m state` (`xt_state.c`). States are NEW, ESTABLISHED, RELATED,
 * INVALID, UNTRACKED plus the virtual SNAT / DNAT states: DNAT holds when the original destination differs
 * from the reply source, i.e. once a nat table bound a DNAT for the connection (so in filter FORWARD after
 * nat PREROUTING, not in mangle PREROUTING before it).
 */
import { type Net, addrEquals, formatAddr, formatNet, netContains, parseNet } from '../net/addr.ts';
import type { PacketState } from '../net/packet.ts';
import { protoName, protoNumber } from '../net/proto.ts';
import type { CompileContext, ParsedOption } from './types.ts';
import { defineMatch, unknown } from './types.ts';
import { type MatchFacts, type Neg, optionAtoms, portList } from './knowledge.ts';
import { type Span, netSpan } from '../net/span.ts';
import { type PortRange, firstArg, formatPortRange, inPortRange, not, parsePortRange } from './util.ts';

const STATES = ['INVALID', 'NEW', 'ESTABLISHED', 'RELATED', 'UNTRACKED', 'SNAT', 'DNAT'] as const;
const STATUSES = ['NONE', 'EXPECTED', 'SEEN_REPLY', 'ASSURED', 'CONFIRMED'] as const;

export function packetStates(pkt: PacketState): Set<string> {
  const s = new Set<string>([pkt.ct.state]);
  if (pkt.ct.state !== 'INVALID' && pkt.ct.state !== 'UNTRACKED') {
    if (
      pkt.ct.dnat &&
      !(addrEquals(pkt.ct.dnat.addr, pkt.ct.origDst) && (pkt.ct.dnat.port ?? pkt.ct.origDport) === pkt.ct.origDport)
    )
      s.add('DNAT');
    if (
      pkt.ct.snat &&
      !(addrEquals(pkt.ct.snat.addr, pkt.ct.origSrc) && (pkt.ct.snat.port ?? pkt.ct.origSport) === pkt.ct.origSport)
    )
      s.add('SNAT');
  }
  return s;
}

function parseList<T extends string>(o: ParsedOption, ctx: CompileContext, allowed: readonly T[]): T[] {
  const out: T[] = [];
  for (const item of firstArg(o, ctx).split(',')) {
    const up = item.toUpperCase() as T;
    if (allowed.includes(up)) out.push(up);
    else ctx.report(o, 'bad-argument', `'${item}' is not one of ${allowed.join(', ')}`);
  }
  return out;
}

type Check =
  | { kind: 'state'; negated: boolean; states: string[] }
  | { kind: 'status'; negated: boolean; statuses: string[] }
  | { kind: 'proto'; negated: boolean; proto: number }
  | { kind: 'addr'; negated: boolean; which: 'origsrc' | 'origdst' | 'replsrc' | 'repldst'; net: Net }
  | {
      kind: 'port';
      negated: boolean;
      which: 'origsrcport' | 'origdstport' | 'replsrcport' | 'repldstport';
      range: PortRange;
    }
  | { kind: 'dir'; dir: 'ORIGINAL' | 'REPLY' }
  | { kind: 'expire'; text: string };

interface CtSpec {
  readonly checks: Check[];
}

function replySrc(p: PacketState) {
  return { addr: p.ct.dnat?.addr ?? p.ct.origDst, port: p.ct.dnat?.port ?? p.ct.origDport };
}
function replyDst(p: PacketState) {
  return { addr: p.ct.snat?.addr ?? p.ct.origSrc, port: p.ct.snat?.port ?? p.ct.origSport };
}

function evalCheck(c: Check, pkt: PacketState): boolean | 'unknown' {
  const noCt = pkt.ct.state === 'INVALID' || pkt.ct.state === 'UNTRACKED';
  switch (c.kind) {
    case 'state': {
      const have = packetStates(pkt);
      return c.states.some(s => have.has(s)) !== c.negated;
    }
    case 'status': {
      if (noCt) return c.negated;
      const hit = c.statuses.some(s => (s === 'NONE' ? pkt.ct.status.size === 0 : pkt.ct.status.has(s)));
      return hit !== c.negated;
    }
    case 'proto':
      return (!noCt && pkt.proto === c.proto) !== c.negated;
    case 'addr': {
      if (noCt) return c.negated;
      const a =
        c.which === 'origsrc'
          ? pkt.ct.origSrc
          : c.which === 'origdst'
            ? pkt.ct.origDst
            : c.which === 'replsrc'
              ? replySrc(pkt).addr
              : replyDst(pkt).addr;
      return netContains(c.net, a) !== c.negated;
    }
    case 'port': {
      if (noCt) return c.negated;
      const p =
        c.which === 'origsrcport'
          ? pkt.ct.origSport
          : c.which === 'origdstport'
            ? pkt.ct.origDport
            : c.which === 'replsrcport'
              ? replySrc(pkt).port
              : replyDst(pkt).port;
      return (p !== null && inPortRange(c.range, p)) !== c.negated;
    }
    case 'dir':
      // The evaluator traces packets of the original direction.
      return c.dir === 'ORIGINAL';
    case 'expire':
      return 'unknown';
  }
}

function describeCheck(c: Check): string {
  switch (c.kind) {
    case 'state':
      return `--ctstate ${c.states.join(',')}`;
    case 'status':
      return `--ctstatus ${c.statuses.join(',')}`;
    case 'proto':
      return `--ctproto ${protoName(c.proto)}`;
    case 'addr':
      return `--ct${c.which} ${formatNet(c.net)}`;
    case 'port':
      return `--ct${c.which} ${formatPortRange(c.range)}`;
    case 'dir':
      return `--ctdir ${c.dir}`;
    case 'expire':
      return `--ctexpire ${c.text}`;
  }
}

function actual(c: Check, pkt: PacketState): string {
  switch (c.kind) {
    case 'state':
      return [...packetStates(pkt)].join(',');
    case 'status':
      return [...pkt.ct.status].join(',') || 'NONE';
    case 'proto':
      return protoName(pkt.proto);
    case 'addr':
      return formatAddr(
        c.which === 'origsrc'
          ? pkt.ct.origSrc
          : c.which === 'origdst'
            ? pkt.ct.origDst
            : c.which === 'replsrc'
              ? replySrc(pkt).addr
              : replyDst(pkt).addr,
      );
    case 'port':
      return String(
        c.which === 'origsrcport'
          ? pkt.ct.origSport
          : c.which === 'origdstport'
            ? pkt.ct.origDport
            : c.which === 'replsrcport'
              ? replySrc(pkt).port
              : replyDst(pkt).port,
      );
    case 'dir':
      return 'ORIGINAL';
    case 'expire':
      return '?';
  }
}

function compileChecks(opts: readonly ParsedOption[], ctx: CompileContext): Check[] {
  const checks: Check[] = [];
  for (const o of opts) {
    const n = o.name.replace(/^--/, '');
    if (n === 'ctstate' || n === 'state')
      checks.push({ kind: 'state', negated: o.negated, states: parseList(o, ctx, STATES) });
    else if (n === 'ctstatus')
      checks.push({ kind: 'status', negated: o.negated, statuses: parseList(o, ctx, STATUSES) });
    else if (n === 'ctproto') {
      const p = protoNumber(firstArg(o, ctx));
      if (p === null) ctx.report(o, 'bad-argument', `'${o.args[0]}' is not a protocol`);
      else checks.push({ kind: 'proto', negated: o.negated, proto: p });
    } else if (n === 'ctorigsrc' || n === 'ctorigdst' || n === 'ctreplsrc' || n === 'ctrepldst') {
      const net = parseNet(firstArg(o, ctx));
      if (!net) ctx.report(o, 'bad-address', `'${o.args[0]}' is not an address or network`);
      else checks.push({ kind: 'addr', negated: o.negated, which: n.slice(2) as 'origsrc', net });
    } else if (n === 'ctorigsrcport' || n === 'ctorigdstport' || n === 'ctreplsrcport' || n === 'ctrepldstport') {
      const range = parsePortRange(firstArg(o, ctx));
      if (!range) ctx.report(o, 'bad-port', `'${o.args[0]}' is not a port or port range`);
      else checks.push({ kind: 'port', negated: o.negated, which: n.slice(2) as 'origsrcport', range });
    } else if (n === 'ctdir') {
      const d = firstArg(o, ctx).toUpperCase();
      if (d !== 'ORIGINAL' && d !== 'REPLY') ctx.report(o, 'bad-argument', `--ctdir takes ORIGINAL or REPLY`);
      else checks.push({ kind: 'dir', dir: d });
    } else if (n === 'ctexpire') checks.push({ kind: 'expire', text: firstArg(o, ctx) });
  }
  return checks;
}

function testChecks(spec: CtSpec, pkt: PacketState) {
  for (const c of spec.checks) {
    const r = evalCheck(c, pkt);
    if (r === 'unknown') return unknown(`${describeCheck(c)}: the remaining lifetime of the connection is not known`);
    if (!r) return false;
  }
  return true;
}

function whyChecks(spec: CtSpec, pkt: PacketState): string {
  for (const c of spec.checks) {
    if (evalCheck(c, pkt) === false) {
      const neg = 'negated' in c && c.negated;
      return `${not(neg)}${describeCheck(c)} ${neg ? '∋' : '≠'} ${actual(c, pkt)}`;
    }
  }
  return 'conntrack differs';
}

const PORT_OPTS = ['--ctorigsrcport', '--ctorigdstport', '--ctreplsrcport', '--ctrepldstport'];
const ADDR_OPTS = ['--ctorigsrc', '--ctorigdst', '--ctreplsrc', '--ctrepldst'];

/** The cut of an original-tuple address (`--ctorigsrc/dst`) of the ruleset's family. */
function addrCut(text: string, family: 4 | 6): Span | null {
  const net = parseNet(text);
  if (!net || net.v !== family) return null;
  const s = netSpan(net);
  return { lo: s.lo, hi: s.hi };
}

/**
 * The diff's facts of conntrack and state: the states named, the original tuple's ports and addresses as
 * cuts (the reply tuple and status, expiry and direction are left to evaluation).
 */
function ctFacts(_spec: CtSpec, options: readonly ParsedOption[], family: 4 | 6): MatchFacts {
  const dports: Neg<Span[]>[] = [];
  const sports: Neg<Span[]>[] = [];
  const srcCuts: Span[] = [];
  const dstCuts: Span[] = [];
  const ctstates: string[] = [];
  for (const o of options) {
    const arg = o.args[0] ?? '';
    if (o.name === '--ctorigdstport') dports.push({ negated: o.negated, value: portList(arg) });
    else if (o.name === '--ctorigsrcport') sports.push({ negated: o.negated, value: portList(arg) });
    else if (o.name === '--ctorigsrc' || o.name === '--ctorigdst') {
      const cut = addrCut(arg, family);
      if (cut) (o.name === '--ctorigsrc' ? srcCuts : dstCuts).push(cut);
    } else if (o.name === '--ctstate' || o.name === '--state')
      for (const s of arg.split(',')) if (!ctstates.includes(s)) ctstates.push(s);
  }
  return { dports, sports, srcCuts, dstCuts, ctstates, tests: ctstates.length ? ['ctstate'] : [] };
}

export const conntrackMatch = defineMatch<CtSpec>({
  name: 'conntrack',
  options: [
    { name: '--ctstate', args: 1, negatable: true },
    { name: '--ctstatus', args: 1, negatable: true },
    { name: '--ctproto', args: 1, negatable: true },
    ...ADDR_OPTS.map(name => ({ name, args: 1, negatable: true })),
    ...PORT_OPTS.map(name => ({ name, args: 1, negatable: true })),
    { name: '--ctdir', args: 1 },
    { name: '--ctexpire', args: 1, negatable: true },
  ],
  compile: (opts, ctx) => ({ checks: compileChecks(opts, ctx) }),
  test: testChecks,
  why: whyChecks,
  describe: spec =>
    `connection ${spec.checks.map(c => `${'negated' in c && c.negated ? 'not ' : ''}${describeCheck(c).replace(/^--ct/, '')}`).join(', ')}`,
  diffFacts: ctFacts,
  lintAtoms: optionAtoms,
  // NOTRACK, CT and a jumped-to chain's NAT change the connection's state.
  lintNature: 'stateful',
});

export const stateMatch = defineMatch<CtSpec>({
  name: 'state',
  options: [{ name: '--state', args: 1, negatable: true }],
  compile: (opts, ctx) => ({ checks: compileChecks(opts, ctx) }),
  test: testChecks,
  why: whyChecks,
  describe: spec => `connection state ${spec.checks.map(c => describeCheck(c).replace('--ctstate ', '')).join(', ')}`,
  diffFacts: ctFacts,
  lintAtoms: optionAtoms,
  // NOTRACK, CT and a jumped-to chain's NAT change the connection's state.
  lintNature: 'stateful',
});
