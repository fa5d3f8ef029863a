// The README's pictures of issue 17, each in the default dark and light themes: the flow graph of seed
// 003's LoadBalancer trace (172.18.0.100 → svc1's MetalLB address, 50 % to each endpoint), of a NodePort
// Service with 12 endpoints (test/fixtures/flow-graph/twelve-endpoints.rules: one load-balance node with 12
// edges at 8.33 %), of a path through 40 chains, and the Packet Behaviour report of the seed's "remove one
// endpoint" change (media/examples: svc3 loses 10.10.4.12:80) opened from its diff editor.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CheckFailure, clip, expect, spaced } from './workbench.mjs';
import { DUMP } from './20-dump.e2e.mjs';
import { PACKET, tracePacket } from './30-trace.e2e.mjs';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** VS Code's default dark and light themes. */
const THEMES = [
  ['dark', 'Default Dark Modern'],
  ['light', 'Default Light Modern'],
];

/** Puts a file of the repository into the workspace (under pictures/) and returns its workspace path. */
function place(wb, from, name, text = null) {
  const rel = `pictures/${name}`;
  fs.mkdirSync(path.join(wb.workspace, 'pictures'), { recursive: true });
  fs.writeFileSync(path.join(wb.workspace, rel), text ?? fs.readFileSync(path.join(REPO, from)));
  return rel;
}

/** A filter INPUT that walks a packet through 40 chains, each with one rule it misses and a jump on. */
function fortyChains() {
  const names = Array.from({ length: 40 }, (_, i) => `HOP-${String(i + 1).padStart(2, '0')}`);
  const lines = ['*filter', ':INPUT ACCEPT [0:0]', ':FORWARD ACCEPT [0:0]', ':OUTPUT ACCEPT [0:0]'];
  for (const n of names) lines.push(`:${n} - [0:0]`);
  lines.push(`-A INPUT -p tcp -m tcp --dport 8080 -j ${names[0]}`);
  names.forEach((n, i) => {
    lines.push(`-A ${n} -s 10.99.${i}.0/24 -j DROP`);
    lines.push(i + 1 < names.length ? `-A ${n} -j ${names[i + 1]}` : `-A ${n} -p tcp -m tcp --dport 8080 -j ACCEPT`);
  });
  lines.push('COMMIT', '');
  return lines.join('\n');
}

/**
 * Switches the colour theme through the workspace settings file, which VS Code applies as it changes (the
 * Color Theme picker would need typing into a quick pick that replaces the palette).
 */
async function setTheme(wb, theme) {
  const file = path.join(wb.workspace, '.vscode', 'settings.json');
  const settings = JSON.parse(fs.readFileSync(file, 'utf8'));
  if (theme) settings['workbench.colorTheme'] = theme;
  else delete settings['workbench.colorTheme'];
  fs.writeFileSync(file, `${JSON.stringify(settings, null, 2)}\n`);
  await wb.page.waitForTimeout(2500);
}

/** Traces `packet` through the open dump and leaves the flow graph alone on the screen. */
async function graphAlone(wb, file, packet, expected) {
  await tracePacket(wb, packet);
  await wb.page.keyboard.press('Enter');
  const tab = wb.page.locator('.tabs-container .tab', { hasText: 'Packet Flow' }).first();
  await tab.waitFor({ timeout: 30_000 }).catch(async () => {
    const toasts = await wb.page.locator('.notifications-toasts').allInnerTexts();
    throw new CheckFailure(
      `no "Packet Flow" tab after tracing ${packet} (${clip(toasts.join(' | ')) || 'no notification'})`,
    );
  });
  const frame = await wb.webviewFrame('#flow', { timeout: 30_000 });
  const text = await wb.until(
    async () => {
      const t = await frame.locator('body').innerText();
      return expected.test(t) ? t : null;
    },
    { timeout: 20_000 },
  );
  expect(text, `the flow graph of ${packet} does not show ${expected}`);
  // The graph gets the whole window: the dump's editor (and so its group) closes.
  const dumpTab = wb.page
    .locator('.tabs-container .tab', {
      hasText: path.basename(file),
      hasNotText: 'Packet Flow',
    })
    .first();
  await dumpTab.click({ button: 'middle' });
  await wb.page.waitForTimeout(1500);
  return { frame, text };
}

