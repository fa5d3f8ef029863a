/**
 * IPVS schedulers against the kernel (net/netfilter/ipvs/ip_vs_*.c). Hash values are not taken from the
 * implementation: sh/dh buckets are hand-computed hash_32 values (include/linux/hash.h, shown below), the
 * hsiphash vectors are the kernel's own (lib/siphash_kunit.c, 64-bit), and the mh slots and servers come
 * from an independent Python port of ip_vs_mh.c written from the kernel source.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hash32, hsiphash64 } from '../../src/engine/ipvs/hash.ts';
import { MH_TABLE_SIZE, mhLookup } from '../../src/engine/ipvs/sched-mh.ts';
import { scheduleNewConnection } from '../../src/engine/ipvs/schedule.ts';
import type { ScheduleResult } from '../../src/engine/ipvs/sched-types.ts';
import type { IpvsRealServer, IpvsService, RealServerOrder } from '../../src/engine/ipvs/types.ts';
import { parseAddr } from '../../src/engine/net/addr.ts';
import { add, format, rational, ZERO } from '../../src/engine/rational.ts';

function rs(addr: string, weight = 1, active: number | null = null, inactive: number | null = null): IpvsRealServer {
  return { addr, port: 80, forward: 'Masq', weight, activeConns: active, inactiveConns: inactive, range: null };
}

function svc(scheduler: string, servers: IpvsRealServer[], schedFlags: string[] = []): IpvsService {
  return {
    protocol: 'TCP',
    addr: '10.96.0.10',
    port: 80,
    fwmark: null,
    scheduler,
    schedFlags,
    persistent: null,
    realServers: servers,
    range: null,
  };
}

function run(s: IpvsService, src = '172.18.0.100', order: RealServerOrder = 'kernel', sport = 40000): ScheduleResult {
  return scheduleNewConnection({
    service: s,
    client: { src: parseAddr(src)!, sport, dst: parseAddr(s.addr)!, dport: s.port },
    order,
  });
}

/** [server, probability] of a single-world answer. */
function picks(r: ScheduleResult): [string | null, string][] {
  assert.equal(r.kind, 'decided', r.kind === 'unknown' ? r.reason : '');
  if (r.kind !== 'decided') return [];
  assert.equal(r.worlds.length, 1, 'one world');
  return r.worlds[0]!.picks.map(p => [p.server?.addr ?? null, format(p.probability)]);
}

/** Servers of each world of a multi-world answer. */
function worlds(r: ScheduleResult): (string | null)[] {
  assert.equal(r.kind, 'decided');
  return r.kind === 'decided'
    ? r.worlds.map(w => {
        assert.ok(w.condition);
        return w.picks[0]!.server?.addr ?? null;
      })
    : [];
}

const A = '10.244.1.2';
const B = '10.244.2.2';
const C = '10.244.3.2';

describe('rotation schedulers (unknown rotation position)', () => {
  it('rr gives each real server with weight > 0 probability 1/n, whatever the list order', () => {
    assert.deepEqual(picks(run(svc('rr', [rs(A), rs(B)]), undefined, 'unknown')), [
      [A, '1/2'],
      [B, '1/2'],
    ]);
    assert.deepEqual(picks(run(svc('rr', [rs(A), rs(B), rs(C)]))), [
      [A, '1/3'],
      [B, '1/3'],
      [C, '1/3'],
    ]);
    // ip_vs_rr.c skips weight 0 (quiesced) servers.
    assert.deepEqual(picks(run(svc('rr', [rs(A), rs(B, 0), rs(C)]))), [
      [A, '1/2'],
      [C, '1/2'],
    ]);
    const r = run(svc('rr', [rs(A), rs(B)]));
    assert.ok(r.kind === 'decided' && r.assumptions.some(a => /rotation/.test(a)), 'the rotation assumption is stated');
  });

  it('wrr gives weight / total weight', () => {
    assert.deepEqual(picks(run(svc('wrr', [rs(A, 3), rs(B, 1)]))), [
      [A, '3/4'],
      [B, '1/4'],
    ]);
    assert.deepEqual(picks(run(svc('wrr', [rs(A, 2), rs(B, 4), rs(C, 0)]))), [
      [A, '1/3'],
      [B, '2/3'],
    ]);
  });

  it('no real server with weight > 0: no destination (ICMP port unreachable)', () => {
    assert.deepEqual(picks(run(svc('rr', [rs(A, 0)]))), [[null, '1']]);
    assert.deepEqual(picks(run(svc('wlc', []))), [[null, '1']]);
  });
});

