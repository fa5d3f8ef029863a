/**
 * A predicted path in the kernel's words: the lines `xtables-monitor --trace` (iptables/xtables-monitor.c,
 * `trace_cb`: `PACKET:` lines, `TRACE: <nfproto> <id> table:chain:rule:0x<handle>:<VERDICT>  <rule>`,
 * `…:policy:<VERDICT>`) or `nft monitor trace` (nftables src/trace.c: `trace id <id> <family> <table>
 * <chain> packet: …`, `… rule <rule> (verdict <v>)`, `… policy <v>`) would print for it, checked against
 * the captures the kernel oracle recorded (test/fixtures/live/). What a prediction cannot know is left out or
 * marked: rule handles are `0x0` (the kernel numbers rules as it loads them), link-layer fields, TTL, length and
 * IP ID are not printed, and the trace id is the outcome's number.
 */
import type { TraceEvent, TraceOutcome, TraceStep } from '../eval/trace-types.ts';

export type KernelWordsFormat = 'xtables-monitor' | 'nft-monitor';

/** One line of the source the rules came from (1-based), for the rule text the monitor prints. */
export type LineText = (line: number) => string | undefined;

/** The xtables-monitor verdict word of an iptables step (`trace_print_verdict`: NF_ACCEPT → ACCEPT, …). */
export function xtVerdict(verdict: string): string {
  const v = verdict.trim();
  // nftables steps already carry nft's words (`accept`, `return`, …).
  if (/^(accept|drop|return|continue|queue)$/.test(v)) return v.toUpperCase();
  const m = /^(jump|goto) (\S+)/.exec(v);
  if (m) return `${m[1]!.toUpperCase()}:${m[2]}`;
  if (v === 'ACCEPT' || v === 'DROP' || v === 'RETURN') return v;
  // nf_nat's targets return NF_ACCEPT; REJECT sends its answer and returns NF_DROP (ipt_REJECT.c).
  if (/^(DNAT|SNAT|MASQUERADE|REDIRECT|NETMAP)\b/.test(v)) return 'ACCEPT';
  if (/^REJECT\b/.test(v)) return 'DROP';
  if (/^NFQUEUE\b|^QUEUE\b/.test(v)) return 'QUEUE';
  return 'CONTINUE';
}

