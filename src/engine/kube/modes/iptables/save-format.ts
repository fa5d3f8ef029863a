/**
 * Rewrites one rule as kube-proxy hands it to iptables-restore (`-m comment --comment X -m tcp -p tcp -d
 * 10.0.0.1 --dport 80 -j …`) into the form iptables-save prints it back: header options first
 * (`-s -d -i -o -p`, addresses with their prefix), then each match in the order it was loaded with its
 * options in the extension's own print order, then the target with its normalized options
 * (`--or-mark 0x4000` → `--set-xmark 0x4000/0x4000`, `REJECT` → `REJECT --reject-with
 * icmp-port-unreachable`, probabilities printed as `%.11f` of the stored value). Covers the vocabulary
 * kube-proxy uses (iptables and IPVS modes).
 */
import { protoNumber } from '../../../net/proto.ts';
import { saveString } from '../../../iptables/tokenize.ts';
import { parseMarkMask } from '../../../matches/util.ts';
import { kernelProbability } from '../../../matches/statistic.ts';

const HEADER = ['-s', '-d', '-i', '-o', '-p'] as const;

/** Per-extension option print order (the order of each libxt_*.c save function). */
const OPTION_ORDER: Record<string, string[]> = {
  tcp: ['--sport', '--dport', '--tcp-flags', '--syn'],
  udp: ['--sport', '--dport'],
  sctp: ['--sport', '--dport', '--chunk-types'],
  addrtype: ['--src-type', '--dst-type', '--limit-iface-in', '--limit-iface-out'],
  recent: [
    '--set',
    '--rcheck',
    '--update',
    '--remove',
    '--seconds',
    '--reap',
    '--hitcount',
    '--rttl',
    '--name',
    '--mask',
    '--rsource',
    '--rdest',
  ],
  statistic: ['--mode', '--probability', '--every', '--packet'],
  conntrack: [
    '--ctstate',
    '--ctproto',
    '--ctorigsrc',
    '--ctorigdst',
    '--ctreplsrc',
    '--ctrepldst',
    '--ctstatus',
    '--ctexpire',
    '--ctdir',
  ],
  // libxt_ipvs.c ipvs_mt_dump (IPVS mode's KUBE-IPVS-OUT-FILTER): proto, vaddr, vport, vdir, vmethod, vportctl.
  ipvs: ['--ipvs', '--vproto', '--vaddr', '--vport', '--vdir', '--vmethod', '--vportctl'],
};

// kube-proxy repeats the same comment and probability on many rules: format each distinct one once.
const savedStrings = new Map<string, string>();
function savedString(text: string): string {
  let v = savedStrings.get(text);
  if (v === undefined) {
    v = saveString(text);
    if (savedStrings.size > 50_000) savedStrings.clear();
    savedStrings.set(text, v);
  }
  return v;
}
const savedProbabilities = new Map<string, string>();
export function savedProbability(text: string): string {
  let v = savedProbabilities.get(text);
  if (v === undefined) {
    v = (kernelProbability(Number(text)).stored / 0x80000000).toFixed(11);
    savedProbabilities.set(text, v);
  }
  return v;
}

function hex(n: number): string {
  return `0x${(n >>> 0).toString(16)}`;
}

function withPrefix(addr: string, family: 4 | 6): string {
  if (addr.includes('/')) return addr;
  return `${addr}/${family === 4 ? 32 : 128}`;
}

interface Opt {
  neg: boolean;
  name: string;
  args: string[];
}

/** kube-proxy's words: split on spaces, a double-quoted word (a comment) kept whole without its quotes. */
function splitWords(line: string): string[] {
  const words: string[] = [];
  let i = 0;
  const n = line.length;
  while (i < n) {
    if (line.charCodeAt(i) === 32) {
      i++;
      continue;
    }
    if (line.charCodeAt(i) === 34) {
      const close = line.indexOf('"', i + 1);
      const end = close < 0 ? n : close;
      words.push(line.slice(i + 1, end));
      i = end + 1;
      continue;
    }
    let j = line.indexOf(' ', i);
    if (j < 0) j = n;
    words.push(line.slice(i, j));
    i = j;
  }
  return words;
}

