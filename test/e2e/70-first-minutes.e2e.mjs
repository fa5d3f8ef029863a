// A newcomer's first minutes: the status bar's Node item and its quick pick (interfaces without JSON), the
// Getting Started walkthrough, the spinner while a 320k-rule dump is read, and the extension in VS Code's
// web-worker extension host and in Restricted Mode (second workbenches on the same workspace).
import { openLarge } from './60-responsive.e2e.mjs';
import { Workbench, clip, expect } from './workbench.mjs';

const DUMP = 'seed-003/node-myk8s-worker.rules';
const BIG = 'big/kube-320k.rules';

/** The status bar item whose text matches `re`. */
const statusItem = (page, re) => page.locator('.statusbar-item', { hasText: re }).first();
const rows = page => page.locator('.quick-input-list .monaco-list-row');

/** Opens the Node item's quick pick by clicking the item; returns the rows' texts. */
async function openNodePick(wb) {
  await statusItem(wb.page, /Node\s/).click();
  await wb.quickInput.waitFor({ state: 'visible', timeout: 10_000 });
  await rows(wb.page).filter({ hasText: 'Type one' }).first().waitFor({ timeout: 15_000 });
  return rows(wb.page).allInnerTexts();
}

/** Picks the quick pick row holding `text`. */
async function pickRow(wb, text) {
  const row = rows(wb.page).filter({ hasText: text }).first();
  try {
    await row.waitFor({ state: 'visible', timeout: 10_000 });
  } catch {
    const seen = await rows(wb.page).allInnerTexts();
    throw new Error(`no quick pick row "${text}" (rows: ${clip(seen.join(' | '), 300)})`);
  }
  await row.click();
}

/** Opens a second workbench in a new page of the runner's browser and the dump in it. */
async function secondWorkbench(wb, ctx, server) {
  const page = await ctx.context.newPage();
  ctx.cleanups.add(() => page.close().catch(() => {}));
  await page.goto(server.folderUrl);
  await page.locator('.explorer-folders-view .monaco-list-row', { hasText: 'seed-003' }).waitFor({ timeout: 90_000 });
  const other = new Workbench(page, { shotsDir: wb.shotsDir, docsShotsDir: null });
  await other.openFile(DUMP);
  return other;
}

/** Traces the headline packet with the keybinding and waits for the CodeLens of step 1. */
async function traceHeadline(w) {
  await w.focusEditor(DUMP);
  await w.page.keyboard.press('Control+Shift+Alt+T');
  await w.quickInput.waitFor({ state: 'visible', timeout: 20_000 });
  await w.quickInput.fill('tcp 172.18.0.100 -> 172.18.255.200:80');
  await w.page.keyboard.press('Enter');
  const lens = w.page.locator('.codelens-decoration', { hasText: /step 1\b/ }).first();
  await lens.waitFor({ timeout: 60_000 });
  // After the trace the editor shows step 1, and the Node item still says which node the trace used.
  await statusItem(w.page, /Node 172\.18\.0\.4 · eth0/)
    .waitFor({ timeout: 10_000 })
    .catch(async () => {
      const items = await w.page.locator('.statusbar-item').allInnerTexts();
      throw new Error(`after the trace the Node item is gone (status bar: ${clip(items.join(' | '), 400)})`);
    });
}

