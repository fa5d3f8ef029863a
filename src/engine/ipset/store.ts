/**
 * ipset contents from `ipset save` output, for `-m set --match-set NAME dir[,dir…]`. Each set type is a list
 * of dimensions (`hash:ip,port` = ip then port); the match's flags pick, per dimension, the packet's source
 * or destination (ipset(8), "SET TYPES" and `--match-set`). Parsing never throws.
 */
import { type Diagnostic, lineRange } from '../diagnostics.ts';
import { type Addr, type Net, netContains, parseAddrRange, parseNet } from '../net/addr.ts';
import type { PacketState } from '../net/packet.ts';
import { protoNumber } from '../net/proto.ts';

type Dim = 'ip' | 'net' | 'port' | 'iface' | 'mac' | 'set' | 'mark';

interface Entry {
  readonly values: readonly EntryValue[];
  readonly nomatch: boolean;
}

type EntryValue =
  | { kind: 'net'; net: Net }
  | { kind: 'range'; from: Addr; to: Addr }
  | { kind: 'port'; proto: number; from: number; to: number }
  | { kind: 'name'; name: string };

export interface IpsetSet {
  readonly name: string;
  readonly type: string;
  readonly dims: readonly Dim[];
  readonly entries: Entry[];
  readonly line: number;
}

export interface IpsetStore {
  readonly sets: Map<string, IpsetSet>;
  readonly diagnostics: Diagnostic[];
}

function dimsOf(type: string): Dim[] | null {
  const m = /^(hash|bitmap|list):(.+)$/.exec(type);
  if (!m) return null;
  const dims: Dim[] = [];
  for (const d of m[2]!.split(',')) {
    if (d === 'ip' || d === 'net' || d === 'port' || d === 'iface' || d === 'mac' || d === 'set' || d === 'mark')
      dims.push(d);
    else return null;
  }
  return dims;
}

/** Port entries: `proto: -1` matches any protocol with ports (bitmap:port stores only the port). */
function parseValue(dim: Dim, text: string, bitmap = false): EntryValue | null {
  if (dim === 'ip' || dim === 'net') {
    if (text.includes('-')) {
      const r = parseAddrRange(text);
      return r ? { kind: 'range', ...r } : null;
    }
    const net = parseNet(text);
    return net ? { kind: 'net', net } : null;
  }
  if (dim === 'port') {
    // `tcp:80`, `udp:53-55`, `80` (tcp by default), `icmp:ping` is not modelled.
    const colon = text.indexOf(':');
    if (colon < 0 && bitmap) {
      const m = /^(\d+)(?:-(\d+))?$/.exec(text);
      return m ? { kind: 'port', proto: -1, from: Number(m[1]), to: Number(m[2] ?? m[1]) } : null;
    }
    const protoText = colon >= 0 ? text.slice(0, colon) : 'tcp';
    const portText = colon >= 0 ? text.slice(colon + 1) : text;
    const proto = protoNumber(protoText);
    const m = /^(\d+)(?:-(\d+))?$/.exec(portText);
    if (proto === null || !m) return null;
    return { kind: 'port', proto, from: Number(m[1]), to: Number(m[2] ?? m[1]) };
  }
  return { kind: 'name', name: text };
}

export function parseIpsetSave(text: string, file = 'ipset'): IpsetStore {
  const sets = new Map<string, IpsetSet>();
  const diagnostics: Diagnostic[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '' || line.startsWith('#')) continue;
    const words = line.split(/\s+/);
    const bad = (message: string) =>
      diagnostics.push({
        code: 'bad-argument',
        severity: 'error',
        message: `${file}:${i + 1}: ${message}`,
        range: lineRange(i, 0, lines[i]!.length),
      });
    if (words[0] === 'create' || words[0] === '-N' || words[0] === 'n') {
      const name = words[1];
      const type = words[2];
      const dims = type ? dimsOf(type) : null;
      if (!name || !type || !dims) {
        bad(`cannot read set declaration '${line}'`);
        continue;
      }
      sets.set(name, { name, type, dims, entries: [], line: i });
    } else if (words[0] === 'add' || words[0] === '-A' || words[0] === 'a') {
      const set = sets.get(words[1] ?? '');
      if (!set) {
        bad(`'add' to undeclared set '${words[1] ?? ''}'`);
        continue;
      }
      const parts = (words[2] ?? '').split(',');
      if (parts.length !== set.dims.length) {
        bad(`entry '${words[2] ?? ''}' does not have the ${set.dims.length} parts of a ${set.type} set`);
        continue;
      }
      const values: EntryValue[] = [];
      let ok = true;
      for (let d = 0; d < parts.length; d++) {
        const v = parseValue(set.dims[d]!, parts[d]!, set.type.startsWith('bitmap:'));
        if (!v) {
          ok = false;
          bad(`'${parts[d]}' is not a valid ${set.dims[d]} in set ${set.name}`);
          break;
        }
        values.push(v);
      }
      if (ok) set.entries.push({ values, nomatch: words.includes('nomatch') });
    }
  }
  return { sets, diagnostics };
}

/** Membership of the packet in a set, with `dirs` taken from `--match-set NAME src,dst`. */
export function ipsetContains(
  store: IpsetStore,
  name: string,
  dirs: readonly ('src' | 'dst')[],
  pkt: PacketState,
): boolean | null {
  const set = store.sets.get(name);
  if (!set) return null;
  if (set.type.startsWith('list:')) {
    for (const e of set.entries) {
      const v = e.values[0];
      if (v?.kind === 'name' && ipsetContains(store, v.name, dirs, pkt)) return true;
    }
    return false;
  }
  let matched = false;
  for (const e of set.entries) {
    let all = true;
    for (let d = 0; d < set.dims.length && all; d++) {
      const dir = dirs[d] ?? dirs[dirs.length - 1] ?? 'src';
      const v = e.values[d]!;
      if (v.kind === 'net') all = netContains(v.net, dir === 'src' ? pkt.src : pkt.dst);
      else if (v.kind === 'range') {
        const a = dir === 'src' ? pkt.src : pkt.dst;
        all = a.v === v.from.v && a.n >= v.from.n && a.n <= v.to.n;
      } else if (v.kind === 'port') {
        const port = dir === 'src' ? pkt.sport : pkt.dport;
        all = (v.proto === -1 || pkt.proto === v.proto) && port !== null && port >= v.from && port <= v.to;
      } else all = false;
    }
    // hash:net `nomatch` entries carve exceptions out of larger networks (ipset(8), "nomatch").
    if (all) {
      if (e.nomatch) return false;
      matched = true;
    }
  }
  return matched;
}

export function describeEntry(set: IpsetSet): string {
  return `${set.name} (${set.type}, ${set.entries.length} entries)`;
}
