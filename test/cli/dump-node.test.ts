/**
 * Issue 11, "Infer what the files say … Node objects, a kind config": `trace <dump> --manifests <dir>`
 * takes the node's addresses from the cluster's manifests. Expected values from seed 003 (nodes.yaml:
 * myk8s-worker is 172.18.0.4, and the seed's kernel runs show the LoadBalancer packet masqueraded to it).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { cli } from '../helpers/cli.ts';
import { ROOT } from '../helpers/fixtures.ts';

const SEED = join(ROOT, 'examples', 'seed-003');
const DUMP = join(SEED, 'node-myk8s-worker.rules');
const LB = 'tcp 172.18.0.100:40000 -> 172.18.255.200:80';

type Json = {
  outcomes: { snat: string }[];
  node: { addresses: string[]; symbolic: string | null; inferred: { address: string; from: string; why: string }[] };
};

describe('trace <dump> --manifests: the Node objects say which node the dump is', () => {
  it("the node named in the dump's file name: myk8s-worker, 172.18.0.4, labelled with its Node object", () => {
    const r = cli('trace', DUMP, '--manifests', SEED, '--packet', LB, '--json');
    assert.equal(r.code, 0, r.err.join('\n'));
    const j = JSON.parse(r.out[0]!) as Json;
    assert.deepEqual(
      j.outcomes.map(o => o.snat),
      ['172.18.0.4', '172.18.0.4'],
    );
    assert.equal(j.node.symbolic, null);
    assert.deepEqual(
      j.node.inferred.map(i => [i.address, i.from.endsWith('nodes.yaml:22')]),
      [['172.18.0.4', true]],
    );
    assert.match(j.node.inferred[0]!.why, /myk8s-worker, whose name is in the dump's file name/);
  });

  it('--node NAME chooses another node; --node-ip still wins', () => {
    const other = JSON.parse(
      cli('trace', DUMP, '--manifests', SEED, '--node', 'myk8s-worker2', '--packet', LB, '--json').out[0]!,
    ) as Json;
    assert.deepEqual(
      other.outcomes.map(o => o.snat),
      ['172.18.0.5', '172.18.0.5'],
    );
    const given = JSON.parse(
      cli('trace', DUMP, '--manifests', SEED, '--node-ip', '192.0.2.9', '--packet', LB, '--json').out[0]!,
    ) as Json;
    assert.deepEqual(
      given.outcomes.map(o => o.snat),
      ['192.0.2.9', '192.0.2.9'],
    );
  });

  it('a dump whose node cannot be told asks for --node', () => {
    const r = cli(
      'trace',
      join(ROOT, 'test', 'fixtures', 'kernel', 'kube-proxy-v131', 'rules'),
      '--manifests',
      SEED,
      '--packet',
      LB,
    );
    assert.equal(r.code, 2);
    assert.match(r.err.join('\n'), /give --node \(myk8s-control-plane, myk8s-worker, myk8s-worker2, myk8s-worker3\)/);
  });
});