/** Screenshots in each default theme: of `element` (in a webview) when given, else of the window. */
async function shots(wb, name, frame = null, { fit = true, height = 1000 } = {}) {
  const element = frame ? frame.locator('.graph-host').first() : null;
  // Graphs at their actual size need a wider window than the suite's 1440 × 900; the graph is then scaled
  // to the panel's width (close to 1:1), so its right end is in the picture too.
  const size = wb.page.viewportSize();
  if (element) {
    await wb.page.setViewportSize({ width: 1800, height });
    await wb.page.waitForTimeout(800);
    // A narrow, tall graph (the 40-chain path) stays at its actual size: fitting its width would enlarge it.
    const button = frame.locator('button', { hasText: 'Fit to width' });
    if (fit && (await button.count())) await button.first().click();
    await wb.page.waitForTimeout(800);
  }
  for (const [label, title] of THEMES) {
    await setTheme(wb, title);
    // The mouse off every tab and row, and time for their tooltips to go.
    await wb.page.mouse.move(2, 450);
    await wb.page.waitForTimeout(800);
    const file = `${name}-${label}`;
    if (!element) await wb.shot(file, { docs: true });
    else {
      const out = path.join(wb.shotsDir, `${file}.png`);
      await element.screenshot({ path: out });
      if (wb.docsShotsDir) fs.copyFileSync(out, path.join(wb.docsShotsDir, `${file}.png`));
    }
  }
  await setTheme(wb, null);
  if (element && size) await wb.page.setViewportSize(size);
}