// The endpoint-level rules are most of a large dump (2 per endpoint, 1 per endpoint in the Service chain):
// they are rewritten by pattern; everything else takes the general path. The two paths agree on every rule
// (test/kube/save-format.test.ts).
const COMMENT = '(?: -m comment --comment ("[^"]*"|\\S+))?';
const SEP_MASQ = new RegExp(`^-A (\\S+)${COMMENT} -s ([^ /]+) -j KUBE-MARK-MASQ$`);
const SEP_DNAT = new RegExp(`^-A (\\S+)${COMMENT} -m (tcp|udp|sctp) -p \\3 -j DNAT --to-destination (\\S+)$`);
const SVC_STAT = new RegExp(`^-A (\\S+)${COMMENT} -m statistic --mode random --probability (\\S+) -j (\\S+)$`);
const SVC_LAST = new RegExp(`^-A (\\S+)${COMMENT} -j (KUBE-SEP-\\S+)$`);
// KUBE-SERVICES' jump to a Service port's chain (one per port and address; REJECT and DROP take the general path).
const DISPATCH = new RegExp(
  `^-A (KUBE-SERVICES)${COMMENT} -m (tcp|udp|sctp) -p \\3 -d ([^ /]+) --dport (\\d+) -j (KUBE-[A-Z]+-\\S+)$`,
);

function commentPart(c: string | undefined): string {
  if (c === undefined) return '';
  return ` -m comment --comment ${savedString(c.startsWith('"') ? c.slice(1, -1) : c)}`;
}

function fastSaveFormat(line: string, family: 4 | 6): string | null {
  let m: RegExpExecArray | null;
  if (line.startsWith('-A KUBE-SERVICES ')) {
    m = DISPATCH.exec(line);
    if (m)
      return `-A ${m[1]} -d ${withPrefix(m[4]!, family)} -p ${m[3]}${commentPart(m[2])} -m ${m[3]} --dport ${m[5]} -j ${m[6]}`;
  }
  m = SEP_MASQ.exec(line);
  if (m) return `-A ${m[1]} -s ${withPrefix(m[3]!, family)}${commentPart(m[2])} -j KUBE-MARK-MASQ`;
  m = SEP_DNAT.exec(line);
  if (m) return `-A ${m[1]} -p ${m[3]}${commentPart(m[2])} -m ${m[3]} -j DNAT --to-destination ${m[4]}`;
  m = SVC_STAT.exec(line);
  if (m)
    return `-A ${m[1]}${commentPart(m[2])} -m statistic --mode random --probability ${savedProbability(m[3]!)} -j ${m[4]}`;
  m = SVC_LAST.exec(line);
  if (m) return `-A ${m[1]}${commentPart(m[2])} -j ${m[3]}`;
  return null;
}

export function toSaveFormat(line: string, family: 4 | 6): string {
  return fastSaveFormat(line, family) ?? generalSaveFormat(line, family);
}

