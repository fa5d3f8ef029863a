/**
 * `ipvsadm -Sn` output (and hand-written `ipvsadm -R` input) into the virtual-server model:
 *   -A -t 10.96.0.10:80 -s rr [-p 10800] [-b mh-port]
 *   -a -t 10.96.0.10:80 -r 10.244.1.5:80 -m -w 1
 * Commands and options as ipvsadm.c reads them (short and long forms): -A/-E/-D services, -a/-e/-d real
 * servers, -C; defaults as ipvsadm's: scheduler wlc (DEF_SCHED), persistence 300 s when `-p` has no value,
 * forwarding by gatewaying (-g) and weight 1 for real servers. Never throws: every problem is a diagnostic
 * with its range, and the rest of the file still reads.
 */
import { lineRange } from '../diagnostics.ts';
import { DiagnosticSink, type Word, parseHostPort, wordRange, words } from './parse-util.ts';
import type { IpvsForward, IpvsProtocol, IpvsRealServer, IpvsService, IpvsTable } from './types.ts';
import { serviceKey } from './types.ts';

export interface IpvsParseResult {
  readonly table: IpvsTable;
  readonly diagnostics: DiagnosticSink['list'];
}

export interface IpvsParseOptions {
  /** The listing was made with `--nosort`, so real servers are in the kernel's list order. */
  readonly kernelOrder?: boolean;
}

const COMMANDS: Readonly<Record<string, 'A' | 'E' | 'D' | 'a' | 'e' | 'd' | 'C'>> = {
  '-A': 'A',
  '--add-service': 'A',
  '-E': 'E',
  '--edit-service': 'E',
  '-D': 'D',
  '--delete-service': 'D',
  '-a': 'a',
  '--add-server': 'a',
  '-e': 'e',
  '--edit-server': 'e',
  '-d': 'd',
  '--delete-server': 'd',
  '-C': 'C',
  '--clear': 'C',
};
const SERVICE_OPTS: Readonly<Record<string, IpvsProtocol | 'FWM'>> = {
  '-t': 'TCP',
  '--tcp-service': 'TCP',
  '-u': 'UDP',
  '--udp-service': 'UDP',
  '--sctp-service': 'SCTP',
  '-f': 'FWM',
  '--fwmark-service': 'FWM',
};
const FORWARD: Readonly<Record<string, IpvsForward>> = {
  '-m': 'Masq',
  '--masquerading': 'Masq',
  '-g': 'Route',
  '--gatewaying': 'Route',
  '-i': 'Tunnel',
  '--ipip': 'Tunnel',
};
/** Options read and not modelled (thresholds, tunnels, persistence engines, IPv6 fwmark). */
const IGNORED_WITH_ARG = new Set([
  '-M',
  '--netmask',
  '-x',
  '--u-threshold',
  '-y',
  '--l-threshold',
  '--pe',
  '--tun-type',
  '--tun-port',
]);
const IGNORED_FLAGS = new Set(['-6', '-o', '--ops', '--tun-nocsum', '--tun-csum', '--tun-remcsum', '-n', '--numeric']);

interface MutableService {
  protocol: IpvsProtocol;
  addr: string;
  port: number;
  fwmark: number | null;
  scheduler: string;
  schedFlags: string[];
  persistent: number | null;
  realServers: IpvsRealServer[];
  range: ReturnType<typeof lineRange>;
}

