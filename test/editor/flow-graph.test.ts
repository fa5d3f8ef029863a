/**
 * The flow graph (src/editor/flow-graph) and its layout (webview/graph-layout.ts, dagre), without VS Code:
 * a 12-endpoint Service reads as one load-balancing node with 12 edges at 1/12 and one shared tail, and fits
 * one screen; NAT rewrites sit on the edges where they happen; the non-matching walk is collapsed; drops end
 * in an error node; the edges into the ends add up to exactly 1.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { type Rational, add, rational } from '../../src/engine/api.ts';
import { approxFraction, parseExact } from '../../src/editor/flow-graph/fraction.ts';
import { flowGraph } from '../../src/editor/flow-graph/build.ts';
import { traceText } from '../../src/editor/run-trace.ts';
import type { FlowGraph } from '../../src/shared/protocol.ts';
import { layoutGraph, visibleRows } from '../../webview/graph-layout.ts';
import { readFixture } from '../helpers/fixtures.ts';
import { analyze, dump, seedText } from './helpers.ts';

/** A monospace 12px font's advance (the panel measures the real font; this is what tests assume). */
const MONO = (t: string) => t.length * 7.2;

function graphOf(text: string, packet: string, addresses: string[] = []): FlowGraph {
  const r = traceText(analyze(text), packet, { addresses });
  assert.ok(r.ok, r.ok ? '' : String(r.error));
  return flowGraph(r.trace);
}

function laneNodes(g: FlowGraph, lane: string) {
  return g.nodes.filter(n => n.lane === lane);
}

function sum(list: readonly string[]): Rational {
  return list.map(e => parseExact(e)!).reduce(add, rational(0n, 1n));
}

