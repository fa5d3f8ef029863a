/**
 * "Trace from here" (src/editor/trace-from-here.ts) on every kube-proxy Service, external and endpoint chain
 * of seed 003's worker dump (examples/seed-003/node-myk8s-worker.rules): the offered packet, traced again
 * here, enters the chain. The packet comes from one way into the chain, never an address of one path with
 * the port of another (the old suggestion for a KUBE-SEP chain was its pod IP with the NodePort).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parsePacketText, tracePacket } from '../../src/engine/api.ts';
import {
  entryPaths,
  fromHereSuggestions,
  packetsReaching,
  reachingCandidates,
} from '../../src/editor/trace-from-here.ts';
import { analyze, seedText } from './helpers.ts';

const NODES = [{}, { addresses: ['172.18.0.4'] }];

describe('Trace from here', () => {
  const idx = analyze(seedText());
  const nat = idx.ruleset.tables.get('nat')!;
  const chains = [...nat.chains.values()].filter(c => /^KUBE-(SVC|EXT|SEP)-/.test(c.name));

  it('the seed dump has the chains the issue names', () => {
    const kinds = new Set(chains.map(c => c.name.slice(0, 8)));
    assert.deepEqual([...kinds].sort(), ['KUBE-EXT', 'KUBE-SEP', 'KUBE-SVC']);
    assert.ok(chains.length >= 15, `${chains.length} chains`);
  });

  for (const node of NODES) {
    const label = node.addresses ? 'with the node address' : 'with no settings';
    it(`offers, on every KUBE-SVC, KUBE-EXT and KUBE-SEP chain, a packet that reaches it (${label})`, () => {
      for (const chain of chains) {
        const offered = packetsReaching(idx, 'nat', chain, node);
        assert.ok(offered.length > 0, `${chain.name}: nothing offered`);
        const parsed = parsePacketText(offered[0]!.packet);
        assert.ok(parsed.ok, offered[0]!.packet);
        const r = tracePacket(idx.ruleset, parsed.input, { node });
        assert.ok(r.ok);
        // It enters the chain without resting on an undecided match (a guess is not a way in).
        const enters = r.trace.outcomes.some(
          o =>
            o.assumptions.length === 0 &&
            o.events.some(e => e.kind === 'chain' && e.table === 'nat' && e.chain === chain.name),
        );
        assert.ok(enters, `${chain.name}: ${offered[0]!.packet} does not reach it`);
      }
    });
  }

  it('builds each packet from one way in: a NodePort goes to the node, a cluster IP keeps its own port', () => {
    const sep = idx.chain('nat', 'KUBE-SEP-ZNBEHD3XV5ZTBRAT')!; // svc1's endpoint 10.10.1.11:80
    const packets = reachingCandidates(idx, 'nat', sep).map(c => c.packet);
    assert.ok(packets.includes('tcp 203.0.113.10 -> 10.200.1.230:80'), packets.join('\n'));
    assert.ok(packets.includes('tcp 203.0.113.10 -> 172.18.255.200:80'), packets.join('\n'));
    assert.ok(packets.includes('tcp 203.0.113.10 -> node:30381'), packets.join('\n'));
    // Never the pod address with the NodePort, nor the cluster IP with it.
    assert.ok(!packets.some(p => /10\.10\.1\.11:30381|10\.200\.1\.230:30381/.test(p)), packets.join('\n'));
    assert.ok(entryPaths(idx, 'nat', sep).length >= 3);
  });

  it("names the Service of each way in, for ordering that Service's suggestions first", () => {
    const ext = idx.chain('nat', 'KUBE-EXT-DLGPAL4ZCYSJ7UPR')!;
    const offered = packetsReaching(idx, 'nat', ext, {});
    assert.ok(
      offered.every(o => o.service === 'default/svc1:svc1-webport'),
      JSON.stringify(offered),
    );
  });

  it("lists the packets that reach the chain first, then that Service's suggestions, then the rest", () => {
    const sep = idx.chain('nat', 'KUBE-SEP-ZNBEHD3XV5ZTBRAT')!;
    const reaching = packetsReaching(idx, 'nat', sep, {});
    const found = [
      { text: 'tcp 203.0.113.10 -> 10.200.1.1:443', label: 'default/kubernetes:https cluster IP', line: 92 },
      { text: 'tcp 203.0.113.10 -> 10.10.1.11:80', label: 'default/svc1:svc1-webport (after DNAT)', line: 91 },
      { text: reaching[0]!.packet, label: 'default/svc1:svc1-webport loadbalancer IP', line: 95 },
    ];
    const list = fromHereSuggestions(found, reaching, sep.name);
    assert.deepEqual(
      list.slice(0, reaching.length).map(s => s.text),
      reaching.map(r => r.packet),
    );
    assert.match(list[0]!.label, /^reaches KUBE-SEP-ZNBEHD3XV5ZTBRAT · default\/svc1:svc1-webport loadbalancer IP$/);
    assert.deepEqual(
      list.slice(reaching.length).map(s => s.text),
      ['tcp 203.0.113.10 -> 10.10.1.11:80', 'tcp 203.0.113.10 -> 10.200.1.1:443'],
    );
  });
});
