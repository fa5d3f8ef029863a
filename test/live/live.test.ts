/**
 * Issue 19: the prediction in the kernel's words, and live captures held against it. The captures are the
 * kernel oracle's own xtables-monitor / nft monitor trace output (test/fixtures/live/README.md): one from the
 * node the dump describes, one from a node with an extra FORWARD rule.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ROOT } from '../helpers/fixtures.ts';
import { cli } from '../helpers/cli.ts';

const BUNDLE = join(ROOT, 'test', 'fixtures', 'nodectx', 'seed-003-oracle');
const LIVE = join(ROOT, 'test', 'fixtures', 'live');
const LB = 'tcp 172.18.0.100:40000 -> 172.18.255.200:80';

describe('trace --format xtables-monitor', () => {
  it("prints the kernel's rule lines, verdict words and rule text for each outcome", () => {
    const r = cli('trace', BUNDLE, '--packet', LB, '--format', 'xtables-monitor');
    assert.equal(r.code, 0, r.err.join('\n'));
    const capture = readFileSync(join(LIVE, 'same-node.xtables-monitor.txt'), 'utf8').split('\n');
    // The rule lines of the real capture (after the tracer's own raw rule) without ids and handles.
    const strip = (l: string) => l.replace(/^TRACE: 2 [0-9a-f]+ /, '').replace(/:rule:0x[0-9a-f]+:/, ':rule:');
    const kernel = capture.filter(l => l.startsWith('TRACE:') && !l.includes(' raw:')).map(strip);
    const second = r.out.slice(r.out.findIndex(l => l.startsWith('# outcome 2')) + 1);
    assert.deepEqual(second.filter(l => l.startsWith('TRACE:')).map(strip), kernel);
    assert.ok(second.some(l => /^PACKET: 2 \S+ IN=eth0 OUT=veth2 SRC=172\.18\.0\.100 DST=10\.10\.4\.12 /.test(l)));
  });
});

describe('trace --live', () => {
  it('a capture from the same node aligns with the prediction', () => {
    const r = cli('trace', BUNDLE, '--packet', LB, '--live', join(LIVE, 'same-node.xtables-monitor.txt'));
    assert.equal(r.code, 0, r.err.join('\n'));
    const text = r.out.join('\n');
    assert.match(text, /same path as predicted outcome 2 \(forwarded → 10\.10\.4\.12:80 via veth2/);
  });

  it('a capture from a node whose rules differ points at the first differing rule', () => {
    const r = cli('trace', BUNDLE, '--packet', LB, '--live', join(LIVE, 'other-node.xtables-monitor.txt'));
    assert.equal(r.code, 0, r.err.join('\n'));
    const text = r.out.join('\n');
    assert.match(
      text,
      /kernel: +filter FORWARD -A FORWARD -d 10\.10\.0\.0\/16 -p tcp -m tcp --dport 80 -j DROP \(drop\)/,
    );
    assert.match(
      text,
      /predicted: filter FORWARD rule 2 \(line 23\) -A FORWARD -m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD \(jump KUBE-FORWARD\)/,
    );
    assert.match(
      text,
      /likely reason \(rule-differs\): the capture's node has a rule in filter FORWARD that the dump does not/,
    );
  });
});
