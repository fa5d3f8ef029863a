/**
 * Issue 11, "CodeLens in manifests": the app repo examples/app-no-nodes (one Deployment of 3 replicas,
 * `app: web`, two Services selecting it, no Node objects) shows each Service's three endpoints, marked
 * predicted, in the lens, the hover and the trace a click runs. Shares are kube-proxy's for three
 * endpoints (probability 0.3333333333 then 0.5: 715827883/2^31 and two halves of the rest).
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ClusterView } from '../../src/editor/kube/cluster.ts';
import { manifestHoverAt } from '../../src/editor/kube/manifest-hover.ts';
import { nothingToTrace, runManifestTrace } from '../../src/editor/kube/manifest-trace.ts';
import { portLens } from '../../src/editor/kube/service-lens.ts';
import { TextLines } from '../../src/editor/text-lines.ts';
import { ROOT } from '../helpers/fixtures.ts';

const DIR = join(ROOT, 'examples', 'app-no-nodes');
const files = readdirSync(DIR)
  .filter(f => f.endsWith('.yaml'))
  .sort()
  .map(f => ({ file: `file:///ws/app-no-nodes/${f}`, text: readFileSync(join(DIR, f), 'utf8') }));
const view = new ClusterView('app-no-nodes', files);

function hover(needle: string): string {
  const f = view.files.find(x => x.file.endsWith('services.yaml'))!;
  const lines = f.text.split('\n');
  const line = lines.findIndex(l => l.includes(needle));
  const h = manifestHoverAt(view, f.file, new TextLines(f.text), line, lines[line]!.indexOf(needle) + 1);
  assert.ok(h, `no hover at ${needle}`);
  return h.markdown;
}

describe('app repo without nodes: lens, hover and click agree', () => {
  it('lens: each Service port reaches web-1, web-2 and web-3, marked predicted', () => {
    assert.deepEqual(
      view.model.servicePorts.map(sp => portLens(view, sp).title),
      [
        '▶ tcp 10.96.0.11:80 → web-1 33.33% · web-2 33.33% · web-3 33.33% (predicted)',
        '▶ tcp 172.18.0.2:30000 → web-1 33.33% · web-2 33.33% · web-3 33.33% (predicted)',
      ],
    );
    assert.match(
      portLens(view, view.model.servicePorts[0]!).tooltip,
      /predicted: no Node objects or kind config: a default single-node cluster is assumed \(node-1\)/,
    );
  });

  it('hover: the three endpoints with their shares, predicted, and no "kube-proxy rejects"', () => {
    const md = hover('name: web');
    assert.doesNotMatch(md, /rejects new connections/);
    for (const ip of ['10.244.0.2:8080', '10.244.0.3:8080', '10.244.0.4:8080']) assert.ok(md.includes(ip), md);
    assert.ok(md.includes('| `10.244.0.2:8080` | web\\-1 | node\\-1 | 33.33% | 715827883/2147483648 |'), md);
    assert.match(md, /\*predicted\*: the pods whose labels match/);
    assert.match(md, /default single\\-node cluster is assumed/);
  });

  it("click: the lens's trace runs and reaches the three pods, and says the node is predicted", () => {
    assert.equal(nothingToTrace(view), null);
    for (const sp of view.model.servicePorts) {
      const lens = portLens(view, sp);
      assert.ok(lens.packet);
      const r = runManifestTrace(view, lens.packet, lens.node);
      assert.ok(r.ok, r.ok ? '' : r.error);
      assert.deepEqual(
        r.value.trace.outcomes.map(o => o.dnat),
        ['10.244.0.2:8080', '10.244.0.3:8080', '10.244.0.4:8080'],
      );
      assert.deepEqual(
        r.value.destinations.map(d => d.pod),
        ['default/web-1', 'default/web-2', 'default/web-3'],
      );
      assert.match(
        r.diagram.warnings[0]!,
        /^predicted: no Node objects or kind config: a default single-node cluster is assumed; the trace runs on node-1/,
      );
    }
  });
});
