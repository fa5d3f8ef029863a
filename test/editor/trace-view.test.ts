import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chainLenses, referencesTitle } from '../../src/editor/chain-lens.ts';
import { traceDiagram } from '../../src/editor/diagram.ts';
import { fieldsFromText } from '../../src/editor/packet-fields.ts';
import { traceText } from '../../src/editor/run-trace.ts';
import { lensTitle, traceLineVerdicts, traceMarks } from '../../src/editor/trace-lens.ts';
import type { FlowSegment } from '../../src/shared/protocol.ts';
import { analyze, dump, lineOf, seedText } from './helpers.ts';

const seed = seedText();
const PACKET = 'tcp 172.18.0.100 -> 172.18.255.200:80';
const NODE = { addresses: ['172.18.0.4'] };

function seedTrace() {
  const idx = analyze(seed);
  const r = traceText(idx, PACKET, NODE);
  assert.ok(r.ok);
  return r.trace;
}

function allNodes(s: FlowSegment): FlowSegment['nodes'][number][] {
  return [...s.nodes, ...s.branches.flatMap(b => allNodes(b.segment))];
}

describe('CodeLens above chains', () => {
  it('one per chain, on its first rule (an empty chain: its declaration), with who jumps to it', () => {
    const idx = analyze(seed);
    const lenses = chainLenses(idx);
    assert.equal(lenses.length, 36);
    const svc = lenses.find(l => l.chain === 'KUBE-SVC-DLGPAL4ZCYSJ7UPR')!;
    assert.equal(svc.range.start.line, lineOf(seed, '-A KUBE-SVC-DLGPAL4ZCYSJ7UPR'));
    assert.equal(referencesTitle(svc), 'referenced by 2');
    assert.deepEqual(
      svc.references.map(r => r.line).sort((a, b) => a - b),
      [
        lineOf(seed, '-A KUBE-EXT-DLGPAL4ZCYSJ7UPR -j KUBE-SVC'),
        lineOf(seed, '"default/svc1:svc1-webport cluster IP" -m tcp --dport 80 -j KUBE-SVC-DLGPAL4ZCYSJ7UPR'),
      ].sort((a, b) => a - b),
    );
    const canary = lenses.find(l => l.chain === 'KUBE-KUBELET-CANARY')!;
    assert.equal(canary.range.start.line, lineOf(seed, ':KUBE-KUBELET-CANARY'));
    assert.equal(referencesTitle(canary), 'not referenced');
    const pre = lenses.find(l => l.chain === 'PREROUTING')!;
    assert.equal(referencesTitle(pre, idx.chain('nat', 'PREROUTING')), 'hook PREROUTING · policy ACCEPT');
  });
});

