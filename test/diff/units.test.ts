/** The diff's building blocks: rule normalization, chain comparison, atoms, Service names, aspects. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseIptables, summaryLine } from '../../src/engine/api.ts';
import { compareFates, serviceOf } from '../../src/engine/diff/compare.ts';
import { changedChains, normalizedRule } from '../../src/engine/diff/normalize.ts';
import { atoms, formatAddrSpan, representative } from '../../src/engine/diff/space.ts';
import type { DiffFate } from '../../src/engine/diff/types.ts';

const rules = (body: string) =>
  parseIptables(`*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n${body}COMMIT\n`, {
    file: 'x',
  });

function fate(disposition: DiffFate['disposition'], dnat: string | null, masquerade: boolean, p: string): DiffFate {
  return {
    disposition,
    dnat,
    snat: masquerade ? '172.18.0.4' : null,
    masquerade,
    rejectWith: null,
    reason: null,
    assumptions: [],
    probabilityExact: p,
    probability: 0,
  };
}

describe('diff building blocks', () => {
  it('normalizes away counters and comments, and nothing else', () => {
    const rs = rules(
      '[5:300] -A INPUT -s 10.0.0.0/8 -m comment --comment "a b" -p tcp -m tcp --dport 22 -j ACCEPT\n' +
        '-A INPUT -s 10.0.0.0/8 -p tcp -m tcp --dport 22 -c 9 99 -j ACCEPT\n' +
        '-A INPUT  -s 10.0.0.0/8 -p tcp -m tcp --dport 22 -j ACCEPT\n' +
        '-A INPUT -p tcp -s 10.0.0.0/8 -m tcp --dport 22 -j ACCEPT\n',
    );
    const texts = rs.tables.get('filter')!.chains.get('INPUT')!.rules.map(normalizedRule);
    assert.deepEqual(texts.slice(0, 3), Array(3).fill('-s 10.0.0.0/8 -p tcp -m tcp --dport 22 -j ACCEPT'));
    assert.notEqual(texts[3], texts[0], 'option order counts: such a chain is traced, not trusted');
  });

  it('tells policy changes, reorders and rule changes apart', () => {
    const a = rules('-A INPUT -p tcp -j ACCEPT\n-A INPUT -p udp -j DROP\n');
    const reordered = rules('-A INPUT -p udp -j DROP\n-A INPUT -p tcp -j ACCEPT\n');
    const policy = parseIptables(
      '*filter\n:INPUT DROP [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n-A INPUT -p tcp -j ACCEPT\n-A INPUT -p udp -j DROP\nCOMMIT\n',
      { file: 'y' },
    );
    const edited = rules('-A INPUT -p tcp -j ACCEPT\n-A INPUT -p udp -j REJECT\n');
    assert.deepEqual(
      changedChains(a, reordered).map(c => [c.chain, c.change, c.added, c.removed]),
      [['INPUT', 'reordered', 0, 0]],
    );
    assert.deepEqual(
      changedChains(a, policy).map(c => [c.chain, c.change]),
      [['INPUT', 'policy']],
    );
    assert.deepEqual(
      changedChains(a, edited).map(c => [c.chain, c.change, c.added, c.removed]),
      [['INPUT', 'rules', 1, 1]],
    );
    assert.deepEqual(changedChains(a, a), []);
  });

  it('cuts a space into atoms at both ends of every constant', () => {
    const space = { lo: 0n, hi: 65535n };
    assert.deepEqual(
      atoms(space, [
        { lo: 80n, hi: 80n },
        { lo: 8000n, hi: 8100n },
        { lo: 8050n, hi: 8050n },
      ]).map(s => [s.lo, s.hi]),
      [
        [0n, 79n],
        [80n, 80n],
        [81n, 7999n],
        [8000n, 8049n],
        [8050n, 8050n],
        [8051n, 8100n],
        [8101n, 65535n],
      ],
    );
    assert.equal(representative({ lo: 81n, hi: 7999n }, [80n, 443n]), 443n);
    assert.equal(representative({ lo: 0n, hi: 0x09ffffffn }, [], 1n << 24n), (1n << 24n) + 10n);
    assert.equal(formatAddrSpan(4, { lo: 0x0a000000n, hi: 0x0affffffn }), '10.0.0.0/8');
    assert.equal(formatAddrSpan(4, { lo: 0x0a000001n, hi: 0x0a000009n }), '10.0.0.1–10.0.0.9');
  });

  it('reads the Service kube-proxy names in its comments', () => {
    assert.equal(serviceOf('default/kubernetes:https cluster IP'), 'default/kubernetes:https');
    assert.equal(serviceOf('ns2/svc2:p80 -> 10.180.0.2:80'), 'ns2/svc2:p80');
    assert.equal(
      serviceOf('masquerade traffic for default/svc1:svc1-webport external destinations'),
      'default/svc1:svc1-webport',
    );
    assert.equal(serviceOf('metallb-system/metallb-webhook-service'), 'metallb-system/metallb-webhook-service');
    assert.equal(serviceOf('kubernetes service portals'), null);
    assert.equal(serviceOf(null), null);
  });

  it('names what changed about a fate', () => {
    const two = [fate('forwarded', '10.0.0.1:80', true, '1/2'), fate('forwarded', '10.0.0.2:80', true, '1/2')];
    assert.deepEqual(compareFates(two, two), []);
    assert.deepEqual(compareFates(two, [fate('forwarded', '10.0.0.1:80', true, '1')]), ['dnat', 'probability']);
    assert.deepEqual(
      compareFates(
        two,
        two.map(f => ({ ...f, masquerade: false, snat: null })),
      ),
      ['snat', 'masquerade'],
    );
    assert.deepEqual(compareFates(two, [fate('dropped', null, false, '1')]), ['disposition']);
    assert.deepEqual(
      compareFates(
        [fate('dropped', null, false, '1/2'), fate('forwarded', null, false, '1/2')],
        [fate('dropped', null, false, '1/3'), fate('forwarded', null, false, '2/3')],
      ),
      ['probability'],
    );
  });

  it('summarizes in one line', () => {
    assert.equal(summaryLine(1, 1), '1 packet class changes · 1 Service affected');
    assert.equal(summaryLine(0, 0), '0 packet classes change · 0 Services affected');
    assert.equal(summaryLine(12, 3), '12 packet classes change · 3 Services affected');
  });
});

describe('addrRepresentative', () => {
  it('prefers a documentation address, else a special-use one, else the ordinary value', async () => {
    const { addrRepresentative } = await import('../../src/engine/diff/space.ts');
    assert.equal(
      addrRepresentative(6, { lo: 0x2001n << 112n, hi: (0x2002n << 112n) - 1n }, []),
      (0x20010db8n << 96n) + 10n,
    );
    assert.equal(addrRepresentative(4, { lo: 0xc0000200n + 20n, hi: 0xc0000300n }, []), 0xc0000200n + 21n);
    // No documentation range inside: RFC 1918's 10.0.0.10, not the public 1.0.0.10 the old fallback chose.
    assert.equal(addrRepresentative(4, { lo: 0x0a000000n, hi: 0x0affffffn }, []), 0x0a00000an);
    assert.equal(addrRepresentative(4, { lo: 0n, hi: 0x0a09ffffn }, []), 0x0a00000an);
    assert.equal(addrRepresentative(4, { lo: 0x80000000n, hi: 0xc0000007n }, []), 0xac10000an);
    // Only public space left: the ordinary value.
    assert.equal(addrRepresentative(4, { lo: 0x0b000000n, hi: 0x0bffffffn }, []), 0x0b000001n);
  });
});
