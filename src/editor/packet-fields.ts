/**
 * The packet as the diagram panel edits it (one field per input) and as the trace input types it
 * (`tcp 10.0.0.1:40000 -> 10.96.0.10:53 in=eth0`), converted both ways.
 */
import { type PacketInput, parsePacketText } from '../engine/api.ts';
import type { PacketFields } from '../shared/protocol.ts';

export const EMPTY_FIELDS: PacketFields = {
  protocol: 'tcp',
  src: '',
  sport: '',
  dst: '',
  dport: '',
  from: '',
  in: '',
  state: '',
  mark: '',
};

function hostPort(addr: string, port: string): string {
  const a = addr.includes(':') ? `[${addr}]` : addr;
  return port ? `${a}:${port}` : a;
}

export function fieldsFromInput(p: PacketInput): PacketFields {
  return {
    protocol: p.protocol,
    src: p.src ?? '',
    sport: p.sport !== undefined ? String(p.sport) : '',
    dst: p.dst,
    dport: p.dport !== undefined ? String(p.dport) : '',
    from: p.from === 'outside' || p.from === 'local' || p.from === 'auto' ? p.from : '',
    in: p.in ?? '',
    state: p.ctstate ?? '',
    mark: p.mark !== undefined ? String(p.mark) : '',
  };
}

export function fieldsFromText(text: string): PacketFields | null {
  const parsed = parsePacketText(text);
  return parsed.ok ? fieldsFromInput(parsed.input) : null;
}

export function fieldsToText(f: PacketFields): string {
  const words = [f.protocol.trim() || 'tcp'];
  const src = f.src.trim();
  if (src) words.push(hostPort(src, f.sport.trim()), '->');
  words.push(hostPort(f.dst.trim(), f.dport.trim()));
  if (f.in.trim()) words.push(`in=${f.in.trim()}`);
  if (f.from && f.from !== 'auto') words.push(`from=${f.from}`);
  if (f.state.trim()) words.push(`state=${f.state.trim().toUpperCase()}`);
  if (f.mark.trim()) words.push(`mark=${f.mark.trim()}`);
  return words.join(' ');
}
