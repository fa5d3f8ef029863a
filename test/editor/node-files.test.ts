/**
 * The node's own files as a source of a dump's node context in the editor (src/editor/node-files.ts, issue
 * 19): which files of a folder are read, what the engine worker makes of them, the layer they become, the
 * status text, and a trace through the worker that routes and masquerades as the node does — on the kernel
 * oracle's own node bundle (test/fixtures/nodectx/seed-003-oracle), whose verdicts say: out veth1/veth2,
 * masqueraded to 172.18.0.4.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseRuleset } from '../../src/engine/api.ts';
import {
  inferredLayer,
  nodeFilesDisagree,
  nodeStatusText,
  nodeStatusTooltip,
  resolveNodeContext,
  settingsLayer,
  choiceLayer,
} from '../../src/editor/node-context.ts';
import {
  type NodeFileText,
  NODE_FILE_LIMITS,
  filesLayer,
  nodeFileCandidates,
  readNodeFiles,
} from '../../src/editor/node-files.ts';
import { readSettings } from '../../src/editor/settings.ts';
import { EngineHost } from '../../src/worker/engine-host.ts';
import type { EngineRequest, WorkerTrace } from '../../src/shared/engine-protocol.ts';

const BUNDLE = join(import.meta.dirname, '../fixtures/nodectx/seed-003-oracle');
const DUMP = 'iptables-save.txt';
const noSettings = settingsLayer({ addresses: [], uplink: 'eth0', interfaces: [], routes: [], routeLocalnet: false });

/** The bundle's files as the glue reads them: the candidates of the folder beside the dump. */
function bundleFiles(dir = BUNDLE, dump: string | null = DUMP): NodeFileText[] {
  const entries = readdirSync(dir).map(name => {
    const st = statSync(join(dir, name));
    return { name, isFile: st.isFile(), size: st.size };
  });
  return nodeFileCandidates(entries, dump).map(name => ({
    file: `seed-003-oracle/${name}`,
    text: readFileSync(join(dir, name), 'utf8'),
  }));
}

const dumpText = () => readFileSync(join(BUNDLE, DUMP), 'utf8');

describe('node files: which files of a folder are read', () => {
  it('skips the dump itself, folders, hidden and oversized files; name order; bounded', () => {
    const got = nodeFileCandidates(
      [
        { name: 'sysctl.txt', isFile: true, size: 10 },
        { name: DUMP, isFile: true, size: 10 },
        { name: 'text', isFile: false, size: 0 },
        { name: '.hidden', isFile: true, size: 10 },
        { name: 'huge.json', isFile: true, size: NODE_FILE_LIMITS.bytes + 1 },
        { name: 'ip-addr.json', isFile: true, size: 10 },
      ],
      DUMP,
    );
    assert.deepEqual(got, ['ip-addr.json', 'sysctl.txt']);
    const many = Array.from({ length: 200 }, (_, i) => ({
      name: `f${String(i).padStart(3, '0')}`,
      isFile: true,
      size: 1,
    }));
    assert.equal(nodeFileCandidates(many, null).length, NODE_FILE_LIMITS.files);
  });

  it('reads packetlens.node.contextFiles as a list of paths', () => {
    const s = readSettings(k => (k === 'node.contextFiles' ? [' node/ip-addr.json ', 3, '', 'node'] : undefined));
    assert.deepEqual(s.nodeContextFiles, ['node/ip-addr.json', 'node']);
    assert.deepEqual(readSettings(() => undefined).nodeContextFiles, []);
  });
});