describe('least-connection schedulers: ties go to the first in the kernel list', () => {
  it('lc with zero connections picks the first real server; the assumption is stated', () => {
    const r = run(svc('lc', [rs(A), rs(B)]));
    assert.deepEqual(picks(r), [[A, '1']]);
    assert.ok(r.kind === 'decided' && r.assumptions.some(a => /0 active and 0 inactive/.test(a)));
    assert.match(r.kind === 'decided' ? r.summary : '', /ties go to the first/);
  });

  it('lc weighs an active connection as 256 inactive ones (ip_vs_dest_conn_overhead)', () => {
    // A: 0*256 + 300 = 300; B: 1*256 + 0 = 256 → B.
    assert.deepEqual(picks(run(svc('lc', [rs(A, 1, 0, 300), rs(B, 1, 1, 0)]))), [[B, '1']]);
    // A: 255 < B: 256 → A.
    assert.deepEqual(picks(run(svc('lc', [rs(A, 1, 0, 255), rs(B, 1, 1, 0)]))), [[A, '1']]);
    // Weight 0 is skipped even when idle.
    assert.deepEqual(picks(run(svc('lc', [rs(A, 0, 0, 0), rs(B, 1, 5, 0)]))), [[B, '1']]);
  });

  it('with the list order unknown, each tied server is a world with its condition; a unique best is decided', () => {
    assert.deepEqual(worlds(run(svc('lc', [rs(A), rs(B), rs(C)]), undefined, 'unknown')), [A, B, C]);
    assert.deepEqual(worlds(run(svc('lc', [rs(A, 1, 2, 0), rs(B, 1, 1, 0), rs(C, 1, 1, 0)]), undefined, 'unknown')), [
      B,
      C,
    ]);
    assert.deepEqual(picks(run(svc('lc', [rs(A, 1, 2, 0), rs(B, 1, 0, 0), rs(C, 1, 1, 0)]), undefined, 'unknown')), [
      [B, '1'],
    ]);
  });

  it('wlc compares overhead / weight by cross-multiplication', () => {
    // A: 256 / 2 = 128, B: 256 / 1 → A; with equal ratios the first wins.
    assert.deepEqual(picks(run(svc('wlc', [rs(B, 1, 1, 0), rs(A, 2, 1, 0)]))), [[A, '1']]);
    assert.deepEqual(picks(run(svc('wlc', [rs(A, 2, 2, 0), rs(B, 1, 1, 0)]))), [[A, '1']]);
    assert.deepEqual(picks(run(svc('wlc', [rs(B, 1, 1, 0), rs(A, 2, 2, 0)]))), [[B, '1']]);
  });

  it('sed counts the new connection: (active + 1) / weight', () => {
    // A: (0+1)/1 = 1, B: (1+1)/3 = 2/3 → B.
    assert.deepEqual(picks(run(svc('sed', [rs(A, 1, 0, 0), rs(B, 3, 1, 0)]))), [[B, '1']]);
  });

  it('nq takes the first idle server, else sed', () => {
    assert.deepEqual(picks(run(svc('nq', [rs(A, 1, 3, 0), rs(B, 1, 0, 9), rs(C, 5, 0, 0)]))), [[B, '1']]);
    assert.deepEqual(picks(run(svc('nq', [rs(A, 1, 1, 0), rs(B, 3, 1, 0)]))), [[B, '1']]);
  });

  it('fo takes the highest weight; ovf skips servers whose active connections exceed their weight', () => {
    assert.deepEqual(picks(run(svc('fo', [rs(A, 1), rs(B, 5), rs(C, 5)]))), [[B, '1']]);
    assert.deepEqual(picks(run(svc('ovf', [rs(A, 1, 0, 0), rs(B, 5, 6, 0), rs(C, 3, 3, 0)]))), [[C, '1']]);
  });
});

