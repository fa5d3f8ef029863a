/**
 * The class analysis against brute force: every packet of a grid (each source, destination, port,
 * protocol, mark and client kind the kube-proxy fixtures name, loopback, and addresses they do not name) is
 * traced under both rulesets, and each packet that fares differently must fare exactly like a class the
 * report lists (same old and new fates, same exact probabilities); where the report says the dumps behave
 * identically, no grid packet may differ.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { describe, it } from 'node:test';
import type { PacketInput } from '../../src/engine/api.ts';
import { DIFF_FIXTURES, NODE, bruteForce, diffFixture, readPair } from './helpers.ts';

const SOURCES = [
  '203.0.113.10',
  '1.0.0.10',
  '10.10.0.1',
  '10.10.1.11',
  '10.10.1.12',
  '10.10.4.12',
  '10.10.2.13',
  '172.18.0.2',
  '10.11.0.1',
  '127.0.0.1',
];
const DESTINATIONS = [
  '10.200.1.1',
  '10.200.1.222',
  '10.200.1.230',
  '10.200.1.141',
  '10.200.1.116',
  '172.18.255.200',
  '172.18.255.201',
  '172.18.255.202',
  '172.18.0.4',
  '127.0.0.1',
  '10.10.1.11',
  '10.10.4.12',
  '10.10.1.12',
  '10.10.2.13',
  '172.18.0.2',
  '198.51.100.10',
];
const PORTS: [string, number][] = [80, 443, 9443, 6443, 30381, 31502, 32739, 32001, 22]
  .map(p => ['tcp', p] as [string, number])
  .concat([['udp', 80]]);

function grid(): PacketInput[] {
  const out: PacketInput[] = [];
  for (const dst of DESTINATIONS) {
    for (const [protocol, dport] of PORTS) {
      for (const src of SOURCES) out.push({ protocol, src, dst, dport, from: 'outside' });
      for (const src of ['172.18.0.4', '127.0.0.1'])
        for (const mark of [0, 0x4000, 0x8000]) out.push({ protocol, src, dst, dport, from: 'local', mark });
      out.push({ protocol, src: '203.0.113.10', dst, dport, from: 'outside', ctstate: 'ESTABLISHED' });
    }
  }
  return out;
}

describe('diff classes cover every packet that fares differently (brute force)', () => {
  const packets = grid();
  for (const name of readdirSync(DIFF_FIXTURES, { withFileTypes: true })
    .filter(d => d.isDirectory() && !['manifests', 'kernel', 'kernel-nft', 'nft'].includes(d.name))
    .map(d => d.name)
    .sort()) {
    it(name, () => {
      const [a, b] = readPair(name);
      const report = diffFixture(name);
      const differing = bruteForce(a, b, report, packets, NODE);
      if (!report.identical) assert.ok(differing > 0);
    });
  }
});