describe('node files: what the worker makes of them', () => {
  it("recognises the bundle's node files by content and describes the node as its ip addr/route say", () => {
    const rs = parseRuleset(dumpText(), { file: DUMP }).ruleset;
    const { context, summary } = readNodeFiles(bundleFiles(), rs);
    assert.ok(context && summary);
    assert.deepEqual(
      summary.used.map(u => `${u.file} ${u.kind}`),
      [
        'seed-003-oracle/ip-addr.json ip-addr',
        'seed-003-oracle/ip-route.json ip-route',
        'seed-003-oracle/ip-rule.json ip-rule',
        'seed-003-oracle/sysctl.txt sysctl',
      ],
    );
    // The primary address is eth0's (first global address in ifindex order), the uplink the default route's.
    assert.equal(summary.addresses[0], '172.18.0.4');
    assert.equal(summary.addressIface, 'eth0');
    assert.equal(summary.addressFile, 'seed-003-oracle/ip-addr.json');
    assert.equal(summary.uplink, 'eth0');
    assert.ok(summary.routeCount > 5);
    assert.ok(summary.sysctls.includes('net.ipv4.ip_forward = 1'), summary.sysctls.join(', '));
    // Nothing is missing and nothing contradicts the dump.
    assert.deepEqual(summary.notes, []);
  });

  it('returns nothing when no file is a node file (a folder of manifests)', () => {
    const r = readNodeFiles([{ file: 'svc.yaml', text: 'apiVersion: v1\nkind: Service\n' }], null);
    assert.equal(r.context, null);
    assert.equal(r.summary, null);
  });

  it('says what is missing: no ip route, no sysctl', () => {
    const only = bundleFiles().filter(f => f.file.endsWith('ip-addr.json'));
    const { summary } = readNodeFiles(only, parseRuleset(dumpText(), { file: DUMP }).ruleset);
    const text = summary!.notes.map(n => `${n.severity}: ${n.message}`).join('\n');
    assert.match(text, /info: no `ip route` output .*outgoing interface is the uplink/);
    assert.match(text, /info: no `sysctl -a` output .*ip_forward=1/);
  });

  it('says when the dump implies a node address the files do not have (files of another node)', () => {
    const dump = `*nat\n:POSTROUTING ACCEPT [0:0]\n-A POSTROUTING -o eth0 -j SNAT --to-source 10.0.0.9\nCOMMIT\n`;
    const rs = parseRuleset(dump, { file: 'other.rules' }).ruleset;
    const { summary } = readNodeFiles(bundleFiles(), rs);
    const warn = summary!.notes.filter(n => n.severity === 'warning');
    assert.equal(warn.length, 1, JSON.stringify(summary!.notes));
    assert.match(warn[0]!.message, /implies the node address 10\.0\.0\.9 .* no such address/);
    const ctx = resolveNodeContext([noSettings, filesLayer(summary!, bundleFiles(), 'beside other.rules')]);
    assert.ok(nodeFilesDisagree(ctx));
    assert.match(nodeStatusTooltip(ctx, 'other.rules'), /10\.0\.0\.9/);
  });

  it('says when a file is damaged', () => {
    const files = [...bundleFiles(), { file: 'bad-route.json', text: '[{"dst": "default", "dev": ' }];
    const { summary } = readNodeFiles(files, null);
    assert.ok(summary!.notes.some(n => n.severity === 'warning' && /error.*bad-route\.json/.test(n.message)));
  });
});

