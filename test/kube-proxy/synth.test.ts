/**
 * The synthesizer against kube-proxy's own expected output (kubernetes pkg/proxy/iptables/proxier_test.go,
 * fixtures in test/fixtures/kube-proxy with their provenance): same Services and EndpointSlices in, the
 * same iptables-restore text out, byte for byte, in the order kube-proxy's tests compare it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderKubeProxyRestore } from '../../src/engine/kube/modes/iptables/render.ts';
import { kubeFixtures } from './synth-fixture.ts';

const fixtures = kubeFixtures();

/** Full-sync dumps, minus `-X` lines: deleting chains left from a previous sync is not part of one state. */
function withoutStaleChainDeletes(text: string): string {
  const deleted = new Set([...text.matchAll(/^-X (\S+)$/gm)].map(m => m[1]));
  return text
    .split('\n')
    .filter(l => !l.startsWith('-X ') && !(l.startsWith(':') && deleted.has(l.slice(1).split(' ')[0])))
    .join('\n');
}

describe('kube-proxy expected dumps', () => {
  for (const f of fixtures.filter(x => x.expected !== null)) {
    const partial = f.proxier.syncMode !== undefined && /partial/i.test(f.proxier.syncMode);
    it(`${f.name}${partial ? ' (partial sync: every rule written is in the full dump)' : ''}`, () => {
      const full = renderKubeProxyRestore(f.synth());
      const expected = withoutStaleChainDeletes(f.expected!);
      if (!partial) {
        assert.equal(full, expected);
        return;
      }
      const fullLines = new Set(full.split('\n'));
      const missing = expected.split('\n').filter(l => l.startsWith('-A ') && !fullLines.has(l));
      assert.deepEqual(missing, []);
    });
  }
});

describe('kube-proxy expected chains', () => {
  for (const f of fixtures.filter(x => x.expectedChains !== null)) {
    it(f.name, () => {
      const rules = f.synth();
      for (const c of f.expectedChains!) {
        const got = rules[c.table].rules.filter(r => r.split(' ')[1] === c.chain);
        assert.deepEqual(got, c.rules, `${c.table} ${c.chain}`);
      }
    });
  }
});
