/**
 * Manifest mode: two sets of Kubernetes manifests compared on one node through the kube-proxy rules the
 * synthesizer writes for it. The fixture (test/fixtures/diff/manifests) is seed 003's manifests
 * (examples/seed-003) before and after a third `app: webpod` pod starts on myk8s-worker: each of the three
 * LoadBalancer Services then has three endpoints, which kube-proxy weights 0.3333333333 and 0.5 (the
 * kernel's round(p·2^31)/2^31: 715827883/2147483648, then (1 − that)/2 = 1431655765/4294967296 each).
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { type ManifestSide, diffManifests } from '../../src/engine/api.ts';
import { run } from '../../src/cli/main.ts';
import { DIFF_FIXTURES } from './helpers.ts';

const DIR = join(DIFF_FIXTURES, 'manifests');

function side(name: 'old' | 'new'): ManifestSide {
  const dir = join(DIR, name);
  return {
    label: name,
    files: readdirSync(dir)
      .sort()
      .map(f => ({ file: join(dir, f), text: readFileSync(join(dir, f), 'utf8') })),
  };
}

describe('diff of two manifest sets (--node)', () => {
  it('reports the Services that gained an endpoint on the node, with exact probabilities', () => {
    const r = diffManifests(side('old'), side('new'), 'myk8s-worker');
    assert.ok(r.ok, r.ok ? '' : r.error);
    assert.deepEqual(r.errors, []);
    const report = r.report;
    assert.deepEqual(report.services, [
      'default/svc1:svc1-webport',
      'default/svc2:svc2-webport',
      'default/svc3:svc3-webport',
    ]);
    assert.deepEqual(
      report.groups.map(g => g.title),
      report.services.map(s => `Service ${s}`),
    );
    const third = '1431655765/4294967296';
    for (const c of report.changes) {
      assert.ok(c.aspects.includes('dnat'), c.class.packet);
      const delivered = c.new.filter(f => f.dnat !== null);
      if (delivered.length === 0) continue;
      assert.deepEqual(
        delivered.map(f => f.dnat).sort(),
        ['10.10.1.11:80', '10.10.4.12:80', '10.10.4.13:80'],
        c.class.packet,
      );
      assert.deepEqual(
        delivered.map(f => f.probabilityExact).sort(),
        ['715827883/2147483648', third, third].sort(),
        c.class.packet,
      );
      assert.deepEqual(
        c.old.filter(f => f.dnat !== null).map(f => f.probabilityExact),
        ['1/2', '1/2'],
        c.class.packet,
      );
    }
    // The rules named are the synthesized ones, labelled by side and node.
    assert.match(report.changes[0]!.newRules[0]!.file, /^new \(kube-proxy rules of myk8s-worker\)$/);
  });

  it('names a node that is missing, and is wired to `packetlens diff --node`', () => {
    const r = diffManifests(side('old'), side('new'), 'nope');
    assert.deepEqual(r, {
      ok: false,
      error: 'no node named nope in old (nodes: myk8s-control-plane, myk8s-worker, myk8s-worker2, myk8s-worker3)',
    });
    const out: string[] = [];
    const err: string[] = [];
    const code = run(['diff', join(DIR, 'old'), join(DIR, 'new'), '--node', 'myk8s-worker', '--json'], {
      out: l => out.push(l),
      err: l => err.push(l),
    });
    assert.equal(code, 1, err.join('\n'));
    assert.equal(JSON.parse(out[0]!).services.length, 3);
    assert.equal(
      run(['diff', join(DIR, 'old'), join(DIR, 'old'), '--node', 'myk8s-worker'], { out: () => {}, err: () => {} }),
      0,
    );
    assert.equal(
      run(['diff', join(DIR, 'old'), join(DIR, 'new'), '--node', 'myk8s-worker', '--node-ip', '1.2.3.4'], {
        out: () => {},
        err: l => err.push(l),
      }),
      2,
    );
    assert.match(err.join('\n'), /with --node the node context comes from the manifests/);
  });

  it('past the work budget the comparison stops: approximate, never identical, with a line that says so', () => {
    // Every class's proof looks at the rules of the chains its packets cross; a small budget stops it early
    // (issue 12: two 79k-Service sets with every Service changed looked at 10^9 rules for 160 s).
    const full = diffManifests(side('old'), side('new'), 'myk8s-worker');
    assert.ok(full.ok && full.report.proven);
    const r = diffManifests(side('old'), side('new'), 'myk8s-worker', { maxWork: 50 });
    assert.ok(r.ok, r.ok ? '' : r.error);
    const report = r.report;
    assert.equal(report.approximate, true);
    assert.equal(report.identical, false);
    assert.equal(report.proven, false);
    assert.ok(report.classesTraced < full.report.classesTraced, `${report.classesTraced} classes traced`);
    assert.match(
      report.approximations.find(a => a.includes('work budget')) ?? report.approximations.join('; '),
      /^the comparison stopped at its work budget \(50 rule checks\) after \d+ changed class(es)?: \d+ packet class(es were|was) still to trace/,
    );
    // The same pair unchanged is still proven identical under the same budget: nothing to look at.
    const same = diffManifests(side('old'), side('old'), 'myk8s-worker', { maxWork: 50 });
    assert.ok(same.ok && same.report.identical);
  });
});
