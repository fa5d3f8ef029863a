/**
 * `ipvsadm -Ln` listings into the virtual-server model. The lines ipvsadm.c `print_service_entry` writes:
 *   TCP  10.96.0.10:80 rr persistent 10800
 *   TCP  10.96.0.11:80 mh (mh-port)
 *     -> 10.244.1.5:80                Masq    1      0          0
 * (service: `%-4s %s` protocol and address, the scheduler, `(flags)`, `persistent N`, `mask M`, `pe NAME`,
 * `ops`; real server: `  -> %-28s %-7s %-6d %-10u %-10u` address, forwarding, weight, ActiveConn, InActConn).
 * The banner and the two title lines are skipped; `FWM` services are read with their mark. The counters
 * become the real servers' connection counts, which lc-like schedulers use. Never throws.
 */
import { lineRange } from '../diagnostics.ts';
import type { IpvsParseOptions, IpvsParseResult } from './parse-rules.ts';
import { DiagnosticSink, parseHostPort, wordRange, words } from './parse-util.ts';
import type { IpvsForward, IpvsProtocol, IpvsRealServer, IpvsService } from './types.ts';

const FORWARDS: readonly IpvsForward[] = ['Masq', 'Local', 'Tunnel', 'Route'];

function isTitle(line: string): boolean {
  return (
    /^IP Virtual Server version/.test(line) ||
    /^Prot LocalAddress:Port/.test(line) ||
    /^\s*->\s*RemoteAddress:Port/.test(line)
  );
}

export function parseIpvsadmList(text: string, opts: IpvsParseOptions = {}): IpvsParseResult {
  const sink = new DiagnosticSink();
  const services: IpvsService[] = [];
  let current: { svc: IpvsService; rs: IpvsRealServer[] } | null = null;
  const flush = () => {
    if (current) services.push({ ...current.svc, realServers: current.rs });
    current = null;
  };
  text.split('\n').forEach((raw, lineNo) => {
    const line = raw.replace(/\r$/, '');
    if (line.trim() === '' || isTitle(line)) return;
    const ws = words(line);
    const range = lineRange(lineNo, 0, line.length);
    if (ws[0]!.text === '->') {
      if (!current) {
        sink.add('unknown-reference', 'a real server line before any virtual service line', range);
        return;
      }
      const hp = parseHostPort(ws[1]?.text ?? '');
      if (!hp) {
        sink.add(
          'bad-address',
          `'${ws[1]?.text ?? ''}' is not a numeric ADDRESS:PORT (list with ipvsadm -Ln)`,
          ws[1] ? wordRange(lineNo, ws[1]) : range,
        );
        return;
      }
      const fwd = ws[2]?.text as IpvsForward | undefined;
      if (!fwd || !FORWARDS.includes(fwd)) {
        sink.add(
          'bad-argument',
          `'${ws[2]?.text ?? ''}' is not a forwarding method (Masq, Local, Tunnel, Route)`,
          ws[2] ? wordRange(lineNo, ws[2]) : range,
        );
        return;
      }
      const nums = ws.slice(3, 6).map(w => (/^\d+$/.test(w.text) ? Number(w.text) : null));
      if (nums.length < 3 || nums.some(n => n === null)) {
        sink.add(
          'bad-argument',
          'a real server line needs Weight, ActiveConn and InActConn numbers (the default ipvsadm -Ln columns)',
          range,
        );
        return;
      }
      current.rs.push({
        addr: hp.addr,
        port: hp.port,
        forward: fwd,
        weight: nums[0]!,
        activeConns: nums[1]!,
        inactiveConns: nums[2]!,
        range,
      });
      return;
    }
    flush();
    const proto = ws[0]!.text;
    if (proto === 'FWM') {
      const mark = ws[1]?.text ?? '';
      if (!/^\d+$/.test(mark) || !ws[2]) {
        sink.add('bad-argument', `a firewall-mark service line is 'FWM  MARK SCHEDULER', not '${line.trim()}'`, range);
        return;
      }
      current = {
        svc: service(
          'TCP',
          '',
          0,
          Number(mark),
          ws.slice(2).map(w => w.text),
          range,
          sink,
        ),
        rs: [],
      };
      return;
    }
    if (proto !== 'TCP' && proto !== 'UDP' && proto !== 'SCTP') {
      sink.add(
        'unknown-command',
        `'${proto}' is not a protocol of an ipvsadm -Ln service line (TCP, UDP, SCTP, FWM)`,
        wordRange(lineNo, ws[0]!),
      );
      return;
    }
    const hp = parseHostPort(ws[1]?.text ?? '');
    if (!hp || !ws[2]) {
      sink.add(
        'bad-address',
        `'${ws[1]?.text ?? ''}' is not a numeric ADDRESS:PORT followed by a scheduler (list with ipvsadm -Ln)`,
        ws[1] ? wordRange(lineNo, ws[1]) : range,
      );
      return;
    }
    current = {
      svc: service(
        proto,
        hp.addr,
        hp.port,
        null,
        ws.slice(2).map(w => w.text),
        range,
        sink,
      ),
      rs: [],
    };
  });
  flush();
  return { table: { services, order: opts.kernelOrder ? 'kernel' : 'unknown' }, diagnostics: sink.list };
}

/** The scheduler and what follows it: `(flag,flag)`, `persistent N`, `mask M`, `pe NAME`, `ops`. */
function service(
  protocol: IpvsProtocol,
  addr: string,
  port: number,
  fwmark: number | null,
  rest: string[],
  range: ReturnType<typeof lineRange>,
  sink: DiagnosticSink,
): IpvsService {
  let schedFlags: string[] = [];
  let persistent: number | null = null;
  for (let i = 1; i < rest.length; i++) {
    const w = rest[i]!;
    if (w.startsWith('(') && w.endsWith(')')) schedFlags = w.slice(1, -1).split(',').filter(Boolean);
    else if (w === 'persistent' && /^\d+$/.test(rest[i + 1] ?? '')) persistent = Number(rest[++i]);
    else if (w === 'mask' || w === 'pe') i++;
    else if (w !== 'ops')
      sink.add('unknown-option', `'${w}' after the scheduler is not something ipvsadm -Ln prints`, range, 'warning');
  }
  return { protocol, addr, port, fwmark, scheduler: rest[0]!, schedFlags, persistent, realServers: [], range };
}
