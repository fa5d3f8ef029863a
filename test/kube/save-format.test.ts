/**
 * iptables-save's canonical form of kube-proxy's rules: the pattern fast path and the general rewrite must
 * agree on every rule the synthesizer writes (kube-proxy fixtures, the examples, large-cluster mode).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { generalSaveFormat, toSaveFormat } from '../../src/engine/kube/modes/iptables/save-format.ts';
import { kubeFixtures } from '../kube-proxy/synth-fixture.ts';

describe('iptables-save form of kube-proxy rules', () => {
  it('rewrites header options, prefixes, comments, marks, REJECT and probabilities as iptables-save prints them', () => {
    assert.equal(
      toSaveFormat(
        '-A KUBE-SVC-X -m comment --comment "ns/s:p cluster IP" -m tcp -p tcp -d 10.96.0.1 --dport 80 ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ',
        4,
      ),
      '-A KUBE-SVC-X ! -s 10.0.0.0/8 -d 10.96.0.1/32 -p tcp -m comment --comment "ns/s:p cluster IP" -m tcp --dport 80 -j KUBE-MARK-MASQ',
    );
    assert.equal(
      toSaveFormat('-A KUBE-MARK-MASQ -j MARK --or-mark 0x004000', 4),
      '-A KUBE-MARK-MASQ -j MARK --set-xmark 0x4000/0x4000',
    );
    assert.equal(
      toSaveFormat('-A KUBE-POSTROUTING -j MARK --xor-mark 0x4000', 4),
      '-A KUBE-POSTROUTING -j MARK --set-xmark 0x4000/0x0',
    );
    assert.equal(
      toSaveFormat(
        '-A KUBE-SVC-X -m comment --comment "a -> b" -m statistic --mode random --probability 0.3333333333 -j KUBE-SEP-Y',
        4,
      ),
      '-A KUBE-SVC-X -m comment --comment "a -> b" -m statistic --mode random --probability 0.33333333349 -j KUBE-SEP-Y',
    );
    assert.equal(
      toSaveFormat(
        '-A KUBE-SERVICES -m comment --comment "x has no endpoints" -m tcp -p tcp -d 10.0.0.1 --dport 80 -j REJECT',
        4,
      ),
      '-A KUBE-SERVICES -d 10.0.0.1/32 -p tcp -m comment --comment "x has no endpoints" -m tcp --dport 80 -j REJECT --reject-with icmp-port-unreachable',
    );
  });

  it('the fast path agrees with the general rewrite on every synthesized rule', () => {
    let checked = 0;
    for (const fx of kubeFixtures()) {
      const rules = fx.synth();
      for (const line of [...rules.nat.rules, ...rules.filter.rules]) {
        assert.equal(toSaveFormat(line, rules.family), generalSaveFormat(line, rules.family), line);
        checked++;
      }
    }
    for (const line of [
      '-A KUBE-SEP-A -s 10.1.0.5 -j KUBE-MARK-MASQ',
      '-A KUBE-SEP-A -m tcp -p tcp -j DNAT --to-destination 10.1.0.5:8080',
      '-A KUBE-SVC-B -m statistic --mode random --probability 0.5000000000 -j KUBE-SEP-A',
      '-A KUBE-SVC-B -j KUBE-SEP-A',
    ]) {
      assert.equal(toSaveFormat(line, 4), generalSaveFormat(line, 4), line);
    }
    assert.ok(checked > 1000, `${checked} rules`);
  });
});