describe('flow graph', () => {
  // kube-proxy v1.31 rules `packetlens synth` wrote for twelve-endpoints.yaml (a Deployment of 12 replicas
  // behind a NodePort Service): an 11-rule `-m statistic` cascade, 1/12 each.
  const twelve = readFixture('flow-graph', 'twelve-endpoints.rules');

  it('a 12-endpoint Service: one load-balance node, 12 edges at 8.33 % (≈ 1/12), one shared tail', () => {
    const g = graphOf(twelve, 'tcp 203.0.113.10 -> node:30080');
    const balance = g.nodes.filter(n => n.kind === 'balance');
    assert.equal(balance.length, 1);
    assert.match(balance[0]!.title, /^nat KUBE-SVC-/);
    assert.equal(balance[0]!.chooser, 'statistic');
    const out = g.edges.filter(e => e.from === balance[0]!.id);
    assert.equal(out.length, 12);
    for (const e of out) {
      assert.equal(e.percent, '8.33%');
      assert.equal(e.approx, '≈ 1/12');
      assert.ok(e.balance);
      assert.match(e.rewrites[0]!, /^dst → 10\.244\.0\.\d+:8080$/);
      assert.match(e.via!, /^nat KUBE-SEP-/);
    }
    assert.equal(new Set(out.map(e => e.rewrites[0])).size, 12, 'twelve different endpoints');
    assert.equal(new Set(out.map(e => e.to)).size, 1, 'all twelve meet again');
    // One FORWARD, one POSTROUTING, one end: the tail is shared.
    assert.deepEqual(
      g.lanes.map(l => l.id),
      ['PREROUTING', 'FORWARD', 'POSTROUTING'],
    );
    assert.equal(laneNodes(g, 'FORWARD').length, 1);
    assert.equal(laneNodes(g, 'POSTROUTING').length, 1);
    assert.equal(g.nodes.filter(n => n.kind === 'end').length, 1);
    // Exact shares: the twelve edges add up to exactly 1.
    assert.deepEqual(sum(out.map(e => e.exact.replace('/2^31', '/2147483648'))), rational(1n, 1n));
  });

  it('a 12-endpoint Service fits one screen (1920 × 1080 less the editor’s chrome)', () => {
    const g = graphOf(twelve, 'tcp 203.0.113.10 -> node:30080');
    const layout = layoutGraph(g, false, MONO);
    assert.ok(layout.width <= 1800, `width ${layout.width}`);
    assert.ok(layout.height <= 800, `height ${layout.height}`);
    // Nothing overlaps: node boxes are disjoint.
    const boxes = layout.nodes;
    for (const a of boxes)
      for (const b of boxes)
        if (a !== b)
          assert.ok(
            a.x + a.w <= b.x || b.x + b.w <= a.x || a.y + a.h <= b.y || b.y + b.h <= a.y,
            `${a.node.id} overlaps ${b.node.id}`,
          );
  });

  it('the seed LoadBalancer trace: 1/2 each, DNAT and MASQUERADE on the edges, the mark where it is set', () => {
    const g = graphOf(seedText(), 'tcp 172.18.0.100 -> 172.18.255.200:80', ['172.18.0.4']);
    const balance = g.nodes.find(n => n.kind === 'balance')!;
    const out = g.edges.filter(e => e.from === balance.id);
    assert.deepEqual(out.map(e => [e.approx, e.rewrites.join()]).sort(), [
      ['1/2', 'dst → 10.10.1.11:80'],
      ['1/2', 'dst → 10.10.4.12:80'],
    ]);
    const end = g.nodes.find(n => n.kind === 'end')!;
    const last = g.edges.find(e => e.to === end.id)!;
    assert.deepEqual(last.rewrites, ['src → 172.18.0.4']);
    const pre = laneNodes(g, 'PREROUTING').find(n => n.kind === 'rules')!;
    const mark = pre.rows.find(r => r.where === 'nat KUBE-MARK-MASQ #1')!;
    assert.equal(mark.rewrite, 'mark 0x0 → 0x4000');
  });

  it('the walk through chains where nothing matched is collapsed by default, and can be shown', () => {
    const g = graphOf(seedText(), 'tcp 172.18.0.100 -> 172.18.255.200:80', ['172.18.0.4']);
    const fwd = laneNodes(g, 'FORWARD')[0]!;
    const walk = fwd.rows.find(r => r.where === 'filter FORWARD #1')!;
    assert.ok(walk.walk, 'FORWARD #1 jumps into KUBE-PROXY-FIREWALL, where nothing matches');
    assert.match(walk.why, /nothing in filter KUBE-PROXY-FIREWALL matched/);
    assert.ok(!fwd.rows.find(r => r.where === 'filter KUBE-FORWARD #2')!.walk);
    assert.ok(!visibleRows(fwd, false).includes(walk));
    assert.ok(visibleRows(fwd, true).includes(walk));
    const collapsed = layoutGraph(g, false, MONO).nodes.find(n => n.node.id === fwd.id)!;
    const expanded = layoutGraph(g, true, MONO).nodes.find(n => n.node.id === fwd.id)!;
    assert.equal(collapsed.hiddenWalks, 1);
    assert.equal(expanded.hiddenWalks, 0);
  });

  it('a dropped packet ends in an error node; rows say why they matched', () => {
    const text = dump([
      '*filter',
      ':INPUT ACCEPT [0:0]',
      ':FORWARD ACCEPT [0:0]',
      ':OUTPUT ACCEPT [0:0]',
      '-A INPUT -p tcp --dport 22 -j DROP',
      'COMMIT',
    ]);
    const g = graphOf(text, 'tcp 198.51.100.7 -> 10.0.0.1:22', ['10.0.0.1']);
    const end = g.nodes.find(n => n.kind === 'end')!;
    assert.equal(end.tone, 'error');
    assert.match(end.title, /^dropped/);
    const drop = g.nodes.flatMap(n => n.rows).find(r => r.where === 'filter INPUT #1')!;
    assert.equal(drop.tone, 'error');
    assert.match(drop.why, /^matched: DROP/);
  });

  it('the edges into the ends carry exactly all packets', () => {
    for (const [text, packet, ip] of [
      [twelve, 'tcp 203.0.113.10 -> node:30080', []],
      [seedText(), 'tcp 172.18.0.100 -> 172.18.255.200:80', ['172.18.0.4']],
    ] as const) {
      const g = graphOf(text, packet, [...ip]);
      const ends = new Set(g.nodes.filter(n => n.kind === 'end').map(n => n.id));
      const into = g.edges.filter(e => ends.has(e.to)).map(e => e.exact.replace('/2^31', '/2147483648'));
      assert.deepEqual(sum(into), rational(1n, 1n), packet);
    }
  });

  it('short fractions: exact when short, ≈ when close, nothing when neither', () => {
    assert.equal(approxFraction(rational(1n, 2n)), '1/2');
    assert.equal(approxFraction(rational(715827883n, 2147483648n)), '≈ 1/3');
    assert.equal(approxFraction(rational(1n, 1n)), '1');
    assert.equal(approxFraction(rational(1234567n, 2147483648n)), '');
  });
  it('an nft numgen verdict map is one load-balance node that says numgen', () => {
    const text = readFileSync(
      fileURLToPath(new URL('../../examples/nftables/kube-proxy.nft', import.meta.url)),
      'utf8',
    );
    const g = graphOf(text, 'tcp 10.0.0.2 -> 172.30.0.44:80');
    const balance = g.nodes.filter(n => n.kind === 'balance');
    assert.equal(balance.length, 1);
    assert.equal(balance[0]!.chooser, 'numgen');
    assert.equal(g.edges.filter(e => e.from === balance[0]!.id).length, 2);
  });
});
