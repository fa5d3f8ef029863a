/**
 * The diff against the Linux kernel (test/fixtures/diff/kernel/, made by scripts/diff-kernel-fixtures.py
 * with nforacle.py): PR-like changes of seed 003's worker dump, and what the kernel did to probe packets
 * under the old and the new dump; and the same for nftables rulesets (test/fixtures/diff/kernel-nft/, made by
 * scripts/diff-kernel-nft-fixtures.py with nforacle.py --nft: seed 003's kube-proxy nftables rules and an
 * inet host firewall, IPv4 and IPv6 probes). For every probe:
 *
 *   - the kernel's fate changed → some reported class's range holds the probe, its old and new
 *     dispositions are the kernel's, and it says whether the source was translated as the kernel did;
 *   - the kernel's fate stayed → no reported class's range holds the probe (a range claims no packet whose
 *     fate stays the same);
 *
 * and a case where no probe changes and the dumps only reorder disjoint rules or edit a comment must be
 * proven identical (exit status 0). Expected fates come from the kernel, never from the engine.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { type ClassExtent, type DiffReport, diffRulesets, parseRuleset } from '../../src/engine/api.ts';
import { parseAddr } from '../../src/engine/net/addr.ts';
import { DIFF_FIXTURES } from './helpers.ts';

const DIRS = [
  { dir: join(DIFF_FIXTURES, 'kernel'), ext: 'rules' },
  { dir: join(DIFF_FIXTURES, 'kernel-nft'), ext: 'nft' },
];
/** The oracle's node: 172.18.0.4, and 2001:db8::4 for the nftables cases' IPv6 probes. */
const NODE = { addresses: ['172.18.0.4', '2001:db8::4'] };
const SAME = new Set(['reorder-disjoint', 'comment-only', 'busy-reorder', 'kube-reorder', 'kube-counter']);

interface Probe {
  proto: string;
  src: string;
  dst: string;
  dport?: number;
  sport?: number;
  from: 'ext' | 'pod';
  icmp_type?: number;
}
interface KFate {
  verdict: string;
  delivered_to: string | null;
  src_seen: string | null;
  /** A probe sent many times (`repeat`): every endpoint the kernel delivered it to. */
  delivered?: string[];
}
interface Row {
  probe: Probe;
  old: KFate;
  new: KFate;
  changed: boolean;
}

const num = (a: string) => {
  const x = parseAddr(a)!;
  return typeof x.n === 'bigint' ? x.n : BigInt(x.n);
};

/** Whether an address range as the report writes it (`any`, an address, a CIDR, `a–b`) holds an address. */
function addrIn(label: string, addr: string): boolean {
  if (label === 'any') return true;
  if (label.includes(':') !== addr.includes(':')) return false;
  const v = num(addr);
  if (label.includes('–')) {
    const [lo, hi] = label.split('–');
    return num(lo!) <= v && v <= num(hi!);
  }
  const [base, bits] = label.split('/');
  if (bits === undefined) return num(base!) === v;
  const size = 1n << BigInt((base!.includes(':') ? 128 : 32) - Number(bits));
  return num(base!) <= v && v < num(base!) + size;
}

function portIn(label: string | null, port: number | undefined): boolean {
  if (label === null || label === 'any' || port === undefined || label.startsWith('type')) return true;
  if (label.includes('–')) {
    const [lo, hi] = label.split('–').map(Number);
    return lo! <= port && port <= hi!;
  }
  return Number(label) === port;
}

function protoIn(label: string, proto: string): boolean {
  if (label === 'any') return true;
  if (label.startsWith('any but ')) return !label.slice(8).split(', ').includes(proto);
  return label === proto;
}

function icmpIn(label: string | null, type: number | undefined): boolean {
  if (label === null || !label.startsWith('type')) return true;
  const t = `${type ?? 8}/0`;
  if (label === 'any type') return true;
  if (label.startsWith('type any but ')) return !label.slice(13).split(', ').includes(t);
  return label === `type ${t}`;
}