export const checks = [
  {
    name: 'pictures: the flow graph of the seed LoadBalancer trace, dark and light',
    timeoutMs: 150_000,
    async run(wb) {
      await wb.closeAllEditors();
      if (await wb.page.locator('.part.sidebar').isVisible())
        await wb.runCommand('View: Toggle Primary Side Bar Visibility');
      // A copy of the seed dump under pictures/, opened like the other pictures' files: in the full suite,
      // Quick Open on the seed dump's own path (opened by many earlier checks) twice brought back the node
      // bundle's dump instead, never when run alone.
      const rel = place(wb, `examples/${DUMP}`, 'node-myk8s-worker.rules');
      await wb.page.waitForTimeout(1500);
      await wb.openFile(rel);
      const { frame, text } = await graphAlone(wb, rel, PACKET, /load balance · 2 ways/);
      expect(/50%\s+1\/2/.test(text), `no 50 % edges: ${clip(text, 400)}`);
      await shots(wb, 'graph-loadbalancer', frame);
    },
  },
  {
    name: 'pictures: the flow graph of a 12-endpoint Service, dark and light',
    timeoutMs: 150_000,
    async run(wb) {
      await wb.closeAllEditors();
      const rel = place(wb, 'test/fixtures/flow-graph/twelve-endpoints.rules', 'twelve-endpoints.rules');
      await wb.page.waitForTimeout(1500);
      await wb.openFile(rel);
      const { frame, text } = await graphAlone(wb, rel, 'tcp 203.0.113.10 -> node:30080', /load balance · 12 ways/);
      const edges = (text.match(/8\.33%/g) ?? []).length;
      expect(edges >= 12, `the 12-endpoint graph shows ${edges} edges at 8.33 %, expected 12: ${clip(text, 400)}`);
      await shots(wb, 'graph-twelve-endpoints', frame);
    },
  },
  {
    name: 'pictures: the flow graph of a path through 40 chains, dark and light',
    timeoutMs: 150_000,
    async run(wb) {
      await wb.closeAllEditors();
      const rel = place(wb, null, 'forty-chains.rules', fortyChains());
      await wb.page.waitForTimeout(1500);
      await wb.openFile(rel);
      const { frame, text } = await graphAlone(wb, rel, 'tcp 203.0.113.10 -> 172.18.0.4:8080', /HOP-40/);
      expect(/accept|local/i.test(text), `the 40-chain path does not end accepted: ${clip(text, 400)}`);
      await shots(wb, 'graph-forty-chains', frame, {
        fit: false,
        height: 1500,
      });
    },
  },
  {
    name: 'pictures: the Packet Behaviour report of the seed "remove one endpoint" change, below its diff, dark and light',
    timeoutMs: 180_000,
    async run(wb) {
      await wb.closeAllEditors();
      if (await wb.page.locator('.part.sidebar').isVisible())
        await wb.runCommand('View: Toggle Primary Side Bar Visibility');
      place(wb, 'media/examples/node-myk8s-worker.rules', 'node-myk8s-worker.rules');
      const after = place(wb, 'media/examples/node-myk8s-worker-after.rules', 'node-myk8s-worker-after.rules');
      await wb.page.waitForTimeout(1500);
      await wb.openFile('pictures/node-myk8s-worker.rules');
      await wb.runCommand('File: Compare Active File With...');
      await wb.quickInput.waitFor({ state: 'visible', timeout: 15_000 });
      await wb.page.keyboard.type(after);
      await wb.page
        .locator('.quick-input-list .monaco-list-row.focused', {
          hasText: 'node-myk8s-worker-after.rules',
        })
        .first()
        .waitFor({ timeout: 20_000 });
      await wb.page.keyboard.press('Enter');
      await wb.page.locator('.monaco-diff-editor').first().waitFor({ timeout: 20_000 });
      await wb.runCommand('Packet Lens: Compare Packet Behaviour');
      const frame = await wb.webviewFrame('.diff-groups', { timeout: 120_000 });
      const first = (await frame.locator('.headline').first().innerText()).trim();
      expect(
        first === 'default/svc3:svc3-webport lost endpoint 10.10.4.12:80; its traffic now all goes to 10.10.1.11:80.',
        `the report does not start with the endpoint svc3 lost: "${clip(first, 200)}"`,
      );
      // The report is in a group of its own below the diff editor, which keeps the window's width.
      const diff = await wb.page.locator('.monaco-diff-editor').first().boundingBox();
      const view = await wb.page.locator('.tabs-container .tab', { hasText: 'Packet Behaviour' }).first().boundingBox();
      expect(diff && view, 'cannot measure the diff editor and the report');
      expect(
        view.y >= diff.y + diff.height - 4 && diff.width > 1000,
        `the report is not below a full-width diff (diff ${JSON.stringify(diff)}, report's tab ${JSON.stringify(view)})`,
      );
      // Copy as Markdown: the extension puts the CLI's --markdown report on the clipboard and says so.
      await frame.locator('button', { hasText: 'Copy as Markdown' }).click();
      await wb.page
        .locator('.statusbar', { hasText: 'on the clipboard as Markdown' })
        .waitFor({ timeout: 10_000 })
        .catch(() => {
          throw new CheckFailure('"Copy as Markdown" did not say it copied the report');
        });
      // The diff scrolled to svc3's changed KUBE-SVC rules, each with the sentence it causes above it.
      // A click on the diff's tab puts the keyboard in its modified side.
      await wb.page.locator('.tabs-container .tab', { hasText: '↔' }).first().click();
      await wb.goToLine(100);
      const lens = wb.page.locator('.monaco-diff-editor .codelens-decoration a:visible', {
        hasText: spaced('lost endpoint 10.10.4.12:80'),
      });
      await lens
        .first()
        .waitFor({ state: 'visible', timeout: 20_000 })
        .catch(() => {
          throw new CheckFailure(
            'no CodeLens in the diff editor says "lost endpoint 10.10.4.12:80" above the changed rules',
          );
        });
      await shots(wb, 'diff-report');
    },
  },
];