export function parseIpvsadmRules(text: string, opts: IpvsParseOptions = {}): IpvsParseResult {
  const sink = new DiagnosticSink();
  const services = new Map<string, MutableService>();
  const lines = text.split('\n');
  lines.forEach((raw, lineNo) => {
    const line = raw.replace(/\r$/, '');
    const ws = words(line);
    if (ws.length === 0 || ws[0]!.text.startsWith('#')) return;
    const cmd = COMMANDS[ws[0]!.text];
    if (!cmd) {
      sink.add(
        'unknown-command',
        `'${ws[0]!.text}' is not an ipvsadm command (expected -A, -E, -D, -a, -e, -d or -C)`,
        wordRange(lineNo, ws[0]!),
      );
      return;
    }
    if (cmd === 'C') {
      services.clear();
      return;
    }
    const o = readOptions(ws.slice(1), lineNo, sink);
    if (!o) return;
    const range = lineRange(lineNo, 0, line.length);
    const key = serviceKey({ protocol: o.protocol, addr: o.addr, port: o.port, fwmark: o.fwmark });
    const svc = services.get(key);
    if (cmd === 'A' || cmd === 'E') {
      if (cmd === 'A' && svc)
        sink.add(
          'bad-argument',
          `service ${key} is added twice; ipvsadm would refuse the second (Service already exists)`,
          range,
          'warning',
        );
      if (cmd === 'E' && !svc) {
        sink.add('unknown-reference', `service ${key} is edited before it is added`, range);
        return;
      }
      const base = svc ?? {
        protocol: o.protocol,
        addr: o.addr,
        port: o.port,
        fwmark: o.fwmark,
        scheduler: 'wlc',
        schedFlags: [],
        persistent: null,
        realServers: [],
        range,
      };
      if (o.scheduler !== null) base.scheduler = o.scheduler;
      if (o.persistent !== undefined) base.persistent = o.persistent;
      if (o.schedFlags) base.schedFlags = o.schedFlags;
      services.set(key, base);
      return;
    }
    if (cmd === 'D') {
      if (!services.delete(key))
        sink.add('unknown-reference', `service ${key} is deleted but was never added`, range, 'warning');
      return;
    }
    if (!svc) {
      sink.add('unknown-reference', `real server for service ${key}, which is not added before this line`, range);
      return;
    }
    if (!o.real) {
      sink.add('missing-argument', `${ws[0]!.text} needs -r ADDRESS[:PORT]`, range);
      return;
    }
    const rsPort = o.real.port ?? svc.port;
    const at = svc.realServers.findIndex(r => r.addr === o.real!.addr && r.port === rsPort);
    if (cmd === 'd') {
      if (at < 0)
        sink.add(
          'unknown-reference',
          `real server ${o.real.addr}:${rsPort} of ${key} is deleted but was never added`,
          range,
          'warning',
        );
      else svc.realServers.splice(at, 1);
      return;
    }
    const prev = at >= 0 ? svc.realServers[at]! : null;
    const rs: IpvsRealServer = {
      addr: o.real.addr,
      port: rsPort,
      forward: o.forward ?? prev?.forward ?? 'Route',
      weight: o.weight ?? prev?.weight ?? 1,
      activeConns: null,
      inactiveConns: null,
      range,
    };
    if (cmd === 'a' && prev)
      sink.add('bad-argument', `real server ${o.real.addr}:${rsPort} is added to ${key} twice`, range, 'warning');
    if (cmd === 'e' && !prev)
      sink.add(
        'unknown-reference',
        `real server ${o.real.addr}:${rsPort} of ${key} is edited before it is added`,
        range,
        'warning',
      );
    if (prev) svc.realServers[at] = rs;
    else svc.realServers.push(rs);
  });
  return {
    table: { services: [...services.values()].map(freeze), order: opts.kernelOrder ? 'kernel' : 'unknown' },
    diagnostics: sink.list,
  };
}

function freeze(s: MutableService): IpvsService {
  return { ...s, schedFlags: [...s.schedFlags], realServers: [...s.realServers] };
}

interface Options {
  protocol: IpvsProtocol;
  addr: string;
  port: number;
  fwmark: number | null;
  scheduler: string | null;
  persistent: number | null | undefined;
  schedFlags: string[] | null;
  real: { addr: string; port: number | null } | null;
  forward: IpvsForward | null;
  weight: number | null;
}

