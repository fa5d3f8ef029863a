/**
 * kube-proxy's chain-name hashing (src/engine/kube/hash.ts) against Node's own SHA-256: short and
 * multi-block messages, non-ASCII (UTF-8) text, and every name built from the digest.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { endpointChainName, hash8, portProtoHash, serviceChainNames, sha256 } from '../../src/engine/kube/hash.ts';
import { hashAndTruncate } from '../../src/engine/kube/modes/nftables/names.ts';

/** RFC 4648 base32 of the digest's leading bits, written out bit by bit. */
function base32(digest: Buffer, chars: number): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  const bits = [...digest].map(b => b.toString(2).padStart(8, '0')).join('');
  let out = '';
  for (let i = 0; i < chars; i++) out += alphabet[parseInt(bits.slice(i * 5, i * 5 + 5), 2)];
  return out;
}

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/** Messages of every length around the block boundaries (55/56/64 bytes) and non-ASCII ones. */
function messages(): string[] {
  const out: string[] = [];
  for (let len = 0; len < 200; len++) out.push(Array.from({ length: len }, (_, k) => 'ns/svc:p-0.1'[k % 12]).join(''));
  out.push('default/svc1:é', 'kube-system/dns:名前', '😀'.repeat(40), 'a\u0000b');
  return out;
}

test('sha256 agrees with node:crypto', () => {
  for (const m of messages()) assert.deepEqual(Buffer.from(sha256(m)), digest(m), JSON.stringify(m));
});

test('chain names: base32 of sha256, as kube-proxy builds them', () => {
  for (const m of messages()) {
    const h = base32(digest(`${m}tcp`), 16);
    assert.equal(portProtoHash(m, 'tcp'), h);
    assert.deepEqual(serviceChainNames(m, 'TCP'), {
      svc: `KUBE-SVC-${h}`,
      svl: `KUBE-SVL-${h}`,
      ext: `KUBE-EXT-${h}`,
      fw: `KUBE-FW-${h}`,
    });
    assert.equal(endpointChainName(m, 'UDP', '10.0.0.1:53'), `KUBE-SEP-${base32(digest(`${m}udp10.0.0.1:53`), 16)}`);
    assert.equal(hash8(m), base32(digest(m), 8));
  }
});

test('known names from kube-proxy fixtures', () => {
  // pkg/proxy/iptables/proxier_test.go: ns1/svc1:p80 tcp → KUBE-SVC-XPGD46QRK7WJZT7O, 10.180.0.1:80 → KUBE-SEP-SXIVWICOYRO3J4NJ.
  assert.equal(serviceChainNames('ns1/svc1:p80', 'TCP').svc, 'KUBE-SVC-XPGD46QRK7WJZT7O');
  assert.equal(endpointChainName('ns1/svc1:p80', 'TCP', '10.180.0.1:80'), 'KUBE-SEP-SXIVWICOYRO3J4NJ');
  assert.equal(hashAndTruncate('ns1/svc1/tcp/p80'), 'ULMVA6XW-ns1/svc1/tcp/p80');
});