export const checks = [
  {
    name: 'node status: the Node item shows the dump’s node; its quick pick suggests addresses and edits interfaces without JSON',
    timeoutMs: 150_000,
    async run(wb) {
      await wb.closeAllEditors();
      await wb.openFile(DUMP);
      // The workspace's settings give 172.18.0.4 (the runner writes .vscode/settings.json).
      const item = statusItem(wb.page, /Node 172\.18\.0\.4 · eth0/);
      await item.waitFor({ timeout: 30_000 });
      await wb.shot('node-status', { docs: true });
      const texts = await openNodePick(wb);
      const all = texts.join(' | ');
      for (const want of ['172.18.0.4', 'nodes.yaml', 'Type one', 'Interfaces', 'Routes', 'Open Settings'])
        expect(all.includes(want), `the Node quick pick has no "${want}" (rows: ${clip(all, 400)})`);
      await wb.shot('node-quick-pick', { docs: true });

      // Interfaces… → Add an interface… → "docker0 172.17.0.1/16" → Done → this file only.
      await pickRow(wb, 'Interfaces');
      await pickRow(wb, 'Add an interface');
      await wb.quickInput.waitFor({ state: 'visible', timeout: 10_000 });
      await wb.quickInput.fill('docker0 172.17.0.1');
      const error = wb.page.locator('.quick-input-message', { hasText: /not an address\/prefix/ });
      await error.waitFor({ timeout: 10_000 }).catch(() => {
        throw new Error('typing an interface address without a prefix shows no message saying what is wrong');
      });
      await wb.quickInput.fill('docker0 172.17.0.1/16');
      await wb.page.keyboard.press('Enter');
      await rows(wb.page).filter({ hasText: 'docker0 172.17.0.1/16' }).first().waitFor({ timeout: 10_000 });
      await pickRow(wb, 'Done');
      await pickRow(wb, 'this file only');
      await wb.quickInput.waitFor({ state: 'hidden', timeout: 10_000 });

      const again = (await openNodePick(wb)).join(' | ');
      expect(/Interfaces…\s*docker0/.test(again), `the chosen interface is not shown: ${clip(again, 300)}`);
      expect(/Forget the choice for this file/.test(again), `no way to forget the choice: ${clip(again, 300)}`);
      await pickRow(wb, 'Forget the choice');
      await wb.settle();
    },
  },
  {
    name: 'walkthrough: Getting Started with Packet Lens shows its four steps and opens the example dump',
    timeoutMs: 90_000,
    async run(wb) {
      await wb.closeAllEditors();
      await wb.runCommand('Welcome: Open Walkthrough...');
      await pickRow(wb, 'Packet Lens');
      const page = wb.page;
      const container = page.locator('.gettingStartedContainer');
      await container.waitFor({ timeout: 20_000 });
      for (const step of ['Open an example dump', 'Set the node', 'Trace a packet', 'Compare two dumps'])
        await container
          .locator('.getting-started-step', { hasText: step })
          .first()
          .waitFor({ timeout: 15_000 })
          .catch(() => {
            throw new Error(`the walkthrough has no step "${step}"`);
          });
      // The step's media (a Markdown page in a webview) before the picture.
      await wb.webviewFrame('h1', { timeout: 20_000 }).catch(() => {
        throw new Error("the walkthrough step's media page did not load");
      });
      await page.waitForTimeout(500);
      await wb.shot('walkthrough', { docs: true });
      await container.locator('.getting-started-step', { hasText: 'Open an example dump' }).first().click();
      await container.getByRole('button', { name: 'Open the Example Dump' }).click();
      await page
        .locator('.tabs-container .tab', { hasText: 'node-myk8s-worker.rules' })
        .first()
        .waitFor({ timeout: 20_000 });
    },
  },
  {
    name: 'progress: reading a 320k-rule dump shows a spinner saying what is read, then the rule count',
    timeoutMs: 240_000,
    async run(wb) {
      await wb.closeAllEditors();
      // VS Code's large-file gate ("Open Anyway", above ~10 MB in VS Code for the Web and code-server) first.
      await openLarge(wb, BIG);
      const spinner = statusItem(wb.page, /Packet Lens: reading kube-320k\.rules \([\d,]+ lines\)/);
      await spinner.waitFor({ timeout: 60_000 }).catch(() => {
        throw new Error('no status bar item says the 320k-rule dump is being read');
      });
      await wb.shot('progress-large-dump', { docs: true });
      await statusItem(wb.page, /320,0\d\d rules/).waitFor({ timeout: 180_000 });
      expect(!(await spinner.isVisible()), 'the spinner stays after the dump was read');
      await wb.closeAllEditors();
    },
  },
  {
    name: 'web-worker extension host: the extension runs in the browser’s worker and traces',
    timeoutMs: 240_000,
    async run(wb, ctx) {
      const server = await ctx.startServer({
        name: 'web-worker',
        settings: { 'extensions.webWorker': true, 'remote.extensionKind': { 'packetlens.packetlens': ['web'] } },
      });
      try {
        const w = await secondWorkbench(wb, ctx, server);
        await statusItem(w.page, /Node 172\.18\.0\.4 · eth0/).waitFor({ timeout: 60_000 });
        const inWorker = await w.until(
          async () => w.page.frames().some(f => /webWorkerExtensionHostIframe/.test(f.url())),
          { timeout: 20_000 },
        );
        expect(inWorker, 'no web-worker extension host frame: the extension did not run in the browser');
        await traceHeadline(w);
        await w.shot('web-worker-trace');
        await w.page.close();
      } finally {
        await server.stop();
      }
    },
  },
  {
    name: 'Restricted Mode: an untrusted folder still gets the Node item, hovers’ data and traces',
    timeoutMs: 240_000,
    async run(wb, ctx) {
      const server = await ctx.startServer({
        name: 'restricted',
        restricted: true,
        settings: {
          'security.workspace.trust.enabled': true,
          'security.workspace.trust.startupPrompt': 'never',
          'security.workspace.trust.emptyWindow': false,
        },
      });
      try {
        const w = await secondWorkbench(wb, ctx, server);
        await statusItem(w.page, /Restricted Mode/)
          .waitFor({ timeout: 30_000 })
          .catch(() => {
            throw new Error('the second workbench is not in Restricted Mode');
          });
        await statusItem(w.page, /Node 172\.18\.0\.4 · eth0/).waitFor({ timeout: 60_000 });
        await traceHeadline(w);
        await w.shot('restricted-mode-trace');
        await w.page.close();
      } finally {
        await server.stop();
      }
    },
  },
];
