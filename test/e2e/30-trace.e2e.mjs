// "Packet Lens: Trace Packet…" from the command palette with a typed packet: the dump's traversed lines
// are highlighted, the flow diagram opens with the DNAT targets and their probabilities, and a click on a
// rule in the diagram takes the editor to that rule.
//
// Expected values are seed 003's (examples/seed-003): an outside client's connection to svc1's MetalLB
// address 172.18.255.200:80 reaches 10.10.1.11:80 or 10.10.4.12:80 with probability 1/2 each (what
// `packetlens trace examples/seed-003/node-myk8s-worker.rules --packet "…" --node-ip 172.18.0.4` prints;
// the node address comes from the workspace's .vscode/settings.json, written by the runner). Line numbers
// are the dump's: 61 nat PREROUTING → KUBE-SERVICES, 93 KUBE-SERVICES rule 1 (evaluated, missed),
// 96 KUBE-SERVICES rule 4 (matched: svc1's load-balancer address), 97 rule 5 (never reached),
// 109/110 the two random branches of KUBE-SVC-DLGPAL4ZCYSJ7UPR, 92 the DNAT to 10.10.1.11:80.
import { CheckFailure, clip, expect, spaced } from './workbench.mjs';
import { DUMP } from './20-dump.e2e.mjs';

export const PACKET = 'tcp 172.18.0.100 -> 172.18.255.200:80';

/** Runs the command from the palette and types `packet`; returns the packet input's row for it. */
export async function tracePacket(wb, packet) {
  await wb.runCommand('Packet Lens: Trace Packet');
  await wb.quickInput.waitFor({ state: 'visible', timeout: 15_000 });
  await wb.quickInput.fill('');
  await wb.page.keyboard.type(packet);
  // The typed row (its play icon), not a recent-history row with the same text that is there from the
  // start: waiting for that one let Enter arrive before the extension had seen the typed text.
  const typed = wb.page
    .locator('.quick-input-list .monaco-list-row', { hasText: packet })
    .filter({ has: wb.page.locator('.codicon-play') })
    .first();
  await typed.waitFor({ state: 'visible', timeout: 15_000 });
  return typed;
}

async function accept(wb) {
  await wb.page.keyboard.press('Enter');
  try {
    await wb.page.locator('.tabs-container .tab', { hasText: 'Packet Flow' }).first().waitFor({ timeout: 30_000 });
  } catch {
    const toasts = await wb.page.locator('.notifications-toasts').allInnerTexts();
    throw new CheckFailure(
      `no "Packet Flow" tab opened after the trace (notifications: ${clip(toasts.join(' | ')) || 'none'})`,
    );
  }
  return wb.webviewFrame('#flow', { timeout: 30_000 });
}

const describe = c => (c ? `Ln ${c.line}, Col ${c.column}` : 'no text editor has the focus');

async function dumpLines(wb, editor, line) {
  await wb.goToLine(line);
  return wb.renderedLines(editor);
}

