import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readFromDiskNote, tokenizationNote } from '../../src/editor/large-file.ts';
import { DEFAULT_LIMITS, readSettings } from '../../src/editor/settings.ts';

describe('settings and large-file notes', () => {
  it('turns the packetlens.* settings into a node model, reporting what is wrong', () => {
    const values: Record<string, unknown> = {
      'node.addresses': ['172.18.0.4', 'not-an-ip', ' 2001:db8::4 '],
      'node.uplink': 'ens3',
      'node.interfaces': { docker0: '172.17.0.1/16', cni0: ['10.244.1.1/24', 'bad'] },
      'node.routes': { '10.244.2.0/24': 'flannel.1', nonsense: 'eth0' },
      'node.routeLocalnet': true,
      'kubeProxy.mode': 'ipvs',
      'limits.maxFileSizeMB': -3,
    };
    const s = readSettings(k => values[k]);
    assert.deepEqual(s.node.addresses, ['172.18.0.4', '2001:db8::4']);
    assert.equal(s.node.uplink, 'ens3');
    assert.equal(s.node.routeLocalnet, true);
    assert.deepEqual(s.node.interfaces, [
      { name: 'docker0', addresses: ['172.17.0.1/16'] },
      { name: 'cni0', addresses: ['10.244.1.1/24'] },
    ]);
    assert.deepEqual(s.node.routes, [{ dst: '10.244.2.0/24', iface: 'flannel.1' }]);
    assert.equal(s.kubeProxy.mode, 'ipvs');
    assert.equal(s.limits.maxFileSizeMB, DEFAULT_LIMITS.maxFileSizeMB);
    assert.equal(s.problems.length, 3);
    assert.deepEqual(readSettings(() => undefined).node, {
      addresses: [],
      interfaces: [],
      routes: [],
      uplink: 'eth0',
      routeLocalnet: false,
    });
  });

  it('manifests: the kube-proxy mode follows the manifests unless set, one cluster per folder unless set', () => {
    const defaults = readSettings(() => undefined);
    assert.equal(defaults.kubeProxy.mode, 'auto');
    assert.equal(defaults.manifestScope, 'folder');
    assert.equal(defaults.serviceLenses, true);
    assert.equal(defaults.limits.maxManifestFiles, 2000);
    const values: Record<string, unknown> = {
      'kubeProxy.mode': 'nftables',
      'manifests.scope': 'workspace',
      'codeLens.services': false,
      'limits.maxManifestFiles': 50,
    };
    const s = readSettings(k => values[k]);
    assert.deepEqual(
      [s.kubeProxy.mode, s.manifestScope, s.serviceLenses, s.limits.maxManifestFiles],
      ['nftables', 'workspace', false, 50],
    );
    assert.equal(
      readSettings(k => (k === 'kubeProxy.mode' ? 'userspace' : k === 'manifests.scope' ? 'repo' : undefined)).kubeProxy
        .mode,
      'auto',
    );
  });

  it('says when VS Code stops colouring a file, and what works when it was read from disk', () => {
    assert.equal(tokenizationNote({ bytes: 5e6, lines: 40_000 }), null);
    assert.match(
      tokenizationNote({ bytes: 47e6, lines: 430_000 })!,
      /^No syntax colouring, CodeLens or folding: .*20 MB or 300,000 lines \(this one: 44\.8 MB\).*largeFileOptimizations/,
    );
    assert.match(tokenizationNote({ bytes: 15e6, lines: 320_001 })!, /320,001 lines/);
    assert.match(
      readFromDiskNote('big.rules', 60 * 1048576),
      /60\.0 MB: VS Code does not hand files above 50 MB to extensions.*trace and the flow diagram work; hovers, CodeLens.* are not available/,
    );
    assert.match(
      readFromDiskNote('big.rules', 45 * 1048576),
      /\(45\.0 MB\) is not open as a document .*Open Anyway.*need it open in the editor/,
    );
  });
});
