/**
 * The worst cases of issue 18 item 3 as edits of a generated kube-proxy dump (bench/generate.ts): each
 * returns the new dump's text for the old one. Used by bench/diff-bench.ts and test/diff/worst.test.ts.
 *
 *   - `firstServiceRule`: KUBE-SERVICES' first rule sends its Service's port 80 → 81 (a chain every
 *     Service packet crosses, changed where it starts);
 *   - `masqBit`: KUBE-MARK-MASQ sets 0x8000 instead of 0x4000 (kube-proxy's masquerade bit; its readers
 *     in KUBE-POSTROUTING still test 0x4000, so Service traffic is no longer masqueraded), and
 *     `masqBitBoth`: the same bit changed in KUBE-MARK-MASQ and KUBE-POSTROUTING together (what
 *     `--iptables-masquerade-bit=15` writes);
 *   - `markSpelling`: KUBE-MARK-MASQ and KUBE-POSTROUTING's MARK rules written as iptables-legacy prints them
 *     (`--set-xmark 0x4000/0x4000` for `--or-mark 0x4000`, `--set-xmark 0x4000/0x0` for `--xor-mark
 *     0x4000`): other words, the same rules (`xt_mark.c`);
 *   - `firstInputRule`: a new first rule in filter INPUT (`-p tcp --dport 22 -j DROP`);
 *   - `reorder`: the whole dump reordered without changing anything: chain declarations and the chains'
 *     rule blocks shuffled, and KUBE-SERVICES' Service rules (pairwise disjoint) permuted.
 */

/** The filter table both dumps of `firstInputRule` carry (a small host firewall), with `extra` first in INPUT. */
export function withFilter(text: string, extra: string[] = []): string {
  return [
    text.trimEnd(),
    '*filter',
    ':INPUT ACCEPT [0:0]',
    ':FORWARD ACCEPT [0:0]',
    ':OUTPUT ACCEPT [0:0]',
    ...extra,
    '-A INPUT -i lo -j ACCEPT',
    '-A INPUT -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT',
    '-A INPUT -p tcp -m tcp --dport 6443 -j ACCEPT',
    '-A FORWARD -m conntrack --ctstate INVALID -j DROP',
    'COMMIT',
    '',
  ].join('\n');
}

export function firstInputRule(text: string): string {
  return withFilter(text, ['-A INPUT -p tcp -m tcp --dport 22 -j DROP']);
}

export function firstServiceRule(text: string): string {
  const lines = text.split('\n');
  const i = lines.findIndex(l => l.startsWith('-A KUBE-SERVICES -d '));
  lines[i] = lines[i]!.replace(/--dport (\d+)/, (_, p: string) => `--dport ${Number(p) + 1}`);
  return lines.join('\n');
}

export function masqBit(text: string): string {
  return text.replace('-A KUBE-MARK-MASQ -j MARK --or-mark 0x4000', '-A KUBE-MARK-MASQ -j MARK --or-mark 0x8000');
}

export function masqBitBoth(text: string): string {
  return masqBit(text)
    .replace(
      '-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN',
      '-A KUBE-POSTROUTING -m mark ! --mark 0x8000/0x8000 -j RETURN',
    )
    .replace('-A KUBE-POSTROUTING -j MARK --xor-mark 0x4000', '-A KUBE-POSTROUTING -j MARK --xor-mark 0x8000');
}

export function markSpelling(text: string): string {
  return text
    .replace('-A KUBE-MARK-MASQ -j MARK --or-mark 0x4000', '-A KUBE-MARK-MASQ -j MARK --set-xmark 0x4000/0x4000')
    .replace('-A KUBE-POSTROUTING -j MARK --xor-mark 0x4000', '-A KUBE-POSTROUTING -j MARK --set-xmark 0x4000/0x0');
}

/** A small deterministic generator (mulberry32), so the reorder is the same on every run. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function shuffle<T>(xs: T[], next: () => number): T[] {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [xs[i], xs[j]] = [xs[j]!, xs[i]!];
  }
  return xs;
}

/**
 * Every table's chain declarations shuffled, its chains' rule blocks in shuffled order (each chain's own
 * rules keep their order), and KUBE-SERVICES' rules that name one Service address permuted among
 * themselves (no two match a common packet: each names its own address). Behaviour is unchanged.
 */
export function reorder(text: string, seed = 1): string {
  const next = rng(seed);
  const out: string[] = [];
  const lines = text.split('\n');
  let i = 0;
  while (i < lines.length) {
    const l = lines[i]!;
    if (!l.startsWith('*')) {
      out.push(l);
      i++;
      continue;
    }
    out.push(l);
    i++;
    const decl: string[] = [];
    const blocks = new Map<string, string[]>();
    while (i < lines.length && lines[i] !== 'COMMIT') {
      const x = lines[i++]!;
      if (x.startsWith(':')) decl.push(x);
      else if (x.startsWith('-A ')) {
        const chain = x.slice(3, x.indexOf(' ', 3));
        const b = blocks.get(chain);
        if (b) b.push(x);
        else blocks.set(chain, [x]);
      }
    }
    const svc = blocks.get('KUBE-SERVICES');
    if (svc) {
      const named = svc.filter(r => r.startsWith('-A KUBE-SERVICES -d '));
      const rest = svc.filter(r => !r.startsWith('-A KUBE-SERVICES -d '));
      blocks.set('KUBE-SERVICES', [...shuffle(named, next), ...rest]);
    }
    out.push(...shuffle(decl, next));
    for (const k of shuffle([...blocks.keys()], next)) out.push(...blocks.get(k)!);
  }
  return out.join('\n');
}

/** The bench's cases: old and new dump from one generated dump, and whether they behave alike. */
export const WORST_CASES: Record<string, { old: (t: string) => string; new: (t: string) => string; same: boolean }> = {
  'KUBE-SERVICES first rule': { old: (t: string) => t, new: firstServiceRule, same: false },
  'KUBE-MARK-MASQ / KUBE-POSTROUTING MARK rules respelled': { old: (t: string) => t, new: markSpelling, same: true },
  'new first rule in filter INPUT': { old: (t: string) => withFilter(t), new: firstInputRule, same: false },
  'whole-dump reorder': { old: (t: string) => t, new: (t: string) => reorder(t), same: true },
  'masquerade bit 0x4000 → 0x8000 in KUBE-MARK-MASQ and KUBE-POSTROUTING': {
    old: (t: string) => t,
    new: masqBitBoth,
    same: false,
  },
  'KUBE-MARK-MASQ mark 0x4000 → 0x8000 alone': { old: (t: string) => t, new: masqBit, same: false },
};
