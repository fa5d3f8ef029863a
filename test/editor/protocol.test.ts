import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EMPTY_FIELDS } from '../../src/editor/packet-fields.ts';
import { isPacketFields, isPanelState, isWebviewToExtension } from '../../src/shared/protocol.ts';

describe('webview message protocol', () => {
  it('accepts the messages the webview sends', () => {
    assert.ok(isWebviewToExtension({ type: 'ready' }));
    assert.ok(isWebviewToExtension({ type: 'reveal', line: 12 }));
    assert.ok(isWebviewToExtension({ type: 'retrace', fields: { ...EMPTY_FIELDS, dst: '10.0.0.1', dport: '80', from: 'local' } }));
    assert.ok(isWebviewToExtension({ type: 'openSettings' }));
  });

  it('rejects anything else', () => {
    for (const bad of [null, 'ready', { type: 'reveal', line: -1 }, { type: 'reveal', line: 1.5 }, { type: 'reveal', line: '3' }, { type: 'retrace', fields: { ...EMPTY_FIELDS, from: 'elsewhere' } }, { type: 'retrace', fields: { ...EMPTY_FIELDS, dst: 'x'.repeat(300) } }, { type: 'retrace' }, { type: 'runCommand', command: 'rm' }]) {
      assert.equal(isWebviewToExtension(bad), false, JSON.stringify(bad)?.slice(0, 80));
    }
    assert.equal(isPacketFields({ ...EMPTY_FIELDS, sport: 80 }), false);
  });

  it('checks the panel state restored after a reload', () => {
    assert.ok(isPanelState({ uri: 'file:///a.rules', packet: 'tcp 1.2.3.4 -> 5.6.7.8:80', selectedOutcome: null, collapsed: ['n3'] }));
    assert.equal(isPanelState({ uri: 'file:///a.rules', packet: 'x', selectedOutcome: 'first', collapsed: [] }), false);
    assert.equal(isPanelState({ packet: 'x', selectedOutcome: null, collapsed: [] }), false);
  });
});
