/**
 * Reads a live trace capture: `xtables-monitor --trace` (iptables/xtables-monitor.c), `nft monitor trace`
 * (nftables src/trace.c) or the kernel's `TRACE:` log lines of the legacy TRACE target from dmesg or the
 * journal (net/ipv4/netfilter/ip_tables.c `trace_packet`: `TRACE: table:chain:rule|return|policy:N` plus the
 * nf_log packet fields). Lines are grouped into packets (trace id, joined by IP ID when the kernel gave a
 * looped-back half a new id). Never throws; lines it does not know are counted, not guessed at.
 */

export type CaptureFormat = 'xtables-monitor' | 'nft-monitor' | 'kernel-log';

export interface CapturedPacket {
  readonly iif: string | null;
  readonly oif: string | null;
  readonly src: string | null;
  readonly dst: string | null;
  readonly sport: number | null;
  readonly dport: number | null;
  /**
   * The protocol when the line says it: nf_log's `PROTO=`, nft's `ip protocol` / `meta l4proto` / a `tcp …`
   * header field, or TCP flag words (SYN, ACK, …; only TCP has them). Null when not said.
   */
  readonly protocol: string | null;
  readonly mark: number | null;
  readonly ipId: number | null;
}

export interface CapturedEvent {
  readonly kind: 'rule' | 'policy' | 'packet' | 'return';
  /** nft: the family word (`ip`, `inet`); iptables forms: null. */
  readonly family: string | null;
  readonly table: string;
  readonly chain: string;
  /** nft's words, lower case: `accept`, `drop`, `continue`, `return`, `jump X`, `goto X`. */
  readonly verdict: string | null;
  /** The rule as the tool printed it (xtables-monitor: `-A CHAIN …` without `-4 -t table`; nft: statements). */
  readonly text: string | null;
  /** kernel-log: the rule number the kernel printed. */
  readonly number: number | null;
  readonly packet: CapturedPacket | null;
  /** 1-based line in the capture. */
  readonly line: number;
  readonly raw: string;
}

export interface CaptureGroup {
  readonly id: string;
  readonly events: CapturedEvent[];
}

export interface Capture {
  readonly format: CaptureFormat | null;
  readonly groups: readonly CaptureGroup[];
  readonly unread: number;
}

const MAX_LINES = 1_000_000;
const MAX_LINE = 16384;

function xtVerdictToNft(v: string): string {
  const m = /^(JUMP|GOTO):(.+)$/.exec(v);
  if (m) return `${m[1]!.toLowerCase()} ${m[2]}`;
  return v.toLowerCase();
}

function fieldsOf(s: string): Map<string, string> {
  const m = new Map<string, string>();
  for (const w of s.split(/\s+/)) {
    const eq = w.indexOf('=');
    if (eq > 0) m.set(w.slice(0, eq), w.slice(eq + 1));
    else if (w) m.set(w, '');
  }
  return m;
}

function num(s: string | undefined): number | null {
  if (s === undefined || s === '') return null;
  const n = Number(s);
  return Number.isFinite(n) ? n : null;
}

/** The packet of a `PACKET:` line or of a kernel log line (nf_log: IN= OUT= SRC= DST= ID= SPT= DPT= MARK=). */
function xtPacket(f: Map<string, string>): CapturedPacket {
  return {
    iif: f.get('IN') || null,
    oif: f.get('OUT') || null,
    src: f.get('SRC') ?? null,
    dst: f.get('DST') ?? null,
    sport: num(f.get('SPORT') ?? f.get('SPT')),
    dport: num(f.get('DPORT') ?? f.get('DPT')),
    protocol:
      f.get('PROTO')?.toLowerCase() ||
      (['SYN', 'ACK', 'FIN', 'RST', 'PSH', 'URG'].some(w => f.has(w) && f.get(w) === '') ? 'tcp' : null),
    mark: f.has('MARK') ? num(f.get('MARK')) : 0,
    ipId: num(f.get('ID')),
  };
}

function nftPacket(s: string): CapturedPacket {
  const get = (re: RegExp) => re.exec(s)?.[1] ?? null;
  return {
    iif: get(/\biif "([^"]*)"/),
    oif: get(/\boif "([^"]*)"/),
    src: get(/\bip6? saddr (\S+)/),
    dst: get(/\bip6? daddr (\S+)/),
    sport: num(get(/\b(?:tcp|udp|sctp|th) sport (\d+)/) ?? undefined),
    dport: num(get(/\b(?:tcp|udp|sctp|th) dport (\d+)/) ?? undefined),
    protocol:
      get(/\b(?:ip protocol|ip6 nexthdr|meta l4proto) (tcp|udp|sctp|icmp|icmpv6|ipv6-icmp)\b/) ??
      get(/\b(tcp|udp|sctp) (?:sport|dport|flags)\b/) ??
      get(/\b(icmp|icmpv6) type\b/),
    mark: num(get(/\bmeta mark (0x[0-9a-f]+)/) ?? undefined) ?? 0,
    ipId: num(get(/\bip id (\d+)/) ?? undefined),
  };
}

