/**
 * The panels' listener bookkeeping (src/vscode/panel-host.ts) against a fake VS Code: a closed panel's
 * listeners are released, so re-opening the flow diagram does not leave two listeners behind each time.
 */
import './fake-vscode/register.ts';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import * as vscode from './fake-vscode/vscode.ts';
import { DiagramPanel } from '../../src/vscode/diagram-panel.ts';
import { DiffPanel } from '../../src/vscode/diff-panel.ts';

type Fake = InstanceType<typeof vscode.FakeWebviewPanel>;
const live = (p: Fake) => p.disposed.listeners.size + p.webview.received.listeners.size;
const handlers = { reveal() {}, retrace() {}, restore() {}, openSettings() {} };
const model = { title: 't' } as never;

describe('PanelHost', () => {
  it("releases a closed flow-diagram panel's listeners, however often it is re-opened", () => {
    const host = new DiagramPanel(vscode.Uri.file('/ext') as never, handlers);
    const from = vscode.created.length;
    for (let i = 0; i < 5; i++) {
      host.show(model, vscode.Uri.file('/a.rules') as never, false, 'dump');
      const panel = vscode.created[vscode.created.length - 1]!;
      assert.equal(live(panel), 2, 'an open panel listens for its closing and its messages');
      panel.dispose();
      assert.equal(live(panel), 0, `re-open ${i}: the closed panel still has listeners`);
    }
    assert.equal(vscode.created.length - from, 5);
    host.dispose();
  });

  it('releases the listeners of a panel replaced by a restored one, and all of them on dispose', () => {
    const host = new DiffPanel(vscode.Uri.file('/ext') as never, {
      trace() {},
      reveal() {},
      restore() {},
      copyMarkdown() {},
    });
    host.busy('comparing');
    const first = vscode.created[vscode.created.length - 1]!;
    const restored = vscode.window.createWebviewPanel('packetlens.diff', 'x');
    void host.deserializeWebviewPanel(restored as never, null);
    assert.equal(live(first), 0);
    assert.equal(live(restored), 2);
    host.dispose();
    assert.equal(live(restored), 0);
  });

  it('still routes messages of the open panel after re-opening', () => {
    const got: number[] = [];
    const host = new DiagramPanel(
      vscode.Uri.file('/ext') as never,
      { ...handlers, reveal: (_u: unknown, line: number) => got.push(line) } as never,
    );
    host.show(model, vscode.Uri.file('/a.rules') as never, false, 'dump');
    vscode.created[vscode.created.length - 1]!.dispose();
    host.show(model, vscode.Uri.file('/a.rules') as never, false, 'dump');
    vscode.created[vscode.created.length - 1]!.webview.received.fire({ type: 'reveal', line: 7 });
    assert.deepEqual(got, [7]);
    host.dispose();
  });

  it('a comparison from a diff editor opens in one new group below it (never beside, halving the diff)', async () => {
    const host = new DiffPanel(vscode.Uri.file('/ext') as never, {
      trace() {},
      reveal() {},
      restore() {},
      copyMarkdown() {},
    });
    const [from, ran] = [vscode.created.length, vscode.executed.length];
    const state = { kind: 'diff', oldUri: 'file:///a.rules', newUri: 'file:///b.rules' } as const;
    host.busy('comparing', true);
    host.show({ oldLabel: 'a.rules', newLabel: 'b.rules' } as never, state, true);
    await new Promise(r => setTimeout(r, 0));
    assert.deepEqual(vscode.executed.slice(ran), ['workbench.action.newGroupBelow']);
    assert.equal(vscode.created.length - from, 1, 'busy and show share the one panel');
    const panel = vscode.created[vscode.created.length - 1]!;
    assert.equal(panel.column, vscode.ViewColumn.Active, 'in the new group, not beside');
    assert.equal(panel.title, 'Packet Behaviour: a.rules → b.rules');
    host.dispose();
  });

  it('routes "Copy as Markdown" from the diff panel to its handler', () => {
    let copied = 0;
    const host = new DiffPanel(vscode.Uri.file('/ext') as never, {
      trace() {},
      reveal() {},
      restore() {},
      copyMarkdown: () => copied++,
    });
    host.busy('comparing');
    vscode.created[vscode.created.length - 1]!.webview.received.fire({ type: 'copyMarkdown' });
    assert.equal(copied, 1);
    host.dispose();
  });
});
