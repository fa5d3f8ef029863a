/**
 * "Compare with Live Trace…" without VS Code (src/editor/live-compare.ts, through the engine worker): the
 * packet a capture traced, and a capture held against the dump's prediction — a capture of the same packet
 * from the kernel oracle's own run aligns; one from a node whose rules differ parts at the first differing
 * rule, which is marked in the dump. Captures: test/fixtures/live (recorded from the oracle's runs).
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { capturePacket } from '../../src/editor/live-compare.ts';
import { EngineHost } from '../../src/worker/engine-host.ts';
import type { EngineRequest, LiveResult } from '../../src/shared/engine-protocol.ts';

const FIX = join(import.meta.dirname, '../fixtures');
const BUNDLE = join(FIX, 'nodectx/seed-003-oracle');
const capture = (name: string) => readFileSync(join(FIX, 'live', name), 'utf8');
const LB = 'tcp 172.18.0.100:40000 -> 172.18.255.200:80 in=eth0';

async function hostWithBundle() {
  const host = new EngineHost();
  let id = 0;
  const ask = async <T>(method: string, params: object): Promise<T> => {
    const r = await host.handle({ id: ++id, method, params: { key: 'd', ...params } } as EngineRequest);
    if (!r.ok) throw new Error(r.error);
    return r.result as T;
  };
  const dump = readFileSync(join(BUNDLE, 'iptables-save.txt'), 'utf8');
  await ask('load', { file: 'iptables-save.txt', maxBytes: 1 << 26, source: { text: dump } });
  const nodeFiles = readdirSync(BUNDLE)
    .filter(n => /^(ip-|sysctl)/.test(n))
    .map(n => ({ file: n, text: readFileSync(join(BUNDLE, n), 'utf8') }));
  return { ask, nodeFiles, dump };
}

describe('live trace: the packet a capture traced', () => {
  it('reads it off an xtables-monitor capture (TCP by its flags, arriving on eth0)', () => {
    const p = capturePacket(capture('same-node.xtables-monitor.txt'));
    assert.equal(p.format, 'xtables-monitor');
    assert.equal(p.packet, LB);
    assert.equal(p.note, null);
  });

  it('reads it off an nft monitor trace', () => {
    const p = capturePacket(capture('kube-proxy.nft-monitor.txt'));
    assert.equal(p.format, 'nft-monitor');
    assert.equal(p.packet, 'tcp 10.0.0.2:42001 -> 172.30.0.41:80 in=veth5');
  });

  it('says what it assumed when the capture does not name the protocol, and when it is no capture', () => {
    const p = capturePacket(
      'PACKET: 2 7f1b22c4 IN=eth0 SRC=10.1.1.1 DST=10.2.2.2 LEN=44 SPORT=5353 DPORT=53\nTRACE: 2 7f1b22c4 raw:PREROUTING:policy:ACCEPT\n',
    );
    assert.equal(p.packet, 'tcp 10.1.1.1:5353 -> 10.2.2.2:53 in=eth0');
    assert.match(p.note ?? '', /does not name the protocol: tcp is assumed/);
    const none = capturePacket('hello\nworld\n');
    assert.equal(none.format, null);
    assert.equal(none.packet, null);
  });
});

describe('live trace: held against the prediction in the engine worker', () => {
  it("a capture of the same packet from the node's own run takes the predicted path", async () => {
    const { ask, nodeFiles } = await hostWithBundle();
    const r = await ask<LiveResult>('liveCompare', {
      packet: LB,
      capture: capture('same-node.xtables-monitor.txt'),
      captureName: 'same-node.xtables-monitor.txt',
      node: {},
      nodeFiles,
    });
    assert.ok(r.ok, r.ok ? '' : r.error);
    assert.equal(r.view.result, 'same-path');
    assert.equal(r.view.severity, 'info');
    assert.match(r.view.message, /takes the predicted path: outcome 2 \(forwarded → 10\.10\.4\.12:80 via veth2/);
    assert.equal(r.view.line, null);
    // The predicted path travels as a trace does (CodeLens and highlights).
    assert.ok(r.verdicts.length > 5);
  });

  it('a capture from a node whose rules differ parts at the first differing rule, marked in the dump', async () => {
    const { ask, nodeFiles, dump } = await hostWithBundle();
    const r = await ask<LiveResult>('liveCompare', {
      packet: LB,
      capture: capture('other-node.xtables-monitor.txt'),
      captureName: 'other-node.xtables-monitor.txt',
      node: {},
      nodeFiles,
    });
    assert.ok(r.ok, r.ok ? '' : r.error);
    assert.equal(r.view.result, 'parted');
    assert.equal(r.view.severity, 'warning');
    assert.match(r.view.message, /kernel: filter FORWARD -A FORWARD -d 10\.10\.0\.0\/16 .*-j DROP/);
    assert.match(
      r.view.message,
      /Likely reason: the capture's node has a rule in filter FORWARD that the dump does not/,
    );
    // The mark: the dump's rule where the kernel did something else (FORWARD rule 2, the KUBE-FORWARD jump).
    assert.equal(r.view.line, 22);
    assert.match(dump.split('\n')[r.view.line!]!, /^-A FORWARD .*-j KUBE-FORWARD$/);
    assert.match(r.view.mark ?? '', /parts here \(rule-differs\)/);
    assert.ok(r.view.details.some(l => /likely reason \(rule-differs\)/.test(l)));
  });

  it('a capture that lacks the traced packet says so', async () => {
    const { ask } = await hostWithBundle();
    const r = await ask<LiveResult>('liveCompare', {
      packet: 'udp 10.9.9.9:53 -> 10.8.8.8:53 in=eth0',
      capture: capture('same-node.xtables-monitor.txt'),
      captureName: 'c.txt',
      node: {},
    });
    assert.ok(r.ok);
    assert.equal(r.view.result, 'no-capture');
    assert.match(r.view.message, /nothing to compare: no traced packet 10\.9\.9\.9 -> 10\.8\.8\.8:53/);
  });
});