describe('after a trace: CodeLens, highlights and the flow diagram (seed 003, client → LoadBalancer IP)', () => {
  const trace = seedTrace();

  it('marks each evaluated rule with its step and probability, or why it missed', () => {
    const v = traceLineVerdicts(trace);
    const title = (needle: string) => lensTitle(v.get(lineOf(seed, needle))!, trace.outcomes.length);
    assert.equal(title('-A PREROUTING -m comment'), '✓ matched · step 1 · 100%');
    assert.equal(
      title('-d 172.18.255.200/32 -p tcp -m comment --comment "default/svc1:svc1-webport loadbalancer IP"'),
      '✓ matched · step 2 · 100%',
    );
    assert.equal(
      title('-d 10.200.1.1/32 -p tcp -m comment --comment "default/kubernetes:https cluster IP"'),
      '✗ -d 10.200.1.1/32 ∌ 172.18.255.200',
    );
    assert.equal(
      title('-A KUBE-SVC-DLGPAL4ZCYSJ7UPR -m comment --comment "default/svc1:svc1-webport -> 10.10.4.12:80"'),
      '✓ matched · step 6 · 50%',
    );
    assert.match(
      title('-A KUBE-SVC-DLGPAL4ZCYSJ7UPR -m comment --comment "default/svc1:svc1-webport -> 10.10.1.11:80"'),
      /^✓ matched · step 6 · 50% {2}✗ random .* not chosen · 50%$/,
    );
    assert.equal(v.has(lineOf(seed, '-A INPUT -j KUBE-FIREWALL')), false, 'INPUT is not on a forwarded path');
  });

  it('highlights matched and missed lines separately', () => {
    const marks = traceMarks(traceLineVerdicts(trace));
    assert.ok(marks.matched.includes(lineOf(seed, '-A PREROUTING -m comment')));
    assert.ok(
      marks.missed.includes(
        lineOf(seed, '-d 10.200.1.1/32 -p tcp -m comment --comment "default/kubernetes:https cluster IP"'),
      ),
    );
    assert.deepEqual(marks.assumed, []);
    assert.equal(new Set([...marks.matched, ...marks.missed]).size, marks.matched.length + marks.missed.length);
  });

  it('draws one branch per endpoint with its exact share, the DNAT and masquerade rewrites, and end states', () => {
    const d = traceDiagram(trace, 'node-myk8s-worker.rules', PACKET, fieldsFromText(PACKET)!);
    assert.deepEqual(d.fields, {
      protocol: 'tcp',
      src: '172.18.0.100',
      sport: '',
      dst: '172.18.255.200',
      dport: '80',
      from: '',
      in: '',
      state: '',
      mark: '',
    });
    assert.deepEqual(
      d.flow.branches.map(b => [b.percent, b.exact]),
      [
        ['50%', '1/2'],
        ['50%', '1/2'],
      ],
    );
    assert.deepEqual(
      d.flow.nodes.slice(0, 3).map(n => n.label),
      ['PREROUTING', 'nat PREROUTING', '#1 jump KUBE-SERVICES'],
    );
    const nodes = allNodes(d.flow);
    assert.deepEqual(
      nodes.filter(n => n.rewrite?.startsWith('dst')).map(n => n.rewrite),
      ['dst → 10.10.1.11:80', 'dst → 10.10.4.12:80'],
    );
    assert.equal(nodes.filter(n => n.rewrite?.startsWith('src → 172.18.0.4')).length, 2);
    const ends = nodes.filter(n => n.kind === 'end').map(n => n.label);
    assert.deepEqual(ends, [
      '50% forwarded → 10.10.1.11:80 via eth0 (DNAT 10.10.1.11:80) masqueraded to 172.18.0.4',
      '50% forwarded → 10.10.4.12:80 via eth0 (DNAT 10.10.4.12:80) masqueraded to 172.18.0.4',
    ]);
    const rule = nodes.find(n => n.label === '#1 jump KUBE-SERVICES')!;
    assert.equal(rule.line, lineOf(seed, '-A PREROUTING -m comment'));
    assert.deepEqual(
      d.hooks.filter(h => h.visited).map(h => `${h.hook} ${h.percent}`),
      ['PREROUTING 100%', 'routing 100%', 'FORWARD 100%', 'POSTROUTING 100%'],
    );
    assert.equal(d.omitted, 0);
    assert.ok(nodes.every(n => !n.flagged));
  });

  it('flags what the engine cannot decide, on the lens and in the diagram', () => {
    const text = dump([
      '*filter',
      ':INPUT ACCEPT [0:0]',
      ':FORWARD ACCEPT [0:0]',
      ':OUTPUT ACCEPT [0:0]',
      '-A FORWARD -m u32 --u32 "0>>22&0x3C@ 12>>26&0x3C@ 0&0xFFFF=0x1000" -j DROP',
      'COMMIT',
    ]);
    const r = traceText(analyze(text), 'udp 192.0.2.1 -> 198.51.100.2:53', { addresses: ['10.0.0.1'] });
    assert.ok(r.ok);
    const v = traceLineVerdicts(r.trace);
    assert.equal(v.get(4)!.assumed, true);
    assert.deepEqual(traceMarks(v).assumed, [4]);
    const d = traceDiagram(
      r.trace,
      't',
      'udp 192.0.2.1 -> 198.51.100.2:53',
      fieldsFromText('udp 192.0.2.1 -> 198.51.100.2:53')!,
    );
    const nodes = allNodes(d.flow);
    assert.ok(nodes.some(n => n.kind === 'assume' && n.flagged));
    assert.equal(d.flow.branches.length, 2);
    assert.ok(d.outcomes.every(o => o.flagged));
  });

  it('says in the outcome list when an outcome stands for many merged paths, as the CLI does', () => {
    // 40 random branches that set mark bits no rule reads: one outcome of 2^40 paths. The graph draws one
    // of them (its branches as "1 way"), so the list must say it stands for the others.
    const marks = Array.from(
      { length: 40 },
      (_, i) =>
        `-A PREROUTING -m statistic --mode random --probability 0.50000000000 -j MARK --or-mark 0x${((1 << (i % 32)) >>> 0).toString(16)}`,
    );
    const packet = 'tcp 1.2.3.4 -> 10.0.0.1:22';
    const r = traceText(analyze(dump(['*mangle', ':PREROUTING ACCEPT [0:0]', ...marks, 'COMMIT'])), packet, {
      addresses: ['10.0.0.1'],
    });
    assert.ok(r.ok);
    const d = traceDiagram(r.trace, 't', packet, fieldsFromText(packet)!);
    assert.deepEqual(
      d.outcomes.map(o => o.merged),
      [
        '1099511627776 paths end here alike; they differ in packet mark bits 0xffffffff, which no rule reads. The graph draws one of them.',
      ],
    );
    assert.equal(traceDiagram(seedTrace(), 't', PACKET, fieldsFromText(PACKET)!).outcomes[0]!.merged, null);
  });

  it('says when there is nothing to trace or the packet is wrong', () => {
    const empty = traceText(analyze('# just a comment\n'), PACKET, NODE);
    assert.ok(!empty.ok && /Nothing to trace/.test(empty.error));
    const bad = traceText(analyze(seed), 'tcp 1.2.3.4 => nowhere', NODE);
    assert.ok(!bad.ok);
  });
});