export const checks = [
  {
    name: 'trace: Trace Packet… from the palette highlights the traversed lines and draws DNAT targets with 50% each',
    timeoutMs: 120_000,
    async run(wb, ctx) {
      await wb.closeAllEditors();
      // Room for the dump and the diagram side by side (the screenshots go into the README).
      if (await wb.page.locator('.part.sidebar').isVisible())
        await wb.runCommand('View: Toggle Primary Side Bar Visibility');
      const editor = await wb.openFile(DUMP);
      // Parsed: the chain CodeLens are there.
      await editor
        .locator('.codelens-decoration a:visible', { hasText: /referenced\sby|hook\s/ })
        .first()
        .waitFor({ timeout: 30_000 });
      await tracePacket(wb, PACKET);
      await wb.shot('trace-packet-input', { docs: true });
      const frame = await accept(wb);

      // The diagram: two outcomes, one per endpoint, 50% each, with the DNAT target.
      const text =
        (await wb.until(
          async () => {
            const t = await frame.locator('body').innerText();
            return /DNAT 10\.10\.4\.12:80/.test(t) ? t : null;
          },
          { timeout: 20_000 },
        )) ?? (await frame.locator('body').innerText());
      for (const ep of ['10.10.1.11:80', '10.10.4.12:80']) {
        const outcome = new RegExp(
          `50%\\s*forwarded → ${ep.replace(/\./g, '\\.')}[^\\n]*\\(DNAT ${ep.replace(/\./g, '\\.')}\\)`,
        );
        expect(
          outcome.test(text),
          `the diagram has no outcome "50% forwarded → ${ep} … (DNAT ${ep})": ${clip(text, 600)}`,
        );
        expect(text.includes(`dst → ${ep}`), `the diagram's graph has no edge "dst → ${ep}"`);
      }
      expect(/\b2 outcomes\b/.test(text), `the diagram does not say "2 outcomes": ${clip(text, 300)}`);
      // The load-balancing split is one node with one edge per endpoint, each labelled "50%  1/2".
      const branchShares = (text.match(/50%\s+1\/2/g) ?? []).length;
      expect(branchShares >= 2, `the graph does not show the split as two edges at 50% (1/2): ${clip(text, 600)}`);
      expect(/load balance · 2 ways/.test(text), `the graph has no load-balance node: ${clip(text, 600)}`);
      ctx.diagram = true; // the next check clicks in it

      // The dump: matched rules, missed rules and untouched rules are drawn apart.
      const first = await dumpLines(wb, editor, 61);
      const second = await dumpLines(wb, editor, 96);
      const at = n => [...first, ...second].find(l => l.line === n);
      const deco = n => at(n)?.decorations.map(d => d.cls.match(/ced-\S+/)[0]) ?? null;
      for (const n of [61, 93, 96, 97, 109, 110]) expect(at(n), `line ${n} of ${DUMP} was not rendered after Ctrl+G`);
      const matched = deco(96);
      expect(
        matched.length === 1,
        `line 96 (the matching KUBE-SERVICES rule) has ${matched.length} trace highlights, expected 1`,
      );
      const bg = at(96).decorations[0].bg;
      expect(
        bg && bg !== 'rgba(0, 0, 0, 0)' && bg !== 'transparent',
        `line 96's highlight has no background colour (${bg})`,
      );
      for (const n of [61, 109, 110])
        expect(
          deco(n).includes(matched[0]),
          `line ${n} (traversed) is not highlighted like line 96 (has ${deco(n).join(', ') || 'nothing'})`,
        );
      expect(
        deco(93).length === 1 && deco(93)[0] !== matched[0],
        `line 93 (evaluated, missed) is not highlighted as missed (has ${deco(93).join(', ') || 'nothing'})`,
      );
      expect(deco(97).length === 0, `line 97 (never reached) is highlighted (${deco(97).join(', ')})`);
      const lens = editor.locator('.codelens-decoration a:visible', { hasText: spaced('✓ matched') }).first();
      await lens.waitFor({ state: 'visible', timeout: 10_000 }).catch(() => {
        throw new CheckFailure('no "✓ matched" CodeLens on the traced rules');
      });
      await wb.shot('trace-diagram', { docs: true });
    },
  },
  {
    name: 'trace: a click on a rule in the diagram moves the editor to that rule',
    needs: 'diagram',
    timeoutMs: 60_000,
    async run(wb) {
      const editor = wb.editorFor(DUMP);
      await wb.settle();
      await wb.focusEditor(DUMP);
      await wb.goToLine(1);
      const before = await wb.until(async () => ((await wb.cursor())?.line === 1 ? 1 : null), { timeout: 5000 });
      expect(
        before === 1,
        `the cursor did not go to line 1 before the click (status bar: ${describe(await wb.cursor())})`,
      );
      const frame = await wb.webviewFrame('#flow');
      // The DNAT of KUBE-SEP-… is drawn on its edge out of the load-balance node; its label reveals the rule.
      const node = frame.locator('svg.flow-graph text', { hasText: /dst → 10\.10\.1\.11:80/ }).first();
      await node.waitFor({ state: 'visible', timeout: 10_000 });
      await node.click();
      const pos = await wb.until(
        async () => {
          const c = await wb.cursor();
          return c?.line === 92 ? c : null;
        },
        { timeout: 10_000 },
      );
      expect(
        pos,
        `after a click on "dst → 10.10.1.11:80" in the graph the editor is not at line 92 (status bar: ${describe(await wb.cursor())})`,
      );
      const current = (await wb.renderedLines(editor)).find(l => l.current);
      expect(
        current?.line === 92 && current.text.includes('DNAT --to-destination 10.10.1.11:80'),
        `the editor's current line is ${current?.line} ("${clip(current?.text ?? '', 120)}"), not line 92's DNAT to 10.10.1.11:80`,
      );
      await wb.shot('diagram-reveal', { docs: true });
    },
  },
];