function readOptions(ws: Word[], lineNo: number, sink: DiagnosticSink): Options | null {
  const o: Options = {
    protocol: 'TCP',
    addr: '',
    port: 0,
    fwmark: null,
    scheduler: null,
    persistent: undefined,
    schedFlags: null,
    real: null,
    forward: null,
    weight: null,
  };
  let haveService = false;
  for (let i = 0; i < ws.length; i++) {
    const w = ws[i]!;
    const next = ws[i + 1];
    const arg = (): Word | null => {
      if (!next || next.text.startsWith('-')) {
        sink.add('missing-argument', `${w.text} needs a value`, wordRange(lineNo, w));
        return null;
      }
      i++;
      return next;
    };
    const svcKind = SERVICE_OPTS[w.text];
    if (svcKind) {
      const a = arg();
      if (!a) return null;
      if (svcKind === 'FWM') {
        if (!/^\d+$/.test(a.text)) return bad(sink, 'bad-argument', `'${a.text}' is not a firewall mark`, lineNo, a);
        o.fwmark = Number(a.text);
      } else {
        const hp = parseHostPort(a.text);
        if (!hp)
          return bad(
            sink,
            'bad-address',
            `'${a.text}' is not a numeric ADDRESS:PORT (save the table with ipvsadm -Sn)`,
            lineNo,
            a,
          );
        o.protocol = svcKind;
        o.addr = hp.addr;
        o.port = hp.port;
      }
      haveService = true;
    } else if (w.text === '-s' || w.text === '--scheduler') {
      const a = arg();
      if (!a) return null;
      o.scheduler = a.text;
    } else if (w.text === '-p' || w.text === '--persistent') {
      // The timeout is optional (ipvsadm.c: default 300 s).
      if (next && /^\d+$/.test(next.text)) {
        o.persistent = Number(next.text);
        i++;
      } else o.persistent = 300;
    } else if (w.text === '-b' || w.text === '--sched-flags') {
      const a = arg();
      if (!a) return null;
      o.schedFlags = a.text.split(',').filter(Boolean);
    } else if (w.text === '-r' || w.text === '--real-server') {
      const a = arg();
      if (!a) return null;
      const hp =
        parseHostPort(a.text) ??
        (/^[0-9.]+$/.test(a.text) || /^\[[0-9a-fA-F:.]+\]$/.test(a.text) ? parseHostPort(`${a.text}:0`) : null);
      if (!hp) return bad(sink, 'bad-address', `'${a.text}' is not a numeric ADDRESS[:PORT]`, lineNo, a);
      o.real = { addr: hp.addr, port: a.text.endsWith(']') || !a.text.includes(':') ? null : hp.port };
    } else if (FORWARD[w.text]) {
      o.forward = FORWARD[w.text]!;
    } else if (w.text === '-w' || w.text === '--weight') {
      const a = arg();
      if (!a) return null;
      if (!/^\d+$/.test(a.text) || Number(a.text) > 2147483647)
        return bad(sink, 'bad-argument', `'${a.text}' is not a weight (0 to 2147483647)`, lineNo, a);
      o.weight = Number(a.text);
    } else if (IGNORED_WITH_ARG.has(w.text)) {
      arg();
    } else if (!IGNORED_FLAGS.has(w.text)) {
      sink.add('unknown-option', `'${w.text}' is not an ipvsadm option packetlens reads`, wordRange(lineNo, w));
    }
  }
  if (!haveService) {
    sink.add(
      'missing-argument',
      'no virtual service given (-t, -u, --sctp-service or -f)',
      lineRange(lineNo, 0, (ws.at(-1)?.start ?? 0) + (ws.at(-1)?.text.length ?? 0)),
    );
    return null;
  }
  return o;
}

function bad(
  sink: DiagnosticSink,
  code: 'bad-argument' | 'bad-address',
  message: string,
  lineNo: number,
  w: Word,
): null {
  sink.add(code, message, wordRange(lineNo, w));
  return null;
}
