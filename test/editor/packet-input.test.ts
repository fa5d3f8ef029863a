/**
 * The Trace Packet input (src/vscode/packet-input.ts, against a fake VS Code): Enter on the typed row
 * traces the text in the box now, even when the workbench still shows the typed row of the text before
 * (commit 8caa99a: the clean-clone e2e traced the packet the box held before, Enter having arrived right
 * after typing, before the workbench drew the new rows).
 */
import './fake-vscode/register.ts';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type PacketSource, askPacket } from '../../src/vscode/packet-input.ts';
import * as vscode from './fake-vscode/vscode.ts';

const source: PacketSource = {
  family: 4,
  heading: 'found in the dump',
  delayMs: 0,
  suggest: () => [],
  describe: s => s.label,
};

interface Row {
  readonly label: string;
  readonly packet: string | null;
}

describe('Trace Packet input', () => {
  it('Enter on the typed row traces the text in the box, not the row the workbench still shows', async () => {
    const before = 'tcp 203.0.113.10 -> 10.96.0.10:80';
    const now = 'tcp 203.0.113.10 -> 10.96.0.10:443';
    const answer = askPacket(source, 'Trace a packet', before, []);
    const qp = vscode.quickPicks.at(-1) as vscode.FakeQuickPick<Row>;
    assert.ok(qp.shown);
    // The workbench shows the rows for the initial text, the typed row first and active.
    const stale = qp.items[0]!;
    assert.equal(stale.packet, before);
    qp.activeItems = [stale];
    // The user types the new port and presses Enter before the workbench has drawn the new typed row.
    qp.type(now);
    assert.equal(qp.items[0]!.packet, now, 'the extension made the new typed row');
    qp.accept();
    assert.equal(await answer, now);
    assert.ok(qp.disposed);
  });

  it('Enter on a recent packet traces that packet', async () => {
    const answer = askPacket(source, 'Trace a packet', 'tcp 203.0.113.10 -> 10.96.0.10:80', [
      'udp 203.0.113.10 -> 10.96.0.10:53',
    ]);
    const qp = vscode.quickPicks.at(-1) as vscode.FakeQuickPick<Row>;
    const recent = qp.items.find(i => i.label === 'udp 203.0.113.10 -> 10.96.0.10:53');
    assert.ok(recent, qp.items.map(i => i.label).join(' | '));
    qp.activeItems = [recent];
    qp.accept();
    assert.equal(await answer, 'udp 203.0.113.10 -> 10.96.0.10:53');
  });
});