/** The general rewrite; exported for the test that checks the fast path against it. */
export function generalSaveFormat(line: string, family: 4 | 6): string {
  const words = splitWords(line);
  if (words[0] !== '-A' || words.length < 2) return line;
  const chain = words[1]!;
  // Header options in iptables-save's order (-s -d -i -o -p): one slot each.
  const header: (Opt | undefined)[] = [undefined, undefined, undefined, undefined, undefined];
  const matches: { name: string; opts: Opt[] }[] = [];
  let target: { name: string; opts: Opt[] } | null = null;
  let neg = false;
  for (let i = 2; i < words.length; i++) {
    const w = words[i]!;
    if (w === '!') {
      neg = true;
      continue;
    }
    const h = w.length === 2 && w.charCodeAt(0) === 45 ? HEADER.indexOf(w as (typeof HEADER)[number]) : -1;
    if (h >= 0) {
      header[h] = { neg, name: w, args: [words[++i] ?? ''] };
    } else if (w === '-m') {
      matches.push({ name: words[++i] ?? '', opts: [] });
    } else if (w === '-j' || w === '-g') {
      target = { name: `${w} ${words[++i] ?? ''}`, opts: [] };
    } else if (w.startsWith('--')) {
      const args: string[] = [];
      while (i + 1 < words.length && words[i + 1]!.charCodeAt(0) !== 45 && words[i + 1] !== '!') args.push(words[++i]!);
      const opt = { neg, name: w, args };
      if (target) target.opts.push(opt);
      else matches[matches.length - 1]?.opts.push(opt);
    }
    neg = false;
  }
  const out: string[] = ['-A', chain];
  for (let h = 0; h < HEADER.length; h++) {
    const o = header[h];
    if (!o) continue;
    if (o.neg) out.push('!');
    out.push(o.name, h < 2 ? withPrefix(o.args[0]!, family) : o.args[0]!);
  }
  for (const m of matches) {
    out.push('-m', m.name);
    const order = OPTION_ORDER[m.name];
    const opts =
      order && m.opts.length > 1 ? [...m.opts].sort((a, b) => order.indexOf(a.name) - order.indexOf(b.name)) : m.opts;
    for (const o of opts) {
      let args = o.args;
      if (m.name === 'comment') args = [savedString(o.args.length === 1 ? o.args[0]! : o.args.join(' '))];
      else if (m.name === 'statistic' && o.name === '--probability') args = [savedProbability(o.args[0] ?? '0')];
      // libxt_ipvs prints the protocol as a number (`%u`) and the address with its mask.
      else if (m.name === 'ipvs' && o.name === '--vproto')
        args = [String(protoNumber(o.args[0] ?? '') ?? o.args[0] ?? '')];
      else if (m.name === 'ipvs' && o.name === '--vaddr') args = [withPrefix(o.args[0] ?? '', family)];
      else if (m.name === 'mark' && o.name === '--mark') {
        const v = parseMarkMask(o.args[0] ?? '');
        if (v) args = [v.mask === 0xffffffff ? hex(v.value) : `${hex(v.value)}/${hex(v.mask)}`];
      }
      if (o.neg) out.push('!');
      out.push(o.name);
      for (const a of args) out.push(a);
    }
    // iptables-save always prints recent's mask and side (defaults 255.255.255.255 and --rsource).
    if (m.name === 'recent') {
      if (!m.opts.some(o => o.name === '--mask'))
        out.push('--mask', family === 4 ? '255.255.255.255' : 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff');
      if (!m.opts.some(o => o.name === '--rsource' || o.name === '--rdest')) out.push('--rsource');
    }
  }
  if (target) {
    out.push(...target.name.split(' '));
    const t = target.name.slice(3);
    if (t === 'MARK') {
      const o = target.opts[0];
      const raw = o?.args[0] ?? '0';
      const v = parseMarkMask(raw);
      if (o && v) {
        const value = v.value;
        let pair: [number, number];
        if (o.name === '--or-mark') pair = [value, value];
        else if (o.name === '--xor-mark') pair = [value, 0];
        else if (o.name === '--and-mark') pair = [0, ~value >>> 0];
        else if (o.name === '--set-mark') pair = [value, (v.mask | value) >>> 0];
        else pair = [value, v.mask];
        out.push('--set-xmark', `${hex(pair[0])}/${hex(pair[1])}`);
      }
    } else if (t === 'REJECT') {
      out.push(
        '--reject-with',
        target.opts.find(o => o.name === '--reject-with')?.args[0] ??
          (family === 4 ? 'icmp-port-unreachable' : 'icmp6-port-unreachable'),
      );
    } else {
      for (const o of target.opts) out.push(o.name, ...o.args);
    }
  }
  return out.join(' ');
}