const XT_TRACE = /(?:^|\s)TRACE: (\d+) ([0-9a-f]+) ([^:\s]+):(\S+?):(rule|policy|return):(.*)$/;
const XT_PACKET = /(?:^|\s)PACKET: (\d+) ([0-9a-f]+) (.*)$/;
const NFT = /^\s*trace id ([0-9a-f]+) (\S+) (\S+) (\S+) (.*)$/;
const KLOG = /TRACE: ([^:\s]+):(\S+?):(rule|return|policy):(\d+)\s+(.*)$/;

export function readCapture(text: string): Capture {
  const groups = new Map<string, CaptureGroup>();
  const byIpId = new Map<number, string>();
  const alias = new Map<string, string>();
  let unread = 0;
  const counts = { 'xtables-monitor': 0, 'nft-monitor': 0, 'kernel-log': 0 };
  const lines = text.split('\n');
  const add = (id: string, e: CapturedEvent) => {
    // A packet the node sends to itself comes back through lo under a new id: join it by IP ID.
    if (e.packet?.ipId) {
      const known = byIpId.get(e.packet.ipId);
      if (known && known !== id && !groups.get(id)?.events.length) alias.set(id, known);
      else if (!known) byIpId.set(e.packet.ipId, id);
    }
    const key = alias.get(id) ?? id;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { id: key, events: [] }));
    g.events.push(e);
  };
  for (let i = 0; i < Math.min(lines.length, MAX_LINES); i++) {
    const raw = lines[i]!.replace(/\r$/, '');
    if (raw.length > MAX_LINE || raw.trim() === '') {
      if (raw.trim() !== '') unread++;
      continue;
    }
    const line = i + 1;
    let m: RegExpExecArray | null;
    if ((m = XT_PACKET.exec(raw))) {
      counts['xtables-monitor']++;
      add(m[2]!, {
        kind: 'packet',
        family: null,
        table: '',
        chain: '',
        verdict: null,
        text: null,
        number: null,
        packet: xtPacket(fieldsOf(m[3]!)),
        line,
        raw,
      });
    } else if ((m = XT_TRACE.exec(raw))) {
      counts['xtables-monitor']++;
      const [, , id, table, chain, kind, rest] = m;
      if (kind === 'rule') {
        const r = /^0x[0-9a-f]+:(\S+)\s*(.*)$/.exec(rest!);
        const body = (r?.[2] ?? '').replace(/^-[46]\s+-t\s+\S+\s+/, '').trim();
        add(id!, {
          kind: 'rule',
          family: null,
          table: table!,
          chain: chain!,
          verdict: r ? xtVerdictToNft(r[1]!) : null,
          text: body || null,
          number: null,
          packet: null,
          line,
          raw,
        });
      } else
        add(id!, {
          kind: kind as 'policy' | 'return',
          family: null,
          table: table!,
          chain: chain!,
          verdict: xtVerdictToNft(rest!.trim()),
          text: null,
          number: null,
          packet: null,
          line,
          raw,
        });
    } else if ((m = NFT.exec(raw))) {
      counts['nft-monitor']++;
      const [, id, family, table, chain, rest] = m;
      let r: RegExpExecArray | null;
      if ((r = /^packet: (.*)$/.exec(rest!)))
        add(id!, {
          kind: 'packet',
          family: family!,
          table: table!,
          chain: chain!,
          verdict: null,
          text: null,
          number: null,
          packet: nftPacket(r[1]!),
          line,
          raw,
        });
      else if ((r = /^rule (.*) \(verdict (.*)\)$/.exec(rest!)))
        add(id!, {
          kind: 'rule',
          family: family!,
          table: table!,
          chain: chain!,
          verdict: r[2]!.trim(),
          text: r[1]!.replace(/\s*#\s*handle\s+\d+\s*$/, '').trim(),
          number: null,
          packet: null,
          line,
          raw,
        });
      else if ((r = /^policy (\S+)/.exec(rest!)))
        add(id!, {
          kind: 'policy',
          family: family!,
          table: table!,
          chain: chain!,
          verdict: r[1]!,
          text: null,
          number: null,
          packet: null,
          line,
          raw,
        });
      else unread++;
    } else if ((m = KLOG.exec(raw))) {
      counts['kernel-log']++;
      const [, table, chain, kind, n, rest] = m;
      const pkt = xtPacket(fieldsOf(rest!));
      const id = `${pkt.src}>${pkt.dst}#${pkt.ipId ?? ''}`;
      add(id, {
        kind: kind as 'rule' | 'policy' | 'return',
        family: null,
        table: table!,
        chain: chain!,
        verdict: null,
        text: null,
        number: Number(n),
        packet: pkt,
        line,
        raw,
      });
    } else unread++;
  }
  const best = (Object.entries(counts) as [CaptureFormat, number][]).sort((a, b) => b[1] - a[1])[0]!;
  return { format: best[1] > 0 ? best[0] : null, groups: [...groups.values()], unread };
}