/** The rule as the monitor prints it: iptables-nft's save form with its family and table, or nft's statements. */
export function ruleText(step: TraceStep, lines: LineText, family: 4 | 6): string {
  const raw = (lines(step.line) ?? '').trim();
  if (step.family) {
    // `add rule ip t c stmt…` / `insert rule …` in nft -f scripts: the monitor prints only the statements.
    const m =
      /^(?:add|insert|create)\s+rule\s+(?:(?:ip6?|inet|arp|bridge|netdev)\s+)?\S+\s+\S+\s+(?:(?:index|position|handle)\s+\d+\s+)?(.*)$/.exec(
        raw,
      );
    return (m ? m[1]! : raw).replace(/\s*#\s*handle\s+\d+\s*$/, '');
  }
  return `-${family} -t ${step.table} ${raw}`;
}

interface PacketFields {
  src: string;
  dst: string;
  mark: number;
}

function packetLineXt(
  id: string,
  nfproto: number,
  inIf: string | null,
  outIf: string | null,
  o: TraceOutcome,
  p: PacketFields,
): string {
  const parts = [`PACKET: ${nfproto} ${id}`, `IN=${inIf ?? ''}`];
  if (outIf) parts.push(`OUT=${outIf}`);
  parts.push(`SRC=${p.src}`, `DST=${p.dst}`);
  const proto = o.packet.protocol.toUpperCase();
  if (proto === 'TCP' || proto === 'UDP' || proto === 'SCTP') {
    if (proto === 'SCTP') parts.push('PROTO=SCTP');
    const sport = o.packet.sport;
    parts.push(
      `SPORT=${sport ?? ''}`,
      `DPORT=${p.dst === o.packet.dst ? (o.packet.dport ?? '') : (o.packet.dport ?? '')}`,
    );
    if (proto === 'TCP') parts.push('SYN');
  } else parts.push(`PROTO=${proto}`);
  if (p.mark) parts.push(`MARK=0x${p.mark.toString(16)}`);
  return parts.join(' ');
}

/**
 * Lines for one outcome. `original` is the packet as sent (before NAT); DNAT shows from the hook after the
 * rule that made it, SNAT/MASQUERADE only after POSTROUTING (as the kernel's headers do).
 */
export function outcomeInKernelWords(
  o: TraceOutcome,
  index: number,
  original: { src: string; dst: string; dport: number | null },
  format: KernelWordsFormat,
  lines: LineText,
): string[] {
  const family = o.packet.family;
  const id = (0x1000 + index).toString(16).padStart(8, '0');
  const out: string[] = [];
  const pkt: PacketFields = { src: original.src, dst: original.dst, mark: 0 };
  let inIf: string | null = null;
  let outIf: string | null = null;
  let firstIn: string | null = null;
  let pendingPacket = false;
  let afterPost = false;
  let dnatTo: string | null = null;
  const nfproto = family === 4 ? 2 : 10;
  const nftFamily = (s: { family?: string }) => s.family ?? (family === 4 ? 'ip' : 'ip6');
  const flushPacket = (table: string, chain: string, fam: string) => {
    if (!pendingPacket) return;
    pendingPacket = false;
    if (format === 'xtables-monitor') out.push(packetLineXt(id, nfproto, inIf, outIf, o, pkt));
    else {
      const l4 = o.packet.protocol;
      const ports = o.packet.sport !== null ? ` ${l4} sport ${o.packet.sport} ${l4} dport ${o.packet.dport ?? ''}` : '';
      const ipw = family === 4 ? 'ip' : 'ip6';
      out.push(
        `trace id ${id} ${fam} ${table} ${chain} packet: ${inIf ? `iif "${inIf}" ` : ''}${outIf ? `oif "${outIf}" ` : ''}${ipw} saddr ${pkt.src} ${ipw} daddr ${pkt.dst}${ports}${pkt.mark ? ` meta mark 0x${pkt.mark.toString(16).padStart(8, '0')}` : ''}`.trimEnd(),
      );
    }
  };
  for (const e of o.events as readonly TraceEvent[]) {
    if (e.kind === 'hook') {
      if (afterPost && o.snat) pkt.src = o.snat;
      inIf = e.iface.in ?? (e.hook === 'POSTROUTING' ? firstIn : null);
      firstIn ??= e.iface.in;
      outIf = e.iface.out;
      if (dnatTo) pkt.dst = dnatTo;
      if (e.hook === 'POSTROUTING') afterPost = true;
    } else if (e.kind === 'chain') {
      // A base chain's first event carries the packet (nft_trace_init resets `packet_dumped` per base chain).
      if (e.chain === e.hook || /^(prerouting|input|forward|output|postrouting)$/i.test(e.chain) || isBase(e))
        pendingPacket = true;
    } else if (e.kind === 'rule') {
      const s = e.step;
      flushPacket(s.table, s.chain, nftFamily(s));
      if (format === 'xtables-monitor')
        out.push(
          `TRACE: ${nfproto} ${id} ${s.table}:${s.chain}:rule:0x0:${xtVerdict(s.verdict)}  ${ruleText(s, lines, family)}`,
        );
      else
        out.push(
          `trace id ${id} ${nftFamily(s)} ${s.table} ${s.chain} rule ${ruleText(s, lines, family)} (verdict ${nftVerdict(s.verdict)})`,
        );
      const mark =
        /^MARK (0x[0-9a-f]+) → (0x[0-9a-f]+)/i.exec(s.verdict) ??
        /meta mark (0x[0-9a-f]+) → (0x[0-9a-f]+)/i.exec(s.action ?? '');
      if (mark) pkt.mark = Number(mark[2]);
      if (/^(DNAT|REDIRECT)\b|dnat/i.test(s.verdict + ' ' + (s.action ?? '')) && o.dnat)
        dnatTo = o.dnat.replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1');
    } else if (e.kind === 'policy') {
      flushPacket(e.table, e.chain, family === 4 ? 'ip' : 'ip6');
      if (format === 'xtables-monitor')
        out.push(`TRACE: ${nfproto} ${id} ${e.table}:${e.chain}:policy:${e.verdict.toUpperCase()}`);
      else
        out.push(
          `trace id ${id} ${tableFamily(e.table, family)} ${tableName(e.table)} ${e.chain} policy ${e.verdict.toLowerCase()}`,
        );
    }
  }
  return out;
}

/** Base chains the evaluator enters carry the hook name (iptables) or are registered nft base chains. */
function isBase(e: { readonly chain: string; readonly hook: string; readonly table: string }): boolean {
  return e.chain.toUpperCase() === e.hook;
}

function tableFamily(table: string, family: 4 | 6): string {
  const sp = table.indexOf(' ');
  return sp > 0 ? table.slice(0, sp) : family === 4 ? 'ip' : 'ip6';
}
function tableName(table: string): string {
  const sp = table.indexOf(' ');
  return sp > 0 ? table.slice(sp + 1) : table;
}

/** nft's verdict words; iptables steps translated (`jump X`, `accept`, `drop`, `continue`). */
export function nftVerdict(verdict: string): string {
  const xt = xtVerdict(verdict);
  const m = /^(JUMP|GOTO):(.*)$/.exec(xt);
  if (m) return `${m[1]!.toLowerCase()} ${m[2]}`;
  return xt.toLowerCase();
}
