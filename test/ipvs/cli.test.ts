/**
 * The CLI in IPVS mode: `packetlens synth --mode ipvs` with its formats, the model's mode honoured when
 * --mode is absent, nftables refused, and `trace --manifests` following the manifests' kube-proxy mode.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ROOT } from '../helpers/fixtures.ts';
import { cli } from '../helpers/cli.ts';

const SEED2 = join(ROOT, 'examples', 'seed-002');
const SEED3 = join(ROOT, 'examples', 'seed-003');

describe('packetlens synth --mode ipvs', () => {
  it('prints ipvsadm -Ln, ipset save and iptables-save under # headers by default', () => {
    const r = cli('synth', SEED3, '--node', 'myk8s-worker', '--mode', 'ipvs');
    assert.equal(r.code, 0, r.err.join('\n'));
    const headers = r.out.filter(l => /^# (ipvsadm -Ln|ipset save|iptables-save)$/.test(l));
    assert.deepEqual(headers, ['# ipvsadm -Ln', '# ipset save', '# iptables-save']);
    assert.match(r.out[0]!, /^# kube-proxy v1\.31 IPVS mode \(scheduler rr\), node myk8s-worker/);
    assert.ok(r.out.includes('TCP  172.18.255.200:80 rr'));
    assert.ok(r.out.includes('add KUBE-LOAD-BALANCER 172.18.255.200,tcp:80'));
    assert.ok(
      r.out.includes(
        '-A KUBE-SERVICES -m comment --comment "Kubernetes service lb portal" -m set --match-set KUBE-LOAD-BALANCER dst,dst -j KUBE-LOAD-BALANCER',
      ),
    );
    assert.ok(
      r.out.includes('# kube-ipvs0: 10.200.1.11 10.200.1.12 10.200.1.13 172.18.255.200 172.18.255.201 172.18.255.202'),
    );
  });

  it('takes the mode from the manifests and prints one view with --format', () => {
    const list = cli('synth', SEED2, '--node', 'ipvs-worker', '--format', 'ipvsadm');
    assert.equal(list.code, 0, list.err.join('\n'));
    assert.deepEqual(list.out.slice(0, 4), [
      'IP Virtual Server version 1.2.1 (size=4096)',
      'Prot LocalAddress:Port Scheduler Flags',
      '  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn',
      'TCP  172.18.0.3:30080 rr',
    ]);
    assert.deepEqual(cli('synth', SEED2, '--node', 'ipvs-worker', '--format', 'ipvsadm-save').out.slice(0, 2), [
      '-A -t 172.18.0.3:30080 -s rr',
      '-a -t 172.18.0.3:30080 -r 10.244.1.2:80 -m -w 1',
    ]);
    assert.equal(
      cli('synth', SEED2, '--node', 'ipvs-worker', '--format', 'ipset').out[0],
      'create KUBE-LOOP-BACK hash:ip,port,ip family inet hashsize 1024 maxelem 65536',
    );
    assert.equal(cli('synth', SEED2, '--node', 'ipvs-worker', '--format', 'restore').out[0], '*nat');
    const save = cli('synth', SEED2, '--node', 'ipvs-worker', '--format', 'save').out;
    assert.match(save[0]!, /^# kube-proxy v1\.31 IPVS mode/);
    assert.ok(save.includes('*filter') && save.includes('*nat'));
    // --mode iptables overrides the manifests.
    assert.ok(
      cli('synth', SEED2, '--node', 'ipvs-worker', '--mode', 'iptables').out.some(l => l.startsWith('-A KUBE-SVC-')),
    );
  });

  it('accepts nftables, refuses unknown modes and formats that do not fit the mode', () => {
    const nft = cli('synth', SEED2, '--node', 'ipvs-worker', '--mode', 'nftables');
    assert.equal(nft.code, 0, nft.err.join('\n'));
    assert.ok(nft.out.includes('add table ip kube-proxy { comment "rules for kube-proxy" ; }'));
    assert.match(
      cli('synth', SEED2, '--mode', 'userspace').err.join('\n'),
      /--mode takes iptables, ipvs or nftables, not 'userspace'/,
    );
    assert.match(
      cli('synth', SEED3, '--node', 'myk8s-worker', '--format', 'ipset').err.join('\n'),
      /--format ipset is for --mode ipvs/,
    );
    assert.match(
      cli('synth', SEED3, '--node', 'myk8s-worker', '--format', 'xml').err.join('\n'),
      /--format takes save, restore, ipvsadm, ipvsadm-save, ipset, script, list, not 'xml'/,
    );
  });
});

describe('packetlens trace --manifests in IPVS mode', () => {
  it("follows the manifests' mode and explains the scheduler", () => {
    const r = cli('trace', '--manifests', SEED2, '--packet', 'tcp 10.244.1.2 -> 10.96.0.11:80');
    assert.equal(r.code, 0, r.err.join('\n'));
    assert.ok(r.out.some(l => /^ {2}kube-proxy IPVS mode on ipvs-worker \(scheduler rr\)/.test(l)));
    assert.equal(r.out.filter(l => /^[├└]─ +50%/.test(l)).length, 2);
    assert.ok(r.out.some(l => /note: IPVS TCP 10\.96\.0\.11:80 \(LOCAL_IN, priority 99\): rr \(ip_vs_rr\.c\)/.test(l)));
  });

  it('--json carries the mode and the pods', () => {
    const r = cli('trace', '--manifests', SEED2, '--packet', 'tcp 172.18.0.100 -> 172.18.0.4:30080', '--json');
    assert.equal(r.code, 0, r.err.join('\n'));
    const j = JSON.parse(r.out[0]!);
    assert.equal(j.mode, 'ipvs');
    assert.equal(j.node, 'ipvs-worker2');
    assert.deepEqual(
      j.outcomes.map((o: Record<string, unknown>) => [o.probabilityExact, o.dnat, o.snat, o.pod]),
      [
        ['1/2', '10.244.1.2:80', '172.18.0.4', 'default/app-x-1'],
        ['1/2', '10.244.2.2:80', '172.18.0.4', 'default/app-x-2'],
      ],
    );
  });
});
