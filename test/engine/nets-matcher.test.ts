/**
 * `netsMatcher` (net/addr.ts) answers "is the address in any of these nets" as `nets.some(netContains)`
 * does, with the work per address following the distinct masks, not the nets (a node's addresses against a
 * long nodePortAddresses list were their product: 50,000 × 50,000 took `synth` 7–12 s of CPU).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { type Addr, formatIPv4, netContains, netsMatcher, parseAddr, parseNet } from '../../src/engine/net/addr.ts';

const v4 = fc.integer({ min: 0, max: 0xffffffff }).map(formatIPv4);
const v6 = fc
  .array(fc.integer({ min: 0, max: 0xffff }), { minLength: 8, maxLength: 8 })
  .map(ws => ws.map(w => w.toString(16)).join(':'));
// Prefixes, and (IPv4) a dotted mask now and then; near addresses so that nets and addresses often meet.
const net = fc.oneof(
  fc.tuple(v4, fc.integer({ min: 0, max: 32 })).map(([a, p]) => `${a}/${p}`),
  fc.tuple(v4, v4).map(([a, m]) => `${a}/${m}`),
  fc.tuple(v6, fc.integer({ min: 0, max: 128 })).map(([a, p]) => `${a}/${p}`),
  fc.constantFrom('10.0.0.0/8', '10.1.0.0/16', '192.168.0.0/24', 'fd00::/8', '0.0.0.0/0'),
);
const addr = fc.oneof(v4, v6, fc.constantFrom('10.1.2.3', '192.168.0.7', 'fd00::1', '127.0.0.1'));

describe('netsMatcher', () => {
  it('agrees with nets.some(netContains) on random nets and addresses of both families', () => {
    fc.assert(
      fc.property(fc.array(net, { maxLength: 12 }), fc.array(addr, { maxLength: 12 }), (netTexts, addrTexts) => {
        const nets = netTexts.map(t => parseNet(t)).filter(n => n !== null);
        const matches = netsMatcher(nets);
        for (const t of addrTexts) {
          const a = parseAddr(t) as Addr;
          assert.equal(
            matches(a),
            nets.some(n => netContains(n, a)),
            `${t} in ${netTexts.join(' ')}`,
          );
        }
      }),
      { seed: 12, numRuns: 500 },
    );
  });
});
