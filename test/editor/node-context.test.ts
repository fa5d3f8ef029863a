/**
 * The node context of a dump (src/editor/node-context.ts): ordered sources (choice for the file or its
 * folder, settings, what the files suggest, assumed), what the engine is given, the status text, and the
 * quick inputs that replace hand-written JSON for interfaces and routes.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { tracePacket, parseIptables, parsePacketText, inferNodeAddresses } from '../../src/engine/api.ts';
import {
  choiceFor,
  choiceLayer,
  inferredLayer,
  nodeStatusText,
  nodeSuggestions,
  parseAddressesInput,
  parseInterfaceInput,
  parseRouteInput,
  resolveNodeContext,
  settingsLayer,
  withField,
} from '../../src/editor/node-context.ts';
import { seedText } from './helpers.ts';

const nodeObject = [{ address: '172.18.0.4', from: 'file:///w/seed-003/nodes.yaml:12', why: 'Node myk8s-worker' }];
const fromDump = [
  { address: '10.0.0.9', iface: 'eth1', from: 'a.rules:40', why: 'SNAT --to-source 10.0.0.9' },
  { address: '10.96.0.10', iface: 'kube-ipvs0', from: 'ipset KUBE-IPVS-IPS (line 3)', why: 'IPVS', extra: true },
];
const noSettings = settingsLayer({ addresses: [], uplink: 'eth0', interfaces: [], routes: [], routeLocalnet: false });

describe('node context: ordered sources', () => {
  it('assumes a node, and says so, when nothing knows its address', () => {
    const ctx = resolveNodeContext([noSettings, inferredLayer([], [])]);
    assert.equal(ctx.kind, 'assumed');
    assert.equal(nodeStatusText(ctx), 'Node: assumed');
    assert.deepEqual(ctx.node.addresses, []);
    assert.equal(ctx.node.inferred, undefined);
  });

  it('uses the Node object beside the dump before the dump’s own hints, labelled as inferred', () => {
    const ctx = resolveNodeContext([noSettings, inferredLayer(nodeObject, fromDump)]);
    assert.equal(ctx.kind, 'inferred');
    assert.equal(nodeStatusText(ctx), 'Node 172.18.0.4 (inferred) · eth0');
    assert.equal(ctx.origin, 'inferred from nodes.yaml:12');
    // Given to the engine as inferred (the trace labels it), never as if the user had said it.
    assert.deepEqual(ctx.node.addresses, []);
    assert.deepEqual(
      ctx.node.inferred?.map(i => i.address),
      ['172.18.0.4'],
    );
  });

  it('leaves the dump’s own hints to the engine (which keeps IPVS’s extra addresses too)', () => {
    const ctx = resolveNodeContext([noSettings, inferredLayer([], fromDump)]);
    assert.equal(nodeStatusText(ctx), 'Node 10.0.0.9 (inferred) · eth0');
    assert.equal(ctx.node.inferred, undefined);
  });

  it('settings beat the files; a choice beats the settings, field by field', () => {
    const settings = settingsLayer({
      addresses: ['192.168.1.5'],
      uplink: 'ens3',
      interfaces: [{ name: 'docker0', addresses: ['172.17.0.1/16'] }],
      routes: [],
    });
    const files = inferredLayer(nodeObject, fromDump);
    const bySettings = resolveNodeContext([settings, files]);
    assert.equal(nodeStatusText(bySettings), 'Node 192.168.1.5 · ens3');
    assert.equal(bySettings.kind, 'settings');
    const chosen = resolveNodeContext([choiceLayer({ addresses: ['172.18.0.4'] }, 'seed-003/'), settings, files]);
    assert.equal(nodeStatusText(chosen), 'Node 172.18.0.4 · ens3');
    assert.equal(chosen.origin, 'chosen for seed-003/');
    assert.deepEqual(chosen.node.addresses, ['172.18.0.4']);
    assert.deepEqual(chosen.interfaces, [{ name: 'docker0', addresses: ['172.17.0.1/16'] }]);
    assert.equal(chosen.fieldOrigins.interfaces, 'settings');
  });

  it('finds the choice of the file, else of the nearest folder', () => {
    const choices = {
      'file:///w/examples/': { addresses: ['10.0.0.1'] },
      'file:///w/examples/seed-003/': { addresses: ['172.18.0.4'] },
      'file:///w/examples/seed-003/b.rules': { addresses: ['172.18.0.5'] },
    };
    assert.equal(choiceFor('file:///w/examples/seed-003/a.rules', choices)?.key, 'file:///w/examples/seed-003/');
    assert.equal(choiceFor('file:///w/examples/seed-003/b.rules', choices)?.key, 'file:///w/examples/seed-003/b.rules');
    assert.equal(choiceFor('file:///w/examples/x/c.rules', choices)?.key, 'file:///w/examples/');
    assert.equal(choiceFor('file:///elsewhere/d.rules', choices), null);
  });

  it('a trace with the chosen node no longer assumes one (the engine gets what the status bar shows)', () => {
    const rs = parseIptables(seedText(), { file: 'node-myk8s-worker.rules' });
    const packet = parsePacketText('tcp 172.18.0.100 -> 172.18.255.200:80');
    assert.ok(packet.ok);
    const assumed = resolveNodeContext([noSettings, inferredLayer([], inferNodeAddresses(rs))]);
    const before = tracePacket(rs, packet.input, { node: assumed.node });
    assert.ok(before.ok);
    assert.match(before.trace.warnings.join('\n'), /no node address given/);
    const chosen = resolveNodeContext([choiceLayer({ addresses: ['172.18.0.4'] }, 'this file'), noSettings]);
    const after = tracePacket(rs, packet.input, { node: chosen.node });
    assert.ok(after.ok);
    assert.doesNotMatch(after.trace.warnings.join('\n'), /no node address given/);
    assert.equal(after.trace.outcomes[0]?.snat, '172.18.0.4');
  });
});

describe('node context: quick inputs instead of JSON', () => {
  it('reads addresses, interfaces and routes as typed, and says what is wrong', () => {
    assert.deepEqual(parseAddressesInput('172.18.0.4, fd00::4'), { ok: true, value: ['172.18.0.4', 'fd00::4'] });
    assert.match((parseAddressesInput('172.18.0') as { error: string }).error, /172\.18\.0 is not an IP address/);
    assert.deepEqual(parseInterfaceInput('docker0 172.17.0.1/16'), {
      ok: true,
      value: { name: 'docker0', addresses: ['172.17.0.1/16'] },
    });
    assert.equal(parseInterfaceInput('docker0 172.17.0.1').ok, false);
    assert.equal(parseInterfaceInput('a-name-that-is-too-long 10.0.0.1/8').ok, false);
    assert.deepEqual(parseRouteInput('10.244.1.0/24 → cni0'), {
      ok: true,
      value: { dst: '10.244.1.0/24', iface: 'cni0' },
    });
    assert.deepEqual(parseRouteInput('10.244.1.0/24 cni0'), {
      ok: true,
      value: { dst: '10.244.1.0/24', iface: 'cni0' },
    });
    assert.equal(parseRouteInput('10.244.1.0/24').ok, false);
    assert.equal(parseRouteInput('cni0 10.244.1.0/24').ok, false);
  });

  it('offers each suggested address once, the Node object’s first, without IPVS service addresses', () => {
    const s = nodeSuggestions(nodeObject, [...fromDump, { address: '172.18.0.4', from: 'b.rules:3', why: 'SNAT' }]);
    assert.deepEqual(
      s.map(x => [x.address, x.from]),
      [
        ['172.18.0.4', 'nodes.yaml:12'],
        ['10.0.0.9', 'a.rules:40'],
      ],
    );
  });

  it('editing one field keeps the addresses in use when they were given, not when they were guessed', () => {
    const given = resolveNodeContext([settingsLayer({ addresses: ['192.168.1.5'] })]);
    assert.deepEqual(withField(given, undefined, 'uplink', 'ens3'), { addresses: ['192.168.1.5'], uplink: 'ens3' });
    const guessed = resolveNodeContext([noSettings, inferredLayer(nodeObject, [])]);
    assert.deepEqual(withField(guessed, undefined, 'uplink', 'ens3'), { uplink: 'ens3' });
  });
});
