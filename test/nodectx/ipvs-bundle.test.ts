/**
 * A node bundle with `ipvsadm -Ln` (kube-proxy's IPVS mode): the bundle's IPVS table schedules new
 * connections to its virtual services, as the manifest path does (`trace --manifests … --mode ipvs`, whose
 * scheduling is checked against kube-proxy's own IPVS expectations in test/ipvs/). The bundle is seed 002's
 * node ipvs-worker as kube-proxy would write it (`synth --mode ipvs --format save|ipvsadm|ipset`).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ROOT } from '../helpers/fixtures.ts';
import { cli } from '../helpers/cli.ts';
import { EngineHost } from '../../src/worker/engine-host.ts';
import type { EngineRequest, WorkerTrace } from '../../src/shared/engine-protocol.ts';

const SEED = join(ROOT, 'examples/seed-002');
const PACKET = 'tcp 172.18.0.100:40000 -> 10.96.0.11:80';

type Outcome = { probability: number; disposition: string; dnat: string | null };

/** seed 002's node ipvs-worker as kube-proxy's IPVS mode writes it: iptables-save, ipvsadm -Ln, ipset save. */
function synthBundle(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, format] of [
    ['iptables-save', 'save'],
    ['ipvsadm', 'ipvsadm'],
    ['ipset', 'ipset'],
  ] as const) {
    const s = cli('synth', SEED, '--mode', 'ipvs', '--node', 'ipvs-worker', '--format', format);
    assert.equal(s.code, 0, s.err.join('\n'));
    out[name] = `${s.out.join('\n')}\n`;
  }
  return out;
}

describe('node bundles: ipvsadm', () => {
  it('IPVS schedules the ClusterIP connection as on the manifest path (rr: 1/2 to each pod), never "local"', () => {
    const dir = mkdtempSync(join(tmpdir(), 'packetlens-ipvs-bundle-'));
    try {
      for (const [name, text] of Object.entries(synthBundle())) writeFileSync(join(dir, name), text);
      const r = cli('trace', dir, '--packet', PACKET, '--json');
      assert.equal(r.code, 0, r.err.join('\n'));
      const got = (JSON.parse(r.out[0]!) as { outcomes: Outcome[] }).outcomes
        .map(o => `${o.probability} ${o.disposition} ${o.dnat}`)
        .sort();
      const m = cli('trace', '--manifests', SEED, '--mode', 'ipvs', '--node', 'ipvs-worker', '--packet', PACKET);
      assert.equal(m.code, 0, m.err.join('\n'));
      const text = m.out.join('\n');
      for (const pod of ['10.244.1.2:80', '10.244.2.2:80'])
        assert.match(text, new RegExp(`50%  forwarded → ${pod.replace(/\./g, '\\.')}`));
      assert.deepEqual(got, ['0.5 forwarded 10.244.1.2:80', '0.5 forwarded 10.244.2.2:80']);
      const notes = cli('trace', dir, '--packet', PACKET).err.join('\n');
      assert.match(notes, /IPVS: .*ipvsadm \(1 virtual service|IPVS: .*ipvsadm \(\d+ virtual services\)/);
    } finally {
      rmSync(dir, { recursive: true });
    }
  });

  it('in the editor: the ipvsadm and ipset files beside the dump reach the worker’s trace', async () => {
    const files = synthBundle();
    const host = new EngineHost();
    let id = 0;
    const ask = async <T>(method: string, params: object): Promise<T> => {
      const r = await host.handle({ id: ++id, method, params: { key: 'd', ...params } } as EngineRequest);
      if (!r.ok) throw new Error(r.error);
      return r.result as T;
    };
    await ask('load', { file: 'iptables-save', maxBytes: 1 << 26, source: { text: files['iptables-save'] } });
    const nodeFiles = [
      { file: 'ipvsadm', text: files.ipvsadm! },
      { file: 'ipset', text: files.ipset! },
    ];
    const summary = await ask<{ used: { kind: string }[]; ipvsServices: number } | null>('nodeFiles', {
      files: nodeFiles,
    });
    assert.deepEqual(
      summary?.used.map(u => u.kind),
      ['ipvsadm', 'ipset'],
    );
    assert.equal(summary?.ipvsServices, 2);
    const r = await ask<WorkerTrace>('trace', { packet: PACKET, node: {}, nodeFiles });
    assert.ok(r.ok, r.ok ? '' : r.error);
    assert.deepEqual(r.trace.outcomes.map(o => `${o.probability} ${o.disposition} ${o.dnat}`).sort(), [
      '0.5 forwarded 10.244.1.2:80',
      '0.5 forwarded 10.244.2.2:80',
    ]);
  });
});