describe('hash schedulers', () => {
  it('hash_32 is (val * 0x61C88647 mod 2^32) >> (32 - bits)', () => {
    // 172.18.0.100 = 0xAC120064; 0xAC120064 * 0x61C88647 mod 2^32 = 1465021372; 1465021372 >> 24 = 87.
    assert.equal(hash32(0xac120064, 8), 87);
    // 10.244.1.2 = 0x0AF40102 → 1304646542 >> 24 = 77; 192.168.10.99 = 0xC0A80A63 → 73577333 >> 24 = 4.
    assert.equal(hash32(0x0af40102, 8), 77);
    assert.equal(hash32(0xc0a80a63, 8), 4);
    // 10.96.0.10 = 0x0A60000A → 4067770054 >> 24 = 242.
    assert.equal(hash32(0x0a60000a, 8), 242);
  });

  it('sh: weight-1 buckets alternate, so bucket b holds list position b mod n', () => {
    const s = svc('sh', [rs(A), rs(B)]);
    assert.deepEqual(picks(run(s, '172.18.0.100')), [[B, '1']]); // bucket 87, odd
    assert.deepEqual(picks(run(s, '10.244.1.2')), [[B, '1']]); // bucket 77, odd
    assert.deepEqual(picks(run(s, '192.168.10.99')), [[A, '1']]); // bucket 4, even
    const r = run(s, '172.18.0.100');
    assert.match(r.kind === 'decided' ? r.worlds[0]!.picks[0]!.why : '', /hashes to bucket 87/);
  });

  it('sh fills weight consecutive buckets per server (ip_vs_sh_reassign)', () => {
    // Weights 2, 1: buckets A A B A A B …, so b mod 3 = 0 or 1 → A, 2 → B.
    const s = svc('sh', [rs(A, 2), rs(B, 1)]);
    assert.deepEqual(picks(run(s, '172.18.0.100')), [[A, '1']]); // 87 mod 3 = 0
    assert.deepEqual(picks(run(s, '192.168.10.99')), [[A, '1']]); // 4 mod 3 = 1
    assert.deepEqual(picks(run(s, '10.244.1.2')), [[B, '1']]); // 77 mod 3 = 2
  });

  it('sh-port adds the source port to the hashed value', () => {
    // 40000 + 0xAC120064 = 0xAC129CA4; * 0x61C88647 mod 2^32 >> 24 = 251 (bucket 87 without the port).
    const withPort = run(svc('sh', [rs(A), rs(B)], ['sh-port']), '172.18.0.100', 'kernel', 40000);
    assert.equal(hash32((40000 + 0xac120064) >>> 0, 8), 251);
    assert.deepEqual(picks(withPort), [[B, '1']]); // bucket 251, odd
    assert.deepEqual(picks(run(svc('sh', [rs(A), rs(B)]), '172.18.0.100', 'kernel', 40000)), [[B, '1']]);
    // 40000 + 0xC0A80A63 → bucket 168 (even) → A, where the port-less bucket 4 also gives A.
    assert.deepEqual(picks(run(svc('sh', [rs(A), rs(B)], ['sh-port']), '192.168.10.99', 'kernel', 40000)), [[A, '1']]);
    // With port 40001 the bucket is 10 (even again) → A; sh with three servers: 10 mod 3 = 1 → B.
    assert.deepEqual(picks(run(svc('sh', [rs(A), rs(B), rs(C)], ['sh-port']), '192.168.10.99', 'kernel', 40001)), [
      [B, '1'],
    ]);
  });

  it('sh with the list order unknown: any server can hold the bucket; each is a world', () => {
    assert.deepEqual(worlds(run(svc('sh', [rs(A), rs(B)]), '172.18.0.100', 'unknown')), [A, B]);
    const many = Array.from({ length: 9 }, (_, i) => rs(`10.244.${i}.2`));
    const r = run(svc('sh', many), '172.18.0.100', 'unknown');
    assert.equal(worlds(r).length, 9);
    assert.match(r.kind === 'decided' ? r.worlds[0]!.picks[0]!.why : '', /bucket 87, which holds list position 7 of 9/); // 87 mod 9 = 6
    assert.equal(run(svc('sh', [...many.slice(0, 8), rs('10.244.9.2', 2)]), '172.18.0.100', 'unknown').kind, 'unknown');
  });

  it('dh hashes the destination: every client of a VIP gets the same server', () => {
    // 10.96.0.10 → bucket 242; 242 mod 2 = 0 → A; 242 mod 3 = 2 → C.
    assert.deepEqual(picks(run(svc('dh', [rs(A), rs(B)]), '172.18.0.100')), [[A, '1']]);
    assert.deepEqual(picks(run(svc('dh', [rs(A), rs(B)]), '192.168.10.99')), [[A, '1']]);
    assert.deepEqual(picks(run(svc('dh', [rs(A), rs(B), rs(C)]))), [[C, '1']]);
  });

  it('hsiphash (64-bit) reproduces the kernel test vectors', () => {
    const key: [bigint, bigint] = [0x0706050403020100n, 0x0f0e0d0c0b0a0908n];
    const vectors = [
      0x050fc4dc, 0x7d57ca93, 0x4dc7d44d, 0xe7ddf7fb, 0x88d38328, 0x49533b67, 0xc59f22a7, 0x9bb11140, 0x8d299a8e,
      0x6c063de4, 0x92ff097f, 0xf94dc352, 0x57b4d9a2, 0x1229ffa7, 0xc0f95d34, 0x2a519956,
    ];
    vectors.forEach((v, len) =>
      assert.equal(
        hsiphash64(
          Uint8Array.from({ length: len }, (_, i) => i),
          key,
        ),
        v,
        `length ${len}`,
      ),
    );
  });

  it('mh fills the 4093-slot Maglev table and looks up source address + port (mh-port)', () => {
    const lookup = mhLookup([rs(A), rs(B)]);
    assert.equal(lookup.length, MH_TABLE_SIZE);
    assert.deepEqual([lookup.filter(x => x === 0).length, lookup.filter(x => x === 1).length], [2047, 2046]);
    // Slots and servers from the independent Python port: 172.18.0.100:40000 → slot 2440 → A,
    // 10.244.1.2:40000 → slot 3461 → B, in either list order.
    const s = svc('mh', [rs(A), rs(B)], ['mh-port']);
    const r = run(s, '172.18.0.100', 'kernel', 40000);
    assert.deepEqual(picks(r), [[A, '1']]);
    assert.match(
      r.kind === 'decided' ? r.worlds[0]!.picks[0]!.why : '',
      /source 172\.18\.0\.100 port 40000 hashes to slot 2440 of 4093/,
    );
    assert.deepEqual(picks(run(s, '10.244.1.2', 'kernel', 40000)), [[B, '1']]);
    assert.deepEqual(picks(run(s, '172.18.0.100', 'unknown', 40000)), [[A, '1']], 'the same whatever the list order');
  });
});

