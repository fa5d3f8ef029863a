import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EMPTY_FIELDS } from '../../src/editor/packet-fields.ts';
import { isDiffPanelState, isPacketFields, isPanelState, isWebviewToExtension } from '../../src/shared/protocol.ts';

describe('webview message protocol', () => {
  it('accepts the messages the webview sends', () => {
    assert.ok(isWebviewToExtension({ type: 'ready' }));
    assert.ok(isWebviewToExtension({ type: 'reveal', line: 12 }));
    assert.ok(
      isWebviewToExtension({
        type: 'retrace',
        fields: { ...EMPTY_FIELDS, dst: '10.0.0.1', dport: '80', from: 'local' },
      }),
    );
    assert.ok(isWebviewToExtension({ type: 'openSettings' }));
    assert.ok(isWebviewToExtension({ type: 'traceClass', side: 'old', change: 0 }));
    assert.ok(isWebviewToExtension({ type: 'traceClass', side: 'new', change: 17 }));
    assert.ok(isWebviewToExtension({ type: 'revealRule', side: 'new', line: 111 }));
    assert.ok(isWebviewToExtension({ type: 'drawn', packet: 'tcp 203.0.113.10 -> 10.96.39.15:80' }));
  });

  it('rejects anything else', () => {
    for (const bad of [
      null,
      'ready',
      { type: 'reveal', line: -1 },
      { type: 'reveal', line: 1.5 },
      { type: 'reveal', line: '3' },
      { type: 'retrace', fields: { ...EMPTY_FIELDS, from: 'elsewhere' } },
      { type: 'retrace', fields: { ...EMPTY_FIELDS, dst: 'x'.repeat(300) } },
      { type: 'retrace' },
      { type: 'runCommand', command: 'rm' },
      { type: 'traceClass', side: 'both', change: 1 },
      { type: 'traceClass', side: 'old', change: -1 },
      { type: 'traceClass', side: 'old', change: 0.5 },
      { type: 'traceClass', side: 'old', packet: 'tcp 1.2.3.4 -> 5.6.7.8:80' },
      { type: 'revealRule', side: 'new', line: '3' },
      { type: 'revealRule', line: 3 },
      { type: 'drawn' },
      { type: 'drawn', packet: 'x'.repeat(5000) },
    ]) {
      assert.equal(isWebviewToExtension(bad), false, JSON.stringify(bad)?.slice(0, 80));
    }
    assert.equal(isPacketFields({ ...EMPTY_FIELDS, sport: 80 }), false);
  });

  it('checks the panel state restored after a reload', () => {
    assert.ok(
      isPanelState({
        uri: 'file:///a.rules',
        packet: 'tcp 1.2.3.4 -> 5.6.7.8:80',
        selectedOutcome: null,
        collapsed: ['n3'],
      }),
    );
    assert.equal(isPanelState({ uri: 'file:///a.rules', packet: 'x', selectedOutcome: 'first', collapsed: [] }), false);
    assert.equal(isPanelState({ packet: 'x', selectedOutcome: null, collapsed: [] }), false);
    assert.ok(
      isPanelState({
        uri: 'packetlens-dump:/kube-proxy/seed-003/myk8s-worker.rules?root=file%3A%2F%2F%2Fws',
        packet: 'x',
        selectedOutcome: null,
        collapsed: [],
        origin: 'manifests',
      }),
    );
    assert.equal(
      isPanelState({ uri: 'file:///a.rules', packet: 'x', selectedOutcome: null, collapsed: [], origin: 'elsewhere' }),
      false,
    );
    assert.ok(isDiffPanelState({ kind: 'diff', oldUri: 'git:/a.rules', newUri: 'file:///a.rules' }));
    assert.equal(isDiffPanelState({ kind: 'diff', oldUri: 'git:/a.rules' }), false);
    assert.equal(
      isDiffPanelState({ uri: 'file:///a.rules', packet: 'x', selectedOutcome: null, collapsed: [] }),
      false,
    );
  });
});