describe('node files: the layer they become', () => {
  const summary = () => readNodeFiles(bundleFiles(), parseRuleset(dumpText(), { file: DUMP }).ruleset).summary!;

  it('names the node and the file in the status bar, before the dump’s own hints', () => {
    const files = bundleFiles();
    const hints = [{ address: '172.18.0.99', from: 'x.rules:3', why: 'SNAT --to-source 172.18.0.99' }];
    const ctx = resolveNodeContext([
      noSettings,
      filesLayer(summary(), files, 'beside iptables-save.txt'),
      inferredLayer([], hints),
    ]);
    assert.equal(ctx.kind, 'files');
    assert.equal(nodeStatusText(ctx), 'Node 172.18.0.4 · eth0 · from ip-addr.json');
    // The engine reads the addresses from the files with their interfaces: none are handed over typed.
    assert.deepEqual(ctx.node.addresses, []);
    assert.equal(ctx.node.inferred, undefined);
    assert.equal(ctx.node.uplink, 'eth0');
    assert.equal(ctx.nodeFiles.length, files.length);
    const tip = nodeStatusTooltip(ctx, DUMP);
    assert.match(
      tip,
      /ip-addr\.json \(ip-addr\), ip-route\.json \(ip-route\), ip-rule\.json \(ip-rule\), sysctl\.txt \(sysctl\)/,
    );
    assert.match(tip, /default via eth0/);
  });

  it('a choice for the file still wins for the address; the files keep routing', () => {
    const ctx = resolveNodeContext([
      choiceLayer({ addresses: ['172.18.0.7'] }, 'this file'),
      noSettings,
      filesLayer(summary(), bundleFiles(), 'beside iptables-save.txt'),
    ]);
    assert.equal(ctx.kind, 'chosen');
    assert.deepEqual(ctx.node.addresses, ['172.18.0.7']);
    assert.ok(ctx.nodeFiles.length > 0);
    assert.match(nodeStatusText(ctx), /^Node 172\.18\.0\.7 · eth0 · files: 4$/);
  });
});

describe('node files: a trace through the engine worker', () => {
  it('routes and masquerades the seed LoadBalancer packet as the node does (kernel: veth1/veth2, 172.18.0.4)', async () => {
    const host = new EngineHost();
    let id = 0;
    const ask = async <T>(method: string, params: object): Promise<T> => {
      const r = await host.handle({ id: ++id, method, params } as EngineRequest);
      if (!r.ok) throw new Error(r.error);
      return r.result as T;
    };
    await ask('load', { key: 'd', file: DUMP, maxBytes: 1 << 26, source: { text: dumpText() } });
    const files = bundleFiles();
    const summary = await ask<ReturnType<typeof readNodeFiles>['summary']>('nodeFiles', { key: 'd', files });
    assert.ok(summary);
    const ctx = resolveNodeContext([
      noSettings,
      filesLayer(
        summary,
        files.filter(f => summary.used.some(u => u.file === f.file)),
        'beside',
      ),
      inferredLayer([], []),
    ]);
    const r = await ask<WorkerTrace>('trace', {
      key: 'd',
      packet: 'tcp 172.18.0.100 -> 172.18.255.200:80',
      node: ctx.node,
      nodeFiles: ctx.nodeFiles,
    });
    assert.ok(r.ok, r.ok ? '' : r.error);
    const seen = r.trace.outcomes.map(o => `${o.dnat} out ${o.packet.out} src ${o.snat}`).sort();
    assert.deepEqual(seen, ['10.10.1.11:80 out veth1 src 172.18.0.4', '10.10.4.12:80 out veth2 src 172.18.0.4']);
    assert.equal(r.trace.node?.symbolic, null);
    // Without the files the same request assumes eth0 and a stand-in address: the files made the difference.
    const bare = await ask<WorkerTrace>('trace', {
      key: 'd',
      packet: 'tcp 172.18.0.100 -> 172.18.255.200:80',
      node: ctx.node,
    });
    assert.ok(bare.ok && bare.trace.outcomes.every(o => o.packet.out === 'eth0'));
  });

  it("puts the files' gaps in the trace's warnings", async () => {
    const host = new EngineHost();
    await host.handle({
      id: 1,
      method: 'load',
      params: { key: 'd', file: DUMP, maxBytes: 1 << 26, source: { text: dumpText() } },
    } as EngineRequest);
    const only = bundleFiles().filter(f => /ip-(addr|route)\.json$/.test(f.file));
    const r = await host.handle({
      id: 2,
      method: 'trace',
      params: { key: 'd', packet: 'tcp 172.18.0.100 -> 172.18.255.200:80', node: {}, nodeFiles: only },
    } as EngineRequest);
    assert.ok(r.ok);
    const t = r.result as WorkerTrace;
    assert.ok(t.ok && t.trace.warnings.some(w => /^node files: no `sysctl -a` output/.test(w)), JSON.stringify(t));
  });
});