function holds(e: ClassExtent, p: Probe): boolean {
  return (
    e.from === 'outside' &&
    e.ctstate === 'NEW' &&
    e.affinity.length === 0 &&
    protoIn(e.protocol, p.proto) &&
    addrIn(e.src, p.src) &&
    addrIn(e.dst, p.dst) &&
    portIn(e.dport, p.dport) &&
    portIn(e.sport, p.sport) &&
    (p.proto !== 'icmp' || icmpIn(e.dport, p.icmp_type))
  );
}

/** The kernel's verdict in the engine's words: a packet delivered to a pod left the node forwarded. */
const disposition = (k: KFate) => (k.verdict === 'delivered' ? 'forwarded' : k.verdict);
const translated = (k: KFate, p: Probe) => k.src_seen !== null && k.src_seen !== p.src;

function diff(dir: string, name: string, ext: string): DiffReport {
  const read = (f: string) => parseRuleset(readFileSync(join(dir, name, f), 'utf8'), { file: f, lazy: true }).ruleset;
  const r = diffRulesets(read(`old.${ext}`), read(`new.${ext}`), { node: NODE });
  assert.ok(r.ok, r.ok ? '' : r.error);
  return r.report;
}

describe('diff against the kernel (test/fixtures/diff/kernel, kernel-nft)', () => {
  for (const { dir: DIR, ext } of DIRS)
    for (const name of readdirSync(DIR, { withFileTypes: true })
      .filter(d => d.isDirectory())
      .map(d => d.name)
      .sort()) {
      it(`${ext === 'nft' ? 'nft ' : ''}${name}`, () => {
        const rows = (
          JSON.parse(readFileSync(join(DIR, name, 'kernel.json'), 'utf8')) as { source: string; probes: Row[] }
        ).probes;
        const report = diff(DIR, name, ext);
        const where = (p: Probe) => `${p.proto} ${p.src} -> ${p.dst}:${p.dport ?? ''}`;
        for (const row of rows) {
          const hits = report.changes.filter(c => holds(c.class.extent, row.probe));
          if (!row.changed) {
            assert.deepEqual(
              hits.map(c => `${c.class.packet} [${JSON.stringify(c.class.extent)}]`),
              [],
              `${where(row.probe)}: the kernel treats it alike on both sides; no reported range may claim it`,
            );
            continue;
          }
          assert.ok(
            hits.length > 0,
            `${where(row.probe)}: the kernel's fate changes (${JSON.stringify(row.old)} → ${JSON.stringify(row.new)}); no reported range holds it (${report.summary})`,
          );
          for (const c of hits) {
            assert.deepEqual(
              [...new Set(c.old.map(f => f.disposition))],
              [disposition(row.old)],
              `${where(row.probe)} old: ${c.class.packet}`,
            );
            assert.deepEqual(
              [...new Set(c.new.map(f => f.disposition))],
              [disposition(row.new)],
              `${where(row.probe)} new: ${c.class.packet}`,
            );
            for (const [fates, k] of [
              [c.old, row.old],
              [c.new, row.new],
            ] as const) {
              if (k.verdict === 'dropped' || k.verdict === 'rejected') continue;
              // numgen's endpoints: the DNAT destinations of the class's fates are those the kernel delivered to.
              if (k.delivered)
                assert.deepEqual(
                  [...new Set(fates.map(f => f.dnat))].sort(),
                  k.delivered,
                  `${where(row.probe)}: endpoints as the kernel delivered (${c.class.packet})`,
                );
              assert.ok(
                fates.every(f => (f.snat !== null || f.masquerade) === translated(k, row.probe)),
                `${where(row.probe)}: source translated as the kernel did (${k.src_seen})`,
              );
            }
          }
        }
        if (SAME.has(name)) {
          assert.ok(
            rows.every(r => !r.changed),
            'the kernel sees no change',
          );
          assert.equal(report.identical, true, `${name}: proven identical (${report.approximations.join('; ')})`);
          assert.equal(report.verdict, 'identical');
        } else {
          assert.equal(report.identical, false, `${name}: never "identical" when the kernel sees a change`);
        }
      });
    }
});