describe('schedulers that depend on state the files do not show', () => {
  it('lblc and lblcr are unknown unless the locality cache is assumed empty, then pick as wlc', () => {
    const s = svc('lblc', [rs(A, 1, 1, 0), rs(B, 1, 0, 0)]);
    const r = run(s);
    assert.equal(r.kind, 'unknown');
    assert.match(r.kind === 'unknown' ? r.reason : '', /cached for the destination address 10\.96\.0\.10/);
    const fresh = scheduleNewConnection({
      service: s,
      client: { src: parseAddr('1.2.3.4')!, sport: 1, dst: parseAddr('10.96.0.10')!, dport: 80 },
      order: 'kernel',
      localityCache: 'empty',
    });
    assert.deepEqual(picks(fresh), [[B, '1']]);
    assert.equal(run(svc('lblcr', [rs(A)])).kind, 'unknown');
  });

  it('twos and unknown scheduler names are unknown with a reason', () => {
    const twos = run(svc('twos', [rs(A), rs(B)]));
    const magic = run(svc('magic', [rs(A)]));
    assert.match(twos.kind === 'unknown' ? twos.reason : '', /random/);
    assert.match(magic.kind === 'unknown' ? magic.reason : '', /not a scheduler of net\/netfilter\/ipvs/);
  });

  it('every world of every scheduler sums to exactly 1', () => {
    for (const name of ['rr', 'wrr', 'lc', 'wlc', 'sed', 'nq', 'fo', 'ovf', 'sh', 'dh', 'mh']) {
      for (const order of ['kernel', 'unknown'] as const) {
        const r = run(svc(name, [rs(A, 2, 1, 3), rs(B, 1, 0, 0), rs(C, 3, 2, 1)]), '172.18.0.100', order);
        assert.equal(r.kind, 'decided', name);
        if (r.kind !== 'decided') continue;
        for (const w of r.worlds)
          assert.equal(format(w.picks.reduce((s, p) => add(s, p.probability), ZERO)), '1', `${name} ${order}`);
      }
    }
    assert.equal(format(rational(2n, 4n)), '1/2');
  });
});
